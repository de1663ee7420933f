//! How much two sides' step times differ, with the uncertainty of their runs and steps.
//!
//! One run a side: the ratio of the runs' median steps and a 95% interval for it (percentile
//! bootstrap of each run's steps, 2,000 resamples from a fixed seed: the same runs always give
//! the same interval). That interval holds only the spread within each process.
//!
//! Several runs a side: the ratio of the sides' levels (the geometric mean of a side's run
//! medians) and Welch's 95% interval for it, on the logarithms of the run medians: the spread
//! between processes, with the t quantile that a handful of runs needs (a bootstrap of three
//! runs gives intervals far too narrow: measured, one of three groups of idle example runs of
//! one configuration came out "10.8% faster" that way).

use statrs::distribution::{ContinuousCDF, StudentsT};

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

/// `after`'s median over `before`'s, and the 95% interval of that ratio from resampling the
/// steps of each; `None` when either has no steps.
pub(crate) fn ratio_of_medians(before: &[f64], after: &[f64]) -> Option<(f64, f64, f64)> {
    if before.is_empty() || after.is_empty() {
        return None;
    }
    let ratio = median(&mut after.to_vec()) / median(&mut before.to_vec());
    let mut random = SplitMix(0x5EED);
    let mut resample = |values: &[f64], into: &mut Vec<f64>| {
        into.clear();
        into.extend((0..values.len()).map(|_| values[random.below(values.len())]));
        median(into)
    };
    let (mut b, mut a) = (Vec::new(), Vec::new());
    let mut ratios: Vec<f64> = (0..RESAMPLES)
        .map(|_| resample(after, &mut a) / resample(before, &mut b))
        .collect();
    Some(interval_of(ratio, &mut ratios))
}

/// The geometric mean of `values` (positive).
pub(crate) fn geometric_mean(values: &[f64]) -> f64 {
    (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp()
}

/// Welch's 95% interval for the difference of the means, `after` less `before` (each at least
/// two values): `(difference, low, high)`.
pub(crate) fn welch_difference(before: &[f64], after: &[f64]) -> Option<(f64, f64, f64)> {
    if before.len() < 2 || after.len() < 2 {
        return None;
    }
    let moments = |values: &[f64]| {
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, variance / n, n)
    };
    let ((mean_b, se2_b, n_b), (mean_a, se2_a, n_a)) = (moments(before), moments(after));
    let difference = mean_a - mean_b;
    let se2 = se2_a + se2_b;
    if se2 == 0.0 {
        return Some((difference, difference, difference));
    }
    let df = se2 * se2 / (se2_a * se2_a / (n_a - 1.0) + se2_b * se2_b / (n_b - 1.0));
    let t = StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(0.975);
    let half = t * se2.sqrt();
    Some((difference, difference - half, difference + half))
}

/// The ratio of the levels of two sides of several runs, each run given by its median step:
/// the geometric means' ratio and Welch's 95% interval for it.
pub(crate) fn ratio_of_run_levels(before: &[f64], after: &[f64]) -> Option<(f64, f64, f64)> {
    if before.iter().chain(after).any(|v| *v <= 0.0) {
        return None;
    }
    let logs = |values: &[f64]| values.iter().map(|v| v.ln()).collect::<Vec<f64>>();
    let (difference, low, high) = welch_difference(&logs(before), &logs(after))?;
    Some((difference.exp(), low.exp(), high.exp()))
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
        let (ratio, low, high) = ratio_of_medians(&before, &after).unwrap();
        assert!((ratio - 0.8).abs() < 1e-9, "{ratio}");
        assert!(low <= ratio && ratio <= high && high < 0.85, "{low} {high}");
    }

    #[test]
    fn the_same_steps_give_an_interval_around_one_and_the_same_each_time() {
        let steps: Vec<f64> = (0..25)
            .map(|i| 0.05 + 0.002 * ((i * 7) % 11) as f64)
            .collect();
        let first = ratio_of_medians(&steps, &steps).unwrap();
        assert_eq!(first.0, 1.0);
        assert!(first.1 < 1.0 && first.2 > 1.0, "{first:?}");
        assert_eq!(ratio_of_medians(&steps, &steps), Some(first));
        assert_eq!(ratio_of_medians(&[], &steps), None);
    }

    /// Steps tight within each run, the runs 15-20% apart: between-process drift, which the
    /// interval between runs holds.
    #[test]
    fn runs_shifted_apart_give_an_interval_that_holds_their_spread() {
        let (ratio, low, high) =
            ratio_of_run_levels(&[10.0, 11.8, 11.5], &[11.7, 10.0, 12.0]).unwrap();
        assert!(
            low < 1.0 && high > 1.0,
            "the interval holds 1: {ratio} {low} {high}"
        );
        assert_eq!(
            ratio_of_run_levels(&[10.0], &[11.0, 12.0]),
            None,
            "one run is no spread"
        );
    }

    /// Measured on the VM: three idle runs of the example against three more, one of them
    /// slow (its first runs warm the machine). A bootstrap of the runs called it 10.8% faster.
    #[test]
    fn one_slow_run_among_three_is_no_verdict() {
        let (_, low, high) =
            ratio_of_run_levels(&[35.021, 42.938, 35.304], &[33.510, 34.475, 33.074]).unwrap();
        assert!(low < 1.0 && high > 1.0, "{low} {high}");
    }

    #[test]
    fn welchs_interval_matches_a_hand_computed_one() {
        // Means 2 and 5, variances 1 and 1, n = 3 each: SE = sqrt(2/3), df = 4, t = 2.7764.
        let (difference, low, high) = welch_difference(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        let half = 2.776_445 * (2.0f64 / 3.0).sqrt();
        assert_eq!(difference, 3.0);
        assert!((low - (3.0 - half)).abs() < 1e-5 && (high - (3.0 + half)).abs() < 1e-5);
        let (_, low, high) = ratio_of_run_levels(&[10.0, 11.0, 10.5], &[20.0, 21.0, 19.5]).unwrap();
        assert!(low > 1.7 && high < 2.2, "{low} {high}");
    }
}
