//! Variants measured in turns: each round runs every variant once, in an order that rotates
//! from round to round, and each variant's time is set against the baseline's (the first
//! variant) of the same round. Criterion measures one variant after another; on a machine whose
//! speed drifts over minutes (2 cores shared with lavapipe's device thread and CubeCL's
//! spinning queues) the drift between variants is larger than the differences sought, and it
//! favours whichever variants run last or first. Ratios within a round cancel it.
//!
//! The figure per variant is the median of its per-round ratios, with a 95% interval for that
//! median from order statistics (no assumption on the distribution).

use std::time::{Duration, Instant};

use burn_profiled_core::{probe, stats};

/// A variant: its name, and a closure that sets it up, times one run (the returned duration)
/// and undoes its setup.
pub struct Variant<'a> {
    pub name: &'a str,
    pub timed_run: Box<dyn FnMut() -> Duration + 'a>,
}

impl<'a> Variant<'a> {
    pub fn new(name: &'a str, timed_run: impl FnMut() -> Duration + 'a) -> Self {
        Variant {
            name,
            timed_run: Box::new(timed_run),
        }
    }
}

/// Rounds run by default; `BURN_PROFILED_BENCH_ROUNDS` sets another number.
fn rounds(default: usize) -> usize {
    std::env::var("BURN_PROFILED_BENCH_ROUNDS")
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|&rounds| rounds > 0)
        .unwrap_or(default)
}

/// Whether this run of the bench binary is `cargo bench`'s (criterion's `--test` and `--list`
/// runs skip the interleaved measurement).
fn benchmarking() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|arg| arg == "--bench") && !args.iter().any(|arg| arg == "--list")
}

/// A bench binary's `main`: criterion's `benches`, then `interleaved` in `cargo bench`'s run.
pub fn criterion_then(benches: fn(), interleaved: fn()) {
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
    if benchmarking() {
        interleaved();
    }
}

/// Times `run`, with statistics (under `statistics`) and op ranges switched on around it when
/// asked, and off again after.
pub fn timed_with(
    statistics: Option<stats::StatsConfig>,
    ranges: bool,
    run: impl FnOnce(),
) -> Duration {
    if let Some(config) = statistics {
        stats::start(config);
    }
    probe::set_op_ranges(ranges);
    let started = Instant::now();
    run();
    let time = started.elapsed();
    probe::set_op_ranges(false);
    stats::stop();
    time
}

/// A variant named `name` that runs `step` `warm_up` times first, then times each run with
/// `statistics` switched on around it.
#[allow(dead_code)] // Not every bench builds its variants this way.
pub fn warm_variant<'a>(
    name: &'a str,
    statistics: Option<stats::StatsConfig>,
    warm_up: usize,
    mut step: impl FnMut() + 'a,
) -> Variant<'a> {
    for _ in 0..warm_up {
        step();
    }
    Variant::new(name, move || timed_with(statistics, false, &mut step))
}

/// Runs `default_rounds` rounds of `variants` (the first is the baseline) and prints the table.
/// Returns each variant's median of its per-round time over the baseline's, in seconds, with
/// its 95% interval: `(low, median, high)`.
pub fn compare(
    title: &str,
    default_rounds: usize,
    variants: &mut [Variant<'_>],
) -> Vec<(f64, f64, f64)> {
    let rounds = rounds(default_rounds);
    let count = variants.len();
    let mut times = vec![Vec::with_capacity(rounds); count];
    for round in 0..rounds {
        for turn in 0..count {
            let at = (round + turn) % count;
            times[at].push((variants[at].timed_run)());
        }
    }
    println!();
    println!(
        "{title}: {rounds} rounds, each variant once per round in a rotating order; ratio = the \
         median of each round's time over the baseline's (first row) in the same round, with a \
         95% interval"
    );
    let width = variants.iter().map(|v| v.name.len()).max().unwrap_or(0);
    println!("{:width$}  {:>10}  ratio", "variant", "median");
    let mut over_baseline = Vec::with_capacity(count);
    for (variant, own) in variants.iter().zip(&times) {
        let mut differences: Vec<f64> = own
            .iter()
            .zip(&times[0])
            .map(|(t, base)| t.as_secs_f64() - base.as_secs_f64())
            .collect();
        over_baseline.push(median_with_interval(&mut differences));
        let mut ratios: Vec<f64> = own
            .iter()
            .zip(&times[0])
            .map(|(t, base)| t.as_secs_f64() / base.as_secs_f64())
            .collect();
        let (low, ratio, high) = median_with_interval(&mut ratios);
        let mut sorted = own.clone();
        sorted.sort();
        println!(
            "{:width$}  {:>10}  {ratio:.3}x [{low:.3}, {high:.3}]",
            variant.name,
            format_duration(sorted[sorted.len() / 2]),
        );
    }
    over_baseline
}

/// The median of `values` and the order statistics that bound it with 95% confidence:
/// ranks n/2 ± 0.98·√n.
fn median_with_interval(values: &mut [f64]) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let half_width = 0.98 * (n as f64).sqrt();
    let low = ((n as f64 / 2.0 - half_width).floor().max(0.0)) as usize;
    let high = ((n as f64 / 2.0 + half_width).ceil() as usize).min(n - 1);
    (values[low], values[n / 2], values[high])
}

fn format_duration(duration: Duration) -> String {
    let micros = duration.as_secs_f64() * 1e6;
    if micros >= 1000.0 {
        format!("{:.2} ms", micros / 1000.0)
    } else {
        format!("{micros:.1} us")
    }
}
