//! What counting each op's work costs (`[roofline] counts`): a training step of the examples'
//! vision model on NdArray, statistics alone against statistics with work counts, and the step
//! with everything off, interleaved (`workloads/interleaved.rs`): one step of each per round,
//! each against the first variant's step of the same round.
//!
//! `cargo bench --bench roofline` (`BURN_PROFILED_BENCH_ROUNDS` sets the rounds).

use burn::backend::{Autodiff, NdArray};
use burn_profiled::{Profiled, stats};

#[path = "workloads/vision_step.rs"]
mod vision_step;
use vision_step::Step;

#[path = "workloads/interleaved.rs"]
mod interleaved;
use interleaved::{Variant, warm_variant};

type B = Autodiff<Profiled<NdArray>>;

/// Steps run before each variant is measured.
const WARM_UP_STEPS: usize = 3;

/// A variant: its own warm step, with `statistics` switched on around each step.
fn turn<'a>(name: &'a str, statistics: Option<stats::StatsConfig>) -> Variant<'a> {
    let mut step = Step::<B>::new(&Default::default());
    warm_variant(name, statistics, WARM_UP_STEPS, move || step.run())
}

fn interleaved_steps() {
    let statistics = stats::StatsConfig::default();
    let counting = stats::StatsConfig {
        work: true,
        ..statistics
    };
    interleaved::compare(
        "the vision model's training step on NdArray, interleaved",
        60,
        &mut [
            turn("statistics", Some(statistics)),
            turn("statistics + work counts", Some(counting)),
            turn("everything off", None),
        ],
    );
    stats::reset();
}

fn main() {
    interleaved::criterion_then(|| {}, interleaved_steps);
}
