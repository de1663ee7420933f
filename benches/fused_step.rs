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

use burn::backend::Autodiff;
use burn::backend::wgpu::{WgpuDevice, WgpuRuntime};
use burn::tensor::backend::AutodiffBackend;
use burn_profiled::{LaunchThread, fused, probe, stats};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

#[path = "workloads/vision_step.rs"]
mod vision_step;
use vision_step::{BATCH, Step};

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

criterion_group!(benches, fused_step);
criterion_main!(benches);
