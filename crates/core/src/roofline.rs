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

/// Peaks measured through the backend and device a run uses (`[roofline] calibrate`): the best
/// of a few runs of a matmul (arithmetic) and of an elementwise op over a large tensor
/// (bandwidth), each grown until one run takes long enough to time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// The peaks measured.
    pub peaks: Peaks,
    /// What measured the arithmetic rate: `matmul 1024x1024 f32, best of 3 runs: 21.4 ms`.
    pub arithmetic: String,
    /// What measured the bandwidth.
    pub bandwidth: String,
}

/// One workload of a calibration at a size: what it is and what it does.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// What it is, for the report: `matmul 1024x1024 f32`.
    pub what: String,
    /// The FLOPs (for the arithmetic rate) or bytes (for the bandwidth) one run does.
    pub amount: u64,
}

/// The matmuls' sides a calibration tries, up to 8192² (1.1 TFLOP: long enough on any GPU).
const MATMUL_SIDES: [usize; 5] = [512, 1024, 2048, 4096, 8192];
/// The elementwise op's element counts, 16 MiB to 1 GiB of f32.
const ELEMENTS: [usize; 4] = [1 << 22, 1 << 24, 1 << 26, 1 << 28];

/// Runs of one run of a calibration workload: at least this long each, or the largest size.
const LONG_ENOUGH: std::time::Duration = std::time::Duration::from_millis(20);
/// Timed runs at the chosen size; the best counts.
const RUNS: usize = 3;

impl Calibration {
    /// Measures both peaks. `arithmetic(step)` and `bandwidth(step)` prepare the workload of
    /// size step (0, 1, 2, ... growing) and return it with a function that runs it once to the
    /// end (synced); `None` past the largest size. The first run of each size is a warm-up.
    ///
    /// An error (a workload that fails, or none that ran) says what could not be measured.
    pub fn measure<Matmul, Copy>(
        arithmetic: impl FnMut(usize) -> Option<(Workload, Matmul)>,
        bandwidth: impl FnMut(usize) -> Option<(Workload, Copy)>,
    ) -> Result<Calibration, String>
    where
        Matmul: FnMut() -> Result<(), String>,
        Copy: FnMut() -> Result<(), String>,
    {
        let (flops_per_s, arithmetic) = best_rate(arithmetic, "FLOP/s")?;
        let (bytes_per_s, bandwidth) = best_rate(bandwidth, "B/s")?;
        Ok(Calibration {
            peaks: Peaks {
                flops_per_s,
                bytes_per_s,
            },
            arithmetic,
            bandwidth,
        })
    }

    /// [`through`](Self::through) an edition's tensors, from the ops it needs: `sync` waits
    /// for the device, `square(n)` makes a square tensor of ones of side `n` (with its dtype's
    /// name), `matmul` multiplies one by itself, `vector(len)` makes a tensor of `len` ones
    /// (with its dtype's name and element size), and `add_one` adds 1 to it.
    pub fn through_tensors<M, P, V>(
        sync: impl Fn() -> Result<(), String> + Copy,
        square: impl Fn(usize) -> (M, String),
        matmul: impl Fn(&M) -> P + Copy,
        vector: impl Fn(usize) -> (V, String, u64),
        add_one: impl Fn(V) -> V + Copy,
    ) -> Result<Calibration, String> {
        Calibration::through(
            |n| {
                let (a, dtype) = square(n);
                let run = move || {
                    let product = matmul(&a);
                    let synced = sync();
                    drop(product);
                    synced
                };
                (dtype, run)
            },
            |len| {
                let (x, dtype, elem_bytes) = vector(len);
                let mut held = Some(x);
                let run = move || {
                    let x = held
                        .take()
                        .ok_or_else(|| "the tensor was lost in an earlier run".to_owned())?;
                    let sum = add_one(x);
                    let synced = sync();
                    held = Some(sum);
                    synced
                };
                (dtype, elem_bytes, run)
            },
        )
    }

    /// Measures both peaks through an edition's tensors: `matmul(n)` prepares a square matmul
    /// of side `n` and returns its dtype's name with a function that runs it once, synced;
    /// `add_in_place(len)` prepares a tensor of `len` elements and returns its dtype's name, its
    /// element size and a function that adds a scalar to it in place (each run takes the last
    /// one's result, its only handle), synced. Sizes grow as [`measure`](Self::measure) says;
    /// a panic of the backend is an error that says so.
    pub fn through<Matmul, Add>(
        mut matmul: impl FnMut(usize) -> (String, Matmul),
        mut add_in_place: impl FnMut(usize) -> (String, u64, Add),
    ) -> Result<Calibration, String>
    where
        Matmul: FnMut() -> Result<(), String>,
        Add: FnMut() -> Result<(), String>,
    {
        let measured = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Calibration::measure(
                |step| {
                    let n = *MATMUL_SIDES.get(step)?;
                    let (dtype, run) = matmul(n);
                    let what = format!("matmul {n}x{n} {dtype}");
                    let amount = 2 * (n as u64).pow(3);
                    Some((Workload { what, amount }, run))
                },
                |step| {
                    let len = *ELEMENTS.get(step)? as u64;
                    let (dtype, elem_bytes, run) = add_in_place(len as usize);
                    let what = format!(
                        "add_scalar over {} MiB of {dtype}, read and written in place",
                        (len * elem_bytes) >> 20
                    );
                    let amount = 2 * len * elem_bytes;
                    Some((Workload { what, amount }, run))
                },
            )
        }));
        measured.unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            Err(format!("the backend panicked: {message}"))
        })
    }

    /// One line for the user: what was measured, and how.
    pub fn summary(&self) -> String {
        format!(
            "roofline peaks measured: {:.1} GFLOP/s ({}) and {:.1} GB/s ({})",
            self.peaks.flops_per_s / 1e9,
            self.arithmetic,
            self.peaks.bytes_per_s / 1e9,
            self.bandwidth
        )
    }
}

/// The best rate of `workload` at the first size whose run takes [`LONG_ENOUGH`], or the
/// largest, with what ran.
fn best_rate<Run: FnMut() -> Result<(), String>>(
    mut workload: impl FnMut(usize) -> Option<(Workload, Run)>,
    unit: &str,
) -> Result<(f64, String), String> {
    let mut chosen = None;
    for step in 0.. {
        let Some((what, mut run)) = workload(step) else {
            break;
        };
        run()?;
        let started = std::time::Instant::now();
        run()?;
        let took = started.elapsed();
        chosen = Some((what, run, took));
        if took >= LONG_ENOUGH {
            break;
        }
    }
    let Some((what, mut run, first)) = chosen else {
        return Err(format!("no workload to measure {unit} with"));
    };
    let mut best = first;
    for _ in 1..RUNS {
        let started = std::time::Instant::now();
        run()?;
        best = best.min(started.elapsed());
    }
    let seconds = best.as_secs_f64().max(1e-9);
    Ok((
        what.amount as f64 / seconds,
        format!(
            "{}, best of {RUNS} runs: {:.2} ms",
            what.what,
            seconds * 1e3
        ),
    ))
}
