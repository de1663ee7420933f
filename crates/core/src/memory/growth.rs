//! Whether memory in use grew steadily over a run's measured steps: the leak detector.
//!
//! A series grows when both hold:
//! - its Theil-Sen slope (the median of the slopes between every two steps, which a few
//!   outlying steps do not move) is at least the series' noise floor per step: 1 KiB for a
//!   device's memory in use (its pools count exactly what the program's tensors hold), 64 KiB
//!   for the host's, counted or resident (caches of the libraries a run uses, such as wgpu's,
//!   grow by a few KiB a step for a long while; pages and allocator arenas come and go in
//!   steps of that order);
//! - memory in use rose from one step to the next in at least three quarters of the steps;
//! - it still grows in the second half of the steps (the Theil-Sen slope of that half is at
//!   least the floor too): caches that fill in a run's first steps (fusion plans, autotune
//!   results, allocator pools) stop, a leak does not.
//!
//! A steady run's memory in use repeats (device pools) or wanders within a few pages (RSS):
//! its slope stays near zero or its rises are rare. A tensor kept per step rises every step by
//! its size.

use serde::Serialize;

/// Steps needed before a verdict: fewer say nothing.
#[doc(hidden)]
pub const MIN_STEPS: usize = 5;
/// The noise floor per step of a device's memory in use.
#[doc(hidden)]
pub const COUNTED_FLOOR: f64 = 1024.0;
/// The noise floor per step of the host's memory, counted or resident.
#[doc(hidden)]
pub const HOST_FLOOR: f64 = 64.0 * 1024.0;
/// Points kept of a long series: the slope's cost is quadratic in them.
const MAX_POINTS: usize = 256;

/// The verdict on one memory's series over the measured steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Growth {
    /// The memory: a device, `host` (the tracking allocator's count) or `host RSS`.
    pub memory: String,
    /// Whether it grew steadily.
    pub growing: bool,
    /// The median growth per step (Theil-Sen slope), in bytes.
    pub bytes_per_step: f64,
    /// Steps where memory in use rose, of `steps - 1` step-to-step changes.
    pub rising_steps: usize,
    /// Steps in the series.
    pub steps: usize,
    /// Memory in use at the first and the last measured step.
    pub first_bytes: u64,
    /// See `first_bytes`.
    pub last_bytes: u64,
}

/// The verdict on `series` (memory in use at the end of each measured step) of `memory`,
/// with `floor` bytes per step of noise; `None` with fewer than [`MIN_STEPS`] steps.
#[doc(hidden)]
pub fn detect(memory: &str, series: &[u64], floor: f64) -> Option<Growth> {
    let (first, last) = (*series.first()?, *series.last()?);
    if series.len() < MIN_STEPS {
        return None;
    }
    let rising_steps = series.windows(2).filter(|w| w[1] > w[0]).count();
    let bytes_per_step = theil_sen(series);
    let second_half = &series[series.len() / 2..];
    let growing = bytes_per_step >= floor
        && rising_steps * 4 >= (series.len() - 1) * 3
        && theil_sen(second_half) >= floor;
    Some(Growth {
        memory: memory.to_owned(),
        growing,
        bytes_per_step,
        rising_steps,
        steps: series.len(),
        first_bytes: first,
        last_bytes: last,
    })
}

/// The median of the slopes between every two points (over at most [`MAX_POINTS`] evenly
/// spaced ones).
fn theil_sen(series: &[u64]) -> f64 {
    let stride = series.len().div_ceil(MAX_POINTS).max(1);
    let points: Vec<(f64, f64)> = series
        .iter()
        .enumerate()
        .step_by(stride)
        .map(|(x, y)| (x as f64, *y as f64))
        .collect();
    let mut slopes = Vec::with_capacity(points.len() * points.len() / 2);
    for (i, (x0, y0)) in points.iter().enumerate() {
        for (x1, y1) in &points[i + 1..] {
            slopes.push((y1 - y0) / (x1 - x0));
        }
    }
    slopes.sort_by(f64::total_cmp);
    match slopes.len() {
        0 => 0.0,
        n if n % 2 == 1 => slopes[n / 2],
        n => (slopes[n / 2 - 1] + slopes[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tensor_kept_per_step_grows_by_its_size() {
        let series: Vec<u64> = (0..20).map(|step| (100 << 20) + step * 4_000_000).collect();
        let growth = detect("Wgpu(0)", &series, COUNTED_FLOOR).unwrap();
        assert!(growth.growing);
        assert_eq!(growth.bytes_per_step, 4_000_000.0);
        assert_eq!(growth.rising_steps, 19);
    }

    #[test]
    fn a_steady_run_does_not_grow() {
        let steady = [100u64 << 20; 20];
        assert!(!detect("Wgpu(0)", &steady, COUNTED_FLOOR).unwrap().growing);
        // The resident size of a steady run: a few pages up and down, and one jump.
        let mut rss: Vec<u64> = (0..30)
            .map(|step| (500 << 20) + [0, 4096, 8192, 4096][step % 4])
            .collect();
        rss[10] += 8 << 20;
        let growth = detect("host RSS", &rss, HOST_FLOOR).unwrap();
        assert!(!growth.growing, "{growth:?}");
    }

    #[test]
    fn growth_in_a_few_steps_is_not_a_leak() {
        // Pools filling up in the first steps, then steady.
        let mut series = vec![10 << 20, 20 << 20, 30 << 20];
        series.extend([40u64 << 20; 17]);
        let growth = detect("Wgpu(0)", &series, COUNTED_FLOOR).unwrap();
        assert!(!growth.growing, "{growth:?}");
    }

    #[test]
    fn growth_that_stops_halfway_is_not_a_leak() {
        // Caches filling for ten steps, then steady but for a few pages, and one large
        // allocation at the end (a dump).
        let mut series: Vec<u64> = (0..10u64).map(|step| (20 << 20) + step * 100_000).collect();
        series.extend((0..10u64).map(|step| (21 << 20) + (step % 2) * 4096 + step));
        *series.last_mut().unwrap() += 1 << 20;
        let growth = detect("host", &series, HOST_FLOOR).unwrap();
        assert!(!growth.growing, "{growth:?}");
    }

    #[test]
    fn a_slow_leak_under_noise_is_found() {
        // 64 KiB per step, with a step down now and then.
        let series: Vec<u64> = (0..40u64)
            .map(|step| (1 << 30) + step * 65_536 - if step % 7 == 3 { 100_000 } else { 0 })
            .collect();
        let growth = detect("host", &series, COUNTED_FLOOR).unwrap();
        assert!(growth.growing, "{growth:?}");
        assert!((growth.bytes_per_step - 65_536.0).abs() < 1.0, "{growth:?}");
    }

    #[test]
    fn too_few_steps_say_nothing() {
        assert_eq!(detect("host", &[1, 2, 3, 4], COUNTED_FLOOR), None);
        assert_eq!(detect("host", &[], COUNTED_FLOOR), None);
    }
}
