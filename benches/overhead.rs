//! What `Profiled` costs per op, side by side with the bare backend in one run.
//!
//! * `tiny_op`: a 2x2 float add, the worst case. `a + b` on tensors is 3 backend ops
//!   (`float_device` twice for the device check, then `float_add`), so divide differences by 3
//!   for the cost per op.
//! * `mlp_step`: one training step (forward, backward, Adam) of a small MLP.
//!
//! Each group runs the bare backend, `Profiled` with everything off, and `Profiled` with NVTX op
//! ranges on (no NVTX tool attached, as in a run outside `nsys`); `tiny_op` also with op
//! statistics and with the timeline recording.

use burn::backend::{Autodiff, NdArray};
use burn::module::Module;
use burn::nn::loss::MseLoss;
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Tensor, TensorData};
use burn_profiled::{Profiled, probe, stats, trace};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn tiny_op<B: Backend>(
    c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: &str,
) {
    let device = Default::default();
    let a = Tensor::<B, 2>::from_data(
        TensorData::new(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2]),
        &device,
    );
    let b = a.clone();
    c.bench_function(BenchmarkId::from_parameter(id), |bench| {
        bench.iter(|| black_box(a.clone() + b.clone()))
    });
}

#[derive(Module, Debug)]
struct Mlp<B: Backend> {
    input: Linear<B>,
    relu: Relu,
    output: Linear<B>,
}

fn mlp_step<B: AutodiffBackend>(
    c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: &str,
) {
    let device = Default::default();
    B::seed(&device, 7);
    let mut model = Mlp::<B> {
        input: LinearConfig::new(32, 64).init(&device),
        relu: Relu::new(),
        output: LinearConfig::new(64, 1).init(&device),
    };
    let mut optim = AdamConfig::new().init();
    let x = Tensor::<B, 2>::ones([16, 32], &device);
    let y = Tensor::<B, 2>::zeros([16, 1], &device);
    c.bench_function(BenchmarkId::from_parameter(id), |bench| {
        bench.iter(|| {
            let pred = model
                .output
                .forward(model.relu.forward(model.input.forward(x.clone())));
            let loss = MseLoss::new().forward(pred, y.clone(), burn::nn::loss::Reduction::Mean);
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(1e-3, model.clone(), grads);
        })
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
