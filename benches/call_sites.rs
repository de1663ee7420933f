//! What taking each op's call stack costs (`[stats] call_sites`): a training step of the
//! examples' vision model on NdArray, statistics alone against statistics with call sites,
//! interleaved (`workloads/interleaved.rs`), and the difference per op.
//!
//! `cargo bench --bench call_sites` (`BURN_PROFILED_BENCH_ROUNDS` sets the rounds).

use burn::backend::{Autodiff, NdArray};
use burn_profiled::{Profiled, call_sites, stats};

#[path = "workloads/vision_step.rs"]
mod vision_step;
use vision_step::Step;

#[path = "workloads/interleaved.rs"]
mod interleaved;
use interleaved::{Variant, timed_with, warm_variant};

type B = Autodiff<Profiled<NdArray>>;

/// Steps run before each variant is measured.
const WARM_UP_STEPS: usize = 3;

/// A variant: its own warm step, with `statistics` switched on around each step.
fn turn<'a>(name: &'a str, statistics: Option<stats::StatsConfig>) -> Variant<'a> {
    let mut step = Step::<B>::new(&Default::default());
    warm_variant(name, statistics, WARM_UP_STEPS, move || step.run())
}

fn ops_per_step(statistics: stats::StatsConfig) -> (u64, usize) {
    let mut step = Step::<B>::new(&Default::default());
    step.run();
    stats::reset();
    timed_with(Some(statistics), false, || step.run());
    let snapshot = stats::snapshot();
    let sites = snapshot.rows(stats::GroupBy::OpAndCallSite).len();
    stats::reset();
    (snapshot.totals().0, sites)
}

fn interleaved_steps() {
    let statistics = stats::StatsConfig::default();
    let with_call_sites = stats::StatsConfig {
        call_sites: true,
        ..statistics
    };
    let over_statistics = interleaved::compare(
        "the vision model's training step on NdArray, interleaved",
        60,
        &mut [
            turn("statistics", Some(statistics)),
            turn("statistics + call sites", Some(with_call_sites)),
        ],
    );
    let (ops, rows) = ops_per_step(with_call_sites);
    let (low, median, high) = over_statistics[1];
    let per_op = |seconds: f64| seconds * 1e6 / ops as f64;
    println!(
        "call sites: {ops} ops a step ({rows} rows by op, phase and call site): {:.2} µs per op \
         over statistics alone [{:.2}, {:.2}]",
        per_op(median),
        per_op(low),
        per_op(high)
    );
    call_sites::set_enabled(false);
    stats::reset();
}

fn main() {
    interleaved::criterion_then(|| {}, interleaved_steps);
}
