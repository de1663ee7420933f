//! What the GPU tools cost per training step, on CUDA, side by side in one run (needs a GPU:
//! `cargo bench --features cupti --bench gpu_step`; `scripts/gpu-check.sh` builds it here and
//! runs it on a lent machine).
//!
//! Two MLPs (4 linear layers, Adam), the shapes `shared/reference/gpu-notes.md` compares with
//! PyTorch: width 256 at batch 64 (launch-bound) and width 4096 at batch 1024 (compute-bound).
//! Each step ends with a device sync, so the time is the step's, not its enqueue. Variants:
//! * `Autodiff<Cuda>`: the baseline;
//! * `Profiled`, everything off;
//! * op ranges, ops on the calling thread, no launch thread attached (kernels outside their
//!   ranges);
//! * op ranges, ops on the calling thread, each queuing its range on the attached launch thread
//!   (`LaunchThread::attach`: kernels inside, no step-level hop);
//! * op ranges, each step on CubeCL's device thread (`LaunchThread::run`): kernels inside;
//! * the same with device time per op (CUPTI) recording as well;
//! * fused, as with burn's default features: burn's `Autodiff<Fusion<CubeBackend<Cuda>>>`, then
//!   `Autodiff<fused::Cuda>` (Profiled inside fusion) with everything off, with op ranges
//!   queued on the attached launch thread, and with device time as well;
//! * statistics, the launch thread attached, without and with per-op memory (`[memory] per_op`:
//!   each op's memory read on CubeCL's device thread, behind its launches). CubeCL's CUDA server
//!   reads its pools without flushing its streams, where wgpu's flushes them (lavapipe's figures
//!   in `benches/memory.rs`).
//!
//! After criterion's runs, the two comparisons the fusion and memory issues set goals for run
//! again interleaved (`workloads/interleaved.rs`: a step of each variant per round, against the
//! same round's baseline): burn's fused step against `fused::Cuda` with everything off and with
//! op ranges and statistics queued on the launch thread, and statistics against statistics
//! with per-op memory.
//!
//! The NVTX recorder is this binary's NVTX tool, standing for Nsight Systems (without a tool,
//! op ranges do nothing); its own cost per range is in the op-range variants' figures.

nvtx_recorder::install_static!();

use burn::backend::{Autodiff, Cuda};
use burn::module::Module;
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{Adam, AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Distribution, Tensor};
use burn_profiled::{LaunchThread, Profiled, device_time, fused, probe, stats};
use criterion::{BenchmarkId, Criterion, criterion_group};

#[path = "workloads/interleaved.rs"]
mod interleaved;
use interleaved::{Variant, timed_with};

#[derive(Module, Debug)]
struct Mlp<B: Backend> {
    layers: Vec<Linear<B>>,
    relu: Relu,
}

/// One training step of a 4-layer MLP of `width` on a batch of `batch`, synced at the end.
struct Step<B: AutodiffBackend> {
    model: Option<Mlp<B>>,
    optim: OptimizerAdaptor<Adam, Mlp<B>, B>,
    x: Tensor<B, 2>,
    y: Tensor<B, 2>,
    device: B::Device,
}

impl<B: AutodiffBackend> Step<B> {
    fn new(width: usize, batch: usize) -> Self {
        let device = B::Device::default();
        B::seed(&device, 7);
        let layers = (0..4)
            .map(|_| LinearConfig::new(width, width).init(&device))
            .collect();
        Step {
            model: Some(Mlp {
                layers,
                relu: Relu::new(),
            }),
            optim: AdamConfig::new().init(),
            x: Tensor::random([batch, width], Distribution::Default, &device),
            y: Tensor::zeros([batch, width], &device),
            device,
        }
    }

    fn run(&mut self) {
        let Some(model) = self.model.take() else {
            return;
        };
        let mut x = self.x.clone();
        for layer in &model.layers {
            x = model.relu.forward(layer.forward(x));
        }
        let loss = MseLoss::new().forward(x, self.y.clone(), Reduction::Mean);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        self.model = Some(self.optim.step(1e-3, model, grads));
        let _ = B::sync(&self.device);
    }
}

/// Steps between two collections of device time, as a `Session` collects.
const COLLECT_EVERY: usize = 20;

fn bench_step<B: AutodiffBackend>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    (width, batch): (usize, usize),
    id: &str,
    launch: Option<&LaunchThread>,
) {
    let mut step = Step::<B>::new(width, batch);
    let mut steps = 0usize;
    group.bench_function(BenchmarkId::new(id, format!("{width}x{batch}")), |bench| {
        bench.iter(|| {
            match launch {
                Some(launch) => launch.run(|| step.run()),
                None => step.run(),
            }
            steps += 1;
            if device_time::is_recording() && steps.is_multiple_of(COLLECT_EVERY) {
                // The step ended with a device sync: every record is complete.
                probe::flush_device_time();
            }
        })
    });
}

/// burn's fused CUDA backend, as `burn::backend::Cuda` is with burn's default features.
type BurnFused = burn_fusion::Fusion<
    burn_cubecl::CubeBackend<burn_cubecl::cubecl::cuda::CudaRuntime, f32, i32, u8>,
