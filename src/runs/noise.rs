//! How much two sides' step times differ, with the uncertainty of their runs and steps: the
//! ratio of the sides' levels (a side's level is the mean of its runs' median steps) and a 95%
//! interval for it (percentile bootstrap, 2,000 resamples from a fixed seed: the same runs
//! always give the same interval). A resample draws a side's runs with replacement, then each
//! drawn run's steps: with several runs a side the interval holds the spread between
//! processes as well as within them; with one it holds only the spread within that process.

/// Resamples of the bootstrap.
const RESAMPLES: usize = 2000;

/// The median of `values` (not empty).
pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n % 2 {
        1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// SplitMix64: a small generator, seeded, enough for resampling.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The level of `runs` in one resample: each of as many draws a run (the only one, with one)
/// and the median of its steps resampled; their mean.
fn resampled_level(runs: &[&[f64]], random: &mut SplitMix, scratch: &mut Vec<f64>) -> f64 {
    let mut sum = 0.0;
    for _ in 0..runs.len() {
        let run = match runs.len() {
            1 => runs[0],
            n => runs[random.below(n)],
        };
        scratch.clear();
        scratch.extend((0..run.len()).map(|_| run[random.below(run.len())]));
        sum += median(scratch);
    }
    sum / runs.len() as f64
}

/// `after`'s level over `before`'s, and the 95% interval of that ratio; `None` when a side
/// has no run with steps. Runs without steps are left out.
pub(crate) fn ratio_of_levels(before: &[&[f64]], after: &[&[f64]]) -> Option<(f64, f64, f64)> {
    let with_steps = |runs: &[&[f64]]| -> Vec<Vec<f64>> {
        runs.iter()
            .filter(|steps| !steps.is_empty())
            .map(|steps| steps.to_vec())
            .collect()
    };
    let (before, after) = (with_steps(before), with_steps(after));
    if before.is_empty() || after.is_empty() {
        return None;
    }
    let level = |runs: &[Vec<f64>]| {
        runs.iter()
            .map(|steps| median(&mut steps.clone()))
            .sum::<f64>()
            / runs.len() as f64
    };
    let ratio = level(&after) / level(&before);
    let before: Vec<&[f64]> = before.iter().map(Vec::as_slice).collect();
    let after: Vec<&[f64]> = after.iter().map(Vec::as_slice).collect();
    let mut random = SplitMix(0x5EED);
    let mut scratch = Vec::new();
    let mut ratios: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let a = resampled_level(&after, &mut random, &mut scratch);
            a / resampled_level(&before, &mut random, &mut scratch)
        })
        .collect();
    Some(interval_of(ratio, &mut ratios))
}

/// The ratio of `after`'s mean over `before`'s (one value a run, at least two a side) and its
/// 95% interval from resampling the runs; `None` with fewer runs or a zero mean before.
pub(crate) fn ratio_of_run_means(before: &[f64], after: &[f64]) -> Option<(f64, f64, f64)> {
    if before.len() < 2 || after.len() < 2 {
        return None;
    }
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len() as f64;
    if mean(before) <= 0.0 {
        return None;
    }
    let ratio = mean(after) / mean(before);
    let mut random = SplitMix(0x5EED);
    let mut resampled_mean = |values: &[f64]| {
        (0..values.len())
            .map(|_| values[random.below(values.len())])
            .sum::<f64>()
            / values.len() as f64
    };
    let mut ratios: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let a = resampled_mean(after);
            a / resampled_mean(before).max(f64::MIN_POSITIVE)
        })
        .collect();
    Some(interval_of(ratio, &mut ratios))
}

/// `ratio` with the 2.5th and 97.5th percentiles of `ratios`.
fn interval_of(ratio: f64, ratios: &mut [f64]) -> (f64, f64, f64) {
    ratios.sort_by(f64::total_cmp);
    let low = ratios[RESAMPLES * 25 / 1000];
    let high = ratios[RESAMPLES * 975 / 1000 - 1];
    (ratio, low, high)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_speedup_has_an_interval_around_it() {
        let before: Vec<f64> = (0..30).map(|i| 0.100 + 0.001 * (i % 5) as f64).collect();
        let after: Vec<f64> = before.iter().map(|t| t * 0.8).collect();
        let (ratio, low, high) = ratio_of_levels(&[&before], &[&after]).unwrap();
        assert!((ratio - 0.8).abs() < 1e-9, "{ratio}");
        assert!(low <= ratio && ratio <= high && high < 0.85, "{low} {high}");
    }

    #[test]
    fn the_same_steps_give_an_interval_around_one_and_the_same_each_time() {
        let steps: Vec<f64> = (0..25)
            .map(|i| 0.05 + 0.002 * ((i * 7) % 11) as f64)
            .collect();
        let first = ratio_of_levels(&[&steps], &[&steps]).unwrap();
        assert_eq!(first.0, 1.0);
        assert!(first.1 < 1.0 && first.2 > 1.0, "{first:?}");
        assert_eq!(ratio_of_levels(&[&steps], &[&steps]), Some(first));
        assert_eq!(ratio_of_levels(&[&[]], &[&steps]), None);
    }

    /// Steps tight within each run, the runs 15-20% apart: between-process drift, which
    /// resampling the runs puts into the interval.
    #[test]
    fn runs_shifted_apart_give_an_interval_that_holds_their_spread() {
        let run = |level: f64| -> Vec<f64> {
            (0..20)
                .map(|i| level * (1.0 + 0.001 * (i % 3) as f64))
                .collect()
        };
        let (b1, b2, b3) = (run(1.0), run(1.18), run(1.15));
        let (a1, a2, a3) = (run(1.17), run(1.0), run(1.2));
        let (ratio, low, high) = ratio_of_levels(&[&b1, &b2, &b3], &[&a1, &a2, &a3]).unwrap();
        assert!(
            low < 1.0 && high > 1.0,
            "the interval holds 1: {ratio} {low} {high}"
        );
        let (_, low, high) = ratio_of_levels(&[&b1], &[&a1]).unwrap();
        assert!(
            low > 1.1,
            "one run a side sees only its steps: {low} {high}"
        );
    }

    #[test]
    fn run_means_apart_beyond_their_spread_give_an_interval_without_one() {
        let (ratio, low, high) =
            ratio_of_run_means(&[10.0, 11.0, 10.5], &[20.0, 21.0, 19.5]).unwrap();
        assert!((ratio - 60.5 / 31.5).abs() < 1e-12, "{ratio}");
        assert!(low > 1.7 && high < 2.2, "{low} {high}");
        let (_, low, high) = ratio_of_run_means(&[10.0, 12.0, 11.0], &[11.0, 10.0, 12.5]).unwrap();
        assert!(low < 1.0 && high > 1.0, "{low} {high}");
        assert_eq!(
            ratio_of_run_means(&[10.0], &[11.0, 12.0]),
            None,
            "one run is not a spread"
        );
    }
}
