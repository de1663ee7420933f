//! How much two runs' step times differ, with the uncertainty of each run's steps: the ratio of
//! their medians and a 95% bootstrap interval for it (percentile bootstrap, 2,000 resamples of
//! each run's steps, from a fixed seed: the same runs always give the same interval).

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

/// `after`'s median over `before`'s, and the 95% interval of that ratio; `None` when either
/// has no steps.
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
    ratios.sort_by(f64::total_cmp);
    let low = ratios[RESAMPLES * 25 / 1000];
    let high = ratios[RESAMPLES * 975 / 1000 - 1];
    Some((ratio, low, high))
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
}
