//! What per-op numerics cost (`[numerics]`): a training step of the examples' vision model on
//! NdArray with statistics on, alone, with `check_finite`, and with fingerprints (every op's
//! outputs read and fingerprinted), interleaved (`workloads/interleaved.rs`), and the difference
//! per op.
//!
//! `cargo bench --bench numerics` (`BURN_PROFILED_BENCH_ROUNDS` sets the rounds).

use std::time::Duration;

use burn::backend::{Autodiff, NdArray};
use burn_profiled::config::{CheckFinite, NumericsSection};
use burn_profiled::{Profiled, stats};
use burn_profiled_core::sinks::numerics;

#[path = "workloads/vision_step.rs"]
mod vision_step;
use vision_step::Step;

#[path = "workloads/interleaved.rs"]
mod interleaved;
use interleaved::{Variant, timed_with};

type B = Autodiff<Profiled<NdArray>>;

/// Steps run before each variant is measured.
const WARM_UP_STEPS: usize = 3;

/// A variant: its own warm step, with statistics and `section`'s numerics switched on around
/// each step (what a step records is dropped after it).
fn turn(name: &str, section: Option<NumericsSection>) -> Variant<'_> {
    let mut step = Step::<B>::new(&Default::default());
    for _ in 0..WARM_UP_STEPS {
        step.run();
    }
    Variant::new(name, move || -> Duration {
        if let Some(section) = &section {
            numerics::start(section.clone());
        }
        let took = timed_with(Some(stats::StatsConfig::default()), false, || step.run());
        if section.is_some() {
            numerics::stop();
        }
        took
    })
}

fn ops_per_step() -> u64 {
    let mut step = Step::<B>::new(&Default::default());
    step.run();
    stats::reset();
    timed_with(Some(stats::StatsConfig::default()), false, || step.run());
    let ops = stats::snapshot().totals().0;
    stats::reset();
    ops
}

fn interleaved_steps() {
    let check_finite = NumericsSection {
        check_finite: CheckFinite::Warn,
        ..NumericsSection::default()
    };
    let fingerprints = NumericsSection {
        fingerprints: true,
        ..NumericsSection::default()
    };
    let over_statistics = interleaved::compare(
        "the vision model's training step on NdArray, interleaved",
        40,
        &mut [
            turn("statistics", None),
            turn("statistics + check_finite", Some(check_finite)),
            turn("statistics + fingerprints", Some(fingerprints)),
        ],
    );
    let ops = ops_per_step();
    let per_op = |seconds: f64| seconds * 1e6 / ops as f64;
    for (name, (low, median, high)) in ["check_finite", "fingerprints"]
        .iter()
        .zip(&over_statistics[1..])
    {
        println!(
            "{name}: {ops} ops a step: {:.2} µs per op over statistics alone [{:.2}, {:.2}]",
            per_op(*median),
            per_op(*low),
            per_op(*high)
        );
    }
    stats::reset();
}

fn main() {
    interleaved::criterion_then(|| {}, interleaved_steps);
}
