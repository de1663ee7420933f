//! How far an op ran from its device's limit: the roofline bound of its arithmetic intensity,
//! the share of that bound it achieved, and which limit binds.
//!
//! ```
//! use burn_profiled_core::roofline::{Limit, Peaks};
//! use burn_profiled_core::work::Work;
//!
//! // A device of 10 TFLOP/s and 1 TB/s; an op of 1 GFLOP over 10 MB that took 2 ms.
//! let peaks = Peaks { flops_per_s: 10e12, bytes_per_s: 1e12 };
//! let work = Work { flops: Some(1_000_000_000), bytes: Some(10_000_000) };
//! let point = peaks.place(&work, 2e-3).unwrap();
//! assert_eq!(point.intensity, 100.0); // FLOPs per byte, beyond the ridge at 10
//! assert_eq!(point.limit, Limit::Compute);
//! assert_eq!(point.bound_flops_per_s, 10e12);
//! assert_eq!(point.achieved_flops_per_s, 0.5e12);
//! assert_eq!(point.share, 0.05); // 5% of what the device can do for this op
//! ```

use serde::{Deserialize, Serialize};

use crate::work::Work;

/// A device's peak arithmetic rate and memory bandwidth, measured or from its datasheet.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Peaks {
    /// Floating-point operations per second at the dtype the ops run in.
    pub flops_per_s: f64,
    /// Bytes per second between the device's memory and its compute units.
    pub bytes_per_s: f64,
}

/// Which roof an op's intensity puts it under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// Intensity beyond the ridge: the arithmetic rate bounds it.
    Compute,
    /// Intensity below the ridge: the bandwidth bounds it.
    Memory,
}

/// One op on the roofline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// FLOPs per byte moved.
    pub intensity: f64,
    /// FLOP/s achieved: the op's FLOPs over its time.
    pub achieved_flops_per_s: f64,
    /// Bytes/s achieved (a lower bound: the minimum traffic over the time).
    pub achieved_bytes_per_s: f64,
    /// The roofline's bound at this intensity: `min(peak FLOP/s, intensity × peak bytes/s)`.
    pub bound_flops_per_s: f64,
    /// `achieved_flops_per_s / bound_flops_per_s`.
    pub share: f64,
    /// The roof that binds.
    pub limit: Limit,
}

impl Peaks {
    /// The intensity where the two roofs meet: below it bandwidth binds, above it arithmetic.
    pub fn ridge(&self) -> f64 {
        self.flops_per_s / self.bytes_per_s
    }

    /// `work` done in `seconds` on the roofline; `None` where its FLOPs or bytes are unknown or
    /// zero, or the time is not positive (a view, an unknown op, a row with no time).
    pub fn place(&self, work: &Work, seconds: f64) -> Option<Point> {
        let (flops, bytes) = (work.flops? as f64, work.bytes? as f64);
        if flops == 0.0 || bytes == 0.0 || seconds <= 0.0 || !seconds.is_finite() {
            return None;
        }
        let intensity = flops / bytes;
        let memory_bound = intensity * self.bytes_per_s;
        let (bound_flops_per_s, limit) = if memory_bound < self.flops_per_s {
            (memory_bound, Limit::Memory)
        } else {
            (self.flops_per_s, Limit::Compute)
        };
        let achieved_flops_per_s = flops / seconds;
        Some(Point {
            intensity,
            achieved_flops_per_s,
            achieved_bytes_per_s: bytes / seconds,
            bound_flops_per_s,
            share: achieved_flops_per_s / bound_flops_per_s,
            limit,
        })
    }
}
