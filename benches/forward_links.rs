//! What linking backward and optimizer ops to their forward ops costs (`[stats]
//! forward_links`: each op's tensors' identities and their lineage): a training step of the
//! examples' vision model on NdArray, statistics alone against statistics with forward links,
//! interleaved (`workloads/interleaved.rs`), and the difference per op.
//!
//! `cargo bench --bench forward_links` (`BURN_PROFILED_BENCH_ROUNDS` sets the rounds).

use burn::backend::{Autodiff, NdArray};
use burn_profiled::{Profiled, nvtx, stats};

#[path = "workloads/vision_step.rs"]
mod vision_step;
use vision_step::Step;

#[path = "workloads/interleaved.rs"]
mod interleaved;
use interleaved::{Variant, timed_with, warm_variant};

type B = Autodiff<Profiled<NdArray>>;

/// Steps run before each variant is measured.
const WARM_UP_STEPS: usize = 3;

/// A variant: its own warm step, with `statistics` switched on around each step. Steps run
/// their forward, backward and optimizer in user ranges of those names, as the examples do:
/// forward links link the ops of the last two.
fn turn<'a>(name: &'a str, statistics: Option<stats::StatsConfig>) -> Variant<'a> {
    let mut step = Step::<B>::new(&Default::default());
    warm_variant(name, statistics, WARM_UP_STEPS, move || {
        step.run_in_phases()
    })
}

/// Ops a step, and the share of the backward and optimizer ops' time linked to a forward op.
fn ops_and_linked_share(statistics: stats::StatsConfig) -> (u64, f64) {
    let mut step = Step::<B>::new(&Default::default());
    step.run_in_phases();
    stats::reset();
    timed_with(Some(statistics), false, || step.run_in_phases());
    let snapshot = stats::snapshot();
    let modules = snapshot.modules();
    let linked = |linked: bool| -> u64 {
        modules
            .iter()
            .filter(|m| (m.module != stats::NOT_LINKED) == linked)
            .map(|m| m.backward_ns + m.optimizer_ns)
            .sum()
    };
    stats::reset();
    let share = linked(true) as f64 / (linked(true) + linked(false)).max(1) as f64;
    (snapshot.totals().0, share)
}

fn interleaved_steps() {
    let statistics = stats::StatsConfig::default();
    let with_links = stats::StatsConfig {
        forward_links: true,
        ..statistics
    };
    let over_statistics = interleaved::compare(
        "the vision model's training step on NdArray, interleaved",
        60,
        &mut [
            turn("statistics", Some(statistics)),
            turn("statistics + forward links", Some(with_links)),
        ],
    );
    let (ops, share) = ops_and_linked_share(with_links);
    let (low, median, high) = over_statistics[1];
    let per_op = |seconds: f64| seconds * 1e6 / ops as f64;
    println!(
        "forward links: {ops} ops a step, {:.1}% of backward and optimizer time linked: {:.2} µs \
         per op over statistics alone [{:.2}, {:.2}]",
        100.0 * share,
        per_op(median),
        per_op(low),
        per_op(high)
    );
}

fn main() {
    nvtx::enable(nvtx::RangeConfig::new());
    interleaved::criterion_then(|| {}, interleaved_steps);
}
