//! What per-op numerics cost (`[numerics]`): a training step of the examples' vision model on
//! NdArray with statistics on, alone, with `check_finite`, and with fingerprints (every op's
//! outputs read and fingerprinted), interleaved (`workloads/interleaved.rs`), and the difference
//! per op; with `--features wgpu`, the same on `Profiled<Wgpu>` and `fused::Wgpu` (on this
//! machine, lavapipe), and with `--features cuda` on `Profiled<Cuda>` and `fused::Cuda`
//! (`scripts/gpu-check.sh`), where `check_finite` reads its sums in batches. Each variant's step
//! ends the numerics step, so that the batch read at its end is timed.
//!
//! `cargo bench --bench numerics [--features wgpu|cuda]` (`BURN_PROFILED_BENCH_ROUNDS` sets the
//! rounds).

use std::time::Duration;

use burn::backend::{Autodiff, NdArray};
use burn::tensor::backend::AutodiffBackend;
use burn_profiled::config::{CheckFinite, NumericsSection};
use burn_profiled::{Profiled, stats};
use burn_profiled_core::sinks::numerics;

#[path = "workloads/vision_step.rs"]
mod vision_step;
use vision_step::Step;

#[path = "workloads/interleaved.rs"]
mod interleaved;
use interleaved::{Variant, timed_with};

/// Steps run before each variant is measured.
const WARM_UP_STEPS: usize = 3;

/// A variant: its own warm step, with statistics and `section`'s numerics switched on around
/// each step (what a step records is dropped after it).
fn turn<B: AutodiffBackend>(name: &str, section: Option<NumericsSection>) -> Variant<'_> {
    turn_as::<B>(name, section, false)
}

/// [`turn`], its fingerprints read whole when `read_whole` (on CubeCL's backends, as before
/// large tensors were reduced on the device).
fn turn_as<B: AutodiffBackend>(
    name: &str,
    section: Option<NumericsSection>,
    read_whole: bool,
) -> Variant<'_> {
    let mut step = Step::<B>::new(&Default::default());
    for _ in 0..WARM_UP_STEPS {
        step.run();
    }
    Variant::new(name, move || -> Duration {
        #[cfg(feature = "fusion")]
        burn_profiled::fused::read_fingerprints_whole(read_whole);
        #[cfg(not(feature = "fusion"))]
        let _ = read_whole;
        if let Some(section) = &section {
            numerics::start(section.clone());
        }
        let took = timed_with(Some(stats::StatsConfig::default()), false, || {
            step.run();
            // The step's end, as a session's: what was deferred is read now.
            if section.is_some() {
                numerics::set_step(1);
            }
        });
        if section.is_some() {
            numerics::stop();
        }
        took
    })
}

fn ops_per_step<B: AutodiffBackend>() -> u64 {
    let mut step = Step::<B>::new(&Default::default());
    step.run();
    stats::reset();
    timed_with(Some(stats::StatsConfig::default()), false, || step.run());
    let ops = stats::snapshot().totals().0;
    stats::reset();
    ops
}

/// `rounds` interleaved rounds on `B`; with `device`, also fingerprints read whole (CubeCL's
/// backends, where large tensors are otherwise reduced on the device).
fn interleaved_steps<B: AutodiffBackend>(backend: &str, rounds: usize, device: bool) {
    let check_finite = NumericsSection {
        check_finite: CheckFinite::Warn,
        ..NumericsSection::default()
    };
    let fingerprints = NumericsSection {
        fingerprints: true,
        ..NumericsSection::default()
    };
    let mut variants = vec![
        turn::<B>("statistics", None),
        turn::<B>("statistics + check_finite", Some(check_finite)),
        turn::<B>("statistics + fingerprints", Some(fingerprints.clone())),
    ];
    let mut names = vec!["check_finite", "fingerprints"];
    if device {
        let whole = "statistics + fingerprints read whole";
        variants.push(turn_as::<B>(whole, Some(fingerprints), true));
        names.push("fingerprints read whole");
    }
    let over_statistics = interleaved::compare(
        &format!("the vision model's training step on {backend}, interleaved"),
        rounds,
        &mut variants,
    );
    let ops = ops_per_step::<B>();
    let per_op = |seconds: f64| seconds * 1e6 / ops as f64;
    for (name, (low, median, high)) in names.iter().zip(&over_statistics[1..]) {
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
    interleaved::criterion_then(
        || {},
        || {
            interleaved_steps::<Autodiff<Profiled<NdArray>>>("NdArray", 40, false);
            #[cfg(feature = "wgpu")]
            {
                use burn::backend::Wgpu;
                interleaved_steps::<Autodiff<Profiled<Wgpu>>>("Profiled<Wgpu>", 10, true);
                interleaved_steps::<Autodiff<burn_profiled::fused::Wgpu>>("fused::Wgpu", 10, true);
            }
            #[cfg(feature = "cuda")]
            {
                use burn::backend::Cuda;
                interleaved_steps::<Autodiff<Profiled<Cuda>>>("Profiled<Cuda>", 10, true);
                interleaved_steps::<Autodiff<burn_profiled::fused::Cuda>>("fused::Cuda", 10, true);
            }
        },
    );
}
