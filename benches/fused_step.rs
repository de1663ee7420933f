//! A fused training step of the examples' vision model, side by side with and without
//! `Profiled` inside fusion (`cargo bench --features wgpu --bench fused_step`): burn's `Wgpu`
//! (on a machine without GPU, Mesa's lavapipe), fused as with burn's default features.
//!
//! Variants: burn's `Autodiff<Fusion<CubeBackend<Wgpu>>>`; `Autodiff<fused::Wgpu>` with
//! everything off; with statistics on; with op ranges and statistics on and the device's
//! launch thread attached (every fused block's and unfused op's range queued on CubeCL's
//! device thread); with op ranges alone, queued; and with op ranges pushed where the ops run
//! (the fusion thread), no launch thread attached: their ranges then hold no kernel, which
//! shows what the queuing costs. Each step
//! ends with a device sync, so the time is the step's, not its enqueue.
//!
//! The NVTX recorder is this binary's NVTX tool, standing for Nsight Systems: without a tool
//! op ranges do nothing (`probe::set_op_ranges`), and the op-range variants would measure
//! nothing. Its own cost per range (it stores every event) is in their figures, as a tool's is
//! under `nsys`.
//!
//! After criterion's runs, the same variants again, interleaved (`workloads/interleaved.rs`):
//! one step of each per round, each against burn's step of the same round. Those ratios are
//! the figures to compare: on a 2-core machine criterion's variant-after-variant runs drift
//! by more than the differences.

use burn::backend::Autodiff;
use burn::backend::wgpu::{WgpuDevice, WgpuRuntime};
use burn::tensor::backend::AutodiffBackend;
use burn_profiled::{LaunchThread, fused, probe, stats};
use criterion::{BenchmarkId, Criterion, criterion_group};

nvtx_recorder::install_static!();

#[path = "workloads/vision_step.rs"]
mod vision_step;
use vision_step::{BATCH, Step};

#[path = "workloads/interleaved.rs"]
mod interleaved;
use interleaved::{Variant, timed_with};

/// burn's own fused Wgpu.
type BurnFused = burn_fusion::Fusion<burn_cubecl::CubeBackend<WgpuRuntime, f32, i32, u32>>;

/// Steps run before each variant is measured.
const WARM_UP_STEPS: usize = 5;

fn bench_step<B: AutodiffBackend<Device = WgpuDevice>>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: &str,
) {
    let mut step = Step::<B>::new(&WgpuDevice::default());
    // Kernels compile (and tune) on their first run: not in the measurement.
    for _ in 0..WARM_UP_STEPS {
        step.run();
    }
    group.bench_function(BenchmarkId::new(id, format!("batch {BATCH}")), |bench| {
        bench.iter(|| step.run())
    });
}

fn fused_step(c: &mut Criterion) {
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<fused::Wgpu>(&device);
    let mut group = c.benchmark_group("fused_step");
    group
        .sample_size(20)
        .measurement_time(std::time::Duration::from_secs(20));
    bench_step::<Autodiff<BurnFused>>(&mut group, "Autodiff<Fusion<CubeBackend>>");
    bench_step::<Autodiff<fused::Wgpu>>(&mut group, "Autodiff<fused::Wgpu>, all off");
    stats::start(stats::StatsConfig::default());
    bench_step::<Autodiff<fused::Wgpu>>(&mut group, "statistics");
    stats::stop();
    probe::set_op_ranges(true);
    bench_step::<Autodiff<fused::Wgpu>>(&mut group, "op ranges, where the ops run");
    stats::start(stats::StatsConfig::default());
    let attached = launch.attach();
    bench_step::<Autodiff<fused::Wgpu>>(&mut group, "op ranges + statistics, queued");
    stats::stop();
    bench_step::<Autodiff<fused::Wgpu>>(&mut group, "op ranges, queued");
    probe::set_op_ranges(false);
    drop(attached);
    group.finish();
}

/// A step of `B`, warmed up.
fn warm_step<B: AutodiffBackend<Device = WgpuDevice>>(device: &WgpuDevice) -> Step<B> {
    let mut step = Step::<B>::new(device);
    for _ in 0..WARM_UP_STEPS {
        step.run();
    }
    step
}

/// The variants of `fused_step`, interleaved: each sets its switches around its own step.
fn fused_step_interleaved() {
    type Ours = Autodiff<fused::Wgpu>;
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<fused::Wgpu>(&device);
    let statistics = || Some(stats::StatsConfig::default());
    let queued = |statistics: Option<stats::StatsConfig>| {
        let launch = launch.clone();
        let mut step = warm_step::<Ours>(&device);
        move || {
            let attached = launch.attach();
            let time = timed_with(statistics, true, || step.run());
            drop(attached);
            time
        }
    };
    let mut burn = warm_step::<Autodiff<BurnFused>>(&device);
    let mut all_off = warm_step::<Ours>(&device);
    let mut with_statistics = warm_step::<Ours>(&device);
    let mut ranges_here = warm_step::<Ours>(&device);
    interleaved::compare(
        "fused_step, interleaved",
        60,
        &mut [
            Variant::new("Autodiff<Fusion<CubeBackend>>", || {
                timed_with(None, false, || burn.run())
            }),
            Variant::new("Autodiff<fused::Wgpu>, all off", || {
                timed_with(None, false, || all_off.run())
            }),
            Variant::new("statistics", || {
                timed_with(statistics(), false, || with_statistics.run())
            }),
            Variant::new("op ranges, where the ops run", || {
                timed_with(None, true, || ranges_here.run())
            }),
            Variant::new("op ranges + statistics, queued", queued(statistics())),
            Variant::new("op ranges, queued", queued(None)),
        ],
    );
    stats::reset();
}

criterion_group!(benches, fused_step);

fn main() {
    interleaved::criterion_then(benches, fused_step_interleaved);
}
