//! What tracing the host blocks ops keep alive costs (`[memory] per_op` with the tracking
//! allocator: each block of 256 bytes or more that an op makes goes into a table until it is
//! freed, for the growth warning's "made in one step and still alive"): a training step of the
//! examples' vision model on NdArray, statistics with per-op memory against the same with the
//! table, interleaved (`workloads/interleaved.rs`), and the difference per op.
//!
//! `cargo bench --bench kept_alive` (`BURN_PROFILED_BENCH_ROUNDS` sets the rounds).

use burn::backend::{Autodiff, NdArray};
use burn_profiled::memory::TrackingAllocator;
use burn_profiled::{Profiled, nvtx, stats};
use burn_profiled_core::context::live_allocations;

#[path = "workloads/vision_step.rs"]
mod vision_step;
use vision_step::Step;

#[path = "workloads/interleaved.rs"]
mod interleaved;
use interleaved::{Variant, timed_with, warm_variant};

#[global_allocator]
static ALLOCATOR: TrackingAllocator = TrackingAllocator::system();

type B = Autodiff<Profiled<NdArray>>;

/// Steps run before each variant is measured.
const WARM_UP_STEPS: usize = 3;

fn per_op_memory() -> stats::StatsConfig {
    stats::StatsConfig {
        memory: true,
        ..stats::StatsConfig::default()
    }
}

/// Statistics with per-op memory, and the table of live blocks around each step when `table`.
fn turn(name: &str, table: bool) -> Variant<'_> {
    let mut step = Step::<B>::new(&Default::default());
    let statistics = Some(per_op_memory());
    match table {
        false => warm_variant(name, statistics, WARM_UP_STEPS, move || {
            step.run_in_phases()
        }),
        true => {
            for _ in 0..WARM_UP_STEPS {
                step.run_in_phases();
            }
            Variant::new(name, move || {
                live_allocations::start();
                let time = timed_with(statistics, false, || step.run_in_phases());
                let _ = live_allocations::stop();
                time
            })
        }
    }
}

/// Ops a step.
fn ops_per_step() -> u64 {
    let mut step = Step::<B>::new(&Default::default());
    step.run_in_phases();
    stats::reset();
    timed_with(Some(per_op_memory()), false, || step.run_in_phases());
    let ops = stats::snapshot().totals().0;
    stats::reset();
    ops
}

fn interleaved_steps() {
    let over_per_op = interleaved::compare(
        "the vision model's training step on NdArray, interleaved",
        60,
        &mut [
            turn("statistics + per-op memory", false),
            turn("statistics + per-op memory + live blocks", true),
        ],
    );
    let ops = ops_per_step();
    let (low, median, high) = over_per_op[1];
    let per_op = |seconds: f64| seconds * 1e6 / ops as f64;
    println!(
        "live blocks: {ops} ops a step: {:.2} µs per op over per-op memory alone [{:.2}, {:.2}]",
        per_op(median),
        per_op(low),
        per_op(high)
    );
}

fn main() {
    nvtx::enable(nvtx::RangeConfig::new());
    interleaved::criterion_then(|| {}, interleaved_steps);
}
