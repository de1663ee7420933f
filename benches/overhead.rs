//! What `Profiled` costs per op, side by side with the bare backend in one run.
//!
//! * `tiny_op`: a 2x2 float add, the worst case. `a + b` on tensors is 3 backend ops
//!   (`float_device` twice for the device check, then `float_add`), so divide differences by 3
//!   for the cost per op.
//! * `mlp_step`: one training step (forward, backward, Adam) of a small MLP.
//!
//! Each group runs the bare backend, `Profiled` with everything off, and `Profiled` with NVTX op
//! ranges on (no NVTX tool attached, as in a run outside `nsys`: the setting only, ops take the
//! everything-off path); `tiny_op` also with op statistics and with the timeline recording.

use burn::backend::{Autodiff, NdArray};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn_profiled::{Profiled, probe, stats, trace};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;

mod workloads;
use workloads::{MlpStep, TinyOp};

fn tiny_op<B: Backend>(
    c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: &str,
) {
    let op = TinyOp::<B>::new();
    c.bench_function(BenchmarkId::from_parameter(id), |bench| {
        bench.iter(|| black_box(op.run()))
    });
}

fn mlp_step<B: AutodiffBackend>(
    c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: &str,
) {
    let mut step = MlpStep::<B>::new();
    c.bench_function(BenchmarkId::from_parameter(id), |bench| {
        bench.iter(|| step.run())
    });
}

fn overhead(c: &mut Criterion) {
    let mut group = c.benchmark_group("tiny_op");
    probe::set_op_ranges(false);
    tiny_op::<NdArray>(&mut group, "NdArray");
    tiny_op::<Profiled<NdArray>>(&mut group, "Profiled<NdArray>, all off");
    probe::set_op_ranges(true);
    tiny_op::<Profiled<NdArray>>(&mut group, "Profiled<NdArray>, op ranges on");
    probe::set_op_ranges(false);
    stats::start(stats::StatsConfig::default());
    tiny_op::<Profiled<NdArray>>(&mut group, "Profiled<NdArray>, op statistics on");
    stats::stop();
    // The cap keeps memory bounded over criterion's millions of iterations; events past it
    // are counted and dropped, which costs about what keeping them does.
    trace::start(trace::TraceConfig {
        max_events: 2_000_000,
    });
    tiny_op::<Profiled<NdArray>>(&mut group, "Profiled<NdArray>, timeline on");
    trace::stop();
    trace::clear();
    group.finish();

    let mut group = c.benchmark_group("mlp_step");
    mlp_step::<Autodiff<NdArray>>(&mut group, "Autodiff<NdArray>");
    mlp_step::<Autodiff<Profiled<NdArray>>>(&mut group, "Autodiff<Profiled<NdArray>>, all off");
    probe::set_op_ranges(true);
    mlp_step::<Autodiff<Profiled<NdArray>>>(
        &mut group,
        "Autodiff<Profiled<NdArray>>, op ranges on",
    );
    probe::set_op_ranges(false);
    group.finish();
}

criterion_group!(benches, overhead);
criterion_main!(benches);