>;

fn gpu_step(c: &mut Criterion) {
    type P = Autodiff<Profiled<Cuda>>;
    type F = Autodiff<fused::Cuda>;
    let device = Default::default();
    let launch = LaunchThread::cubecl::<Cuda>(&device);
    let fused_launch = LaunchThread::cubecl::<fused::Cuda>(&device);
    for shape in [(256, 64), (4096, 1024)] {
        let mut group = c.benchmark_group("gpu_step");
        bench_step::<Autodiff<Cuda>>(&mut group, shape, "Autodiff<Cuda>", None);
        bench_step::<P>(&mut group, shape, "Profiled, all off", None);
        probe::set_op_ranges(true);
        bench_step::<P>(&mut group, shape, "op ranges, calling thread", None);
        let attached = launch.attach();
        bench_step::<P>(
            &mut group,
            shape,
            "op ranges, queued on launch thread",
            None,
        );
        drop(attached);
        bench_step::<P>(&mut group, shape, "op ranges, launch thread", Some(&launch));
        match device_time::start() {
            Ok(()) => {
                bench_step::<P>(&mut group, shape, "+ device time", Some(&launch));
                let _ = device_time::stop();
                let _ = probe::flush_device_time();
            }
            Err(why) => eprintln!("gpu_step: no device-time variant: {why}"),
        }
        probe::set_op_ranges(false);
        bench_step::<Autodiff<BurnFused>>(&mut group, shape, "fused: Autodiff<Cuda>", None);
        bench_step::<F>(&mut group, shape, "fused: Profiled inside, all off", None);
        probe::set_op_ranges(true);
        let attached = fused_launch.attach();
        bench_step::<F>(&mut group, shape, "fused: op ranges, queued", None);
        match device_time::start() {
            Ok(()) => {
                bench_step::<F>(&mut group, shape, "fused: + device time", None);
                let _ = device_time::stop();
                let _ = probe::flush_device_time();
            }
            Err(why) => eprintln!("gpu_step: no fused device-time variant: {why}"),
        }
        drop(attached);
        probe::set_op_ranges(false);
        let attached = launch.attach();
        for (id, memory) in [("statistics", false), ("statistics + per-op memory", true)] {
            stats::start(stats::StatsConfig {
                memory,
                ..stats::StatsConfig::default()
            });
            bench_step::<P>(&mut group, shape, id, None);
            stats::stop();
            stats::reset();
        }
        drop(attached);
        group.finish();
    }
}

/// A step of `B`, warmed up (kernels compile and tune on their first runs).
fn warm_step<B: AutodiffBackend>((width, batch): (usize, usize)) -> Step<B> {
    let mut step = Step::<B>::new(width, batch);
    for _ in 0..3 {
        step.run();
    }
    step
}

/// Times one step of `step`, statistics (with or without per-op memory) and op ranges switched
/// on around it as asked.
fn timed<B: AutodiffBackend>(
    step: &mut Step<B>,
    statistics: Option<bool>,
    ranges: bool,
) -> std::time::Duration {
    let statistics = statistics.map(|memory| stats::StatsConfig {
        memory,
        ..stats::StatsConfig::default()
    });
    timed_with(statistics, ranges, || step.run())
}

fn gpu_step_interleaved() {
    type P = Autodiff<Profiled<Cuda>>;
    type F = Autodiff<fused::Cuda>;
    let device = Default::default();
    let launch = LaunchThread::cubecl::<Cuda>(&device);
    let fused_launch = LaunchThread::cubecl::<fused::Cuda>(&device);
    for shape in [(256, 64), (4096, 1024)] {
        let (width, batch) = shape;
        let mut burn = warm_step::<Autodiff<BurnFused>>(shape);
        let mut all_off = warm_step::<F>(shape);
        let mut queued = warm_step::<F>(shape);
        interleaved::compare(
            &format!("gpu_step {width}x{batch}, fused, interleaved"),
            40,
            &mut [
                Variant::new("fused: Autodiff<Cuda>", || timed(&mut burn, None, false)),
                Variant::new("fused: Profiled inside, all off", || {
                    timed(&mut all_off, None, false)
                }),
                Variant::new("fused: op ranges + statistics, queued", || {
                    let attached = fused_launch.attach();
                    let time = timed(&mut queued, Some(false), true);
                    drop(attached);
                    time
                }),
            ],
        );
        let mut statistics = warm_step::<P>(shape);
        let mut memory = warm_step::<P>(shape);
        let attached = launch.attach();
        interleaved::compare(
            &format!("gpu_step {width}x{batch}, per-op memory, interleaved"),
            40,
            &mut [
                Variant::new("statistics", || timed(&mut statistics, Some(false), false)),
                Variant::new("statistics + per-op memory", || {
                    timed(&mut memory, Some(true), false)
                }),
            ],
        );
        drop(attached);
        stats::reset();
    }
}

criterion_group!(benches, gpu_step);

fn main() {
    interleaved::criterion_then(benches, gpu_step_interleaved);
}
