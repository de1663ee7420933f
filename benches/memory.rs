//! What memory tracking costs, side by side in one run
//! (`cargo bench --features wgpu --bench memory`; on a machine without GPU, burn's `Wgpu` runs
//! on Mesa's lavapipe).
//!
//! * `per_step`: a training step of the examples' vision model (batch 8) ending with the
//!   session's `finish_iter`, with `[memory] per_step` off and on: on fused Wgpu with its
//!   launch thread given to the session (a device read through CubeCL's `memory_usage`, and
//!   the host's RSS), and on NdArray (the host's RSS and the tracking allocator's count).
//! * `step_end`: the session's `finish_iter` alone, with and without the sample (what a
//!   sample costs, to set against a step's time).
//! * `per_op`: a launch-bound step (a small MLP: forward, backward, Adam) with statistics on,
//!   without and with `[memory] per_op`: on Wgpu with its launch thread attached (each op's
//!   memory read on the device thread, behind its launches), and on NdArray (the tracking
//!   allocator's per-thread counts); on Wgpu also with op ranges on (queued there already, as
//!   in the profile preset).
//!
//! The tracking allocator is this binary's global allocator in every variant (the baselines
//! too): installing it is measured by `--bench overhead`, which does not. The NVTX recorder is
//! its NVTX tool (without one, op ranges do nothing).
//!
//! After criterion's runs, `per_op` again, interleaved (`workloads/interleaved.rs`): one step
//! of each variant per round, each against the same round's step with statistics alone. Those
//! ratios are the figures to compare: on a 2-core machine criterion's variant-after-variant
//! runs drift by more than the differences.

use burn::backend::wgpu::WgpuDevice;
use burn::backend::{Autodiff, NdArray, Wgpu};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn_profiled::config::RuntimeConfig;
use burn_profiled::memory::TrackingAllocator;
use burn_profiled::{LaunchThread, Profiled, Session, fused, probe, stats};
use criterion::{BenchmarkId, Criterion, criterion_group};

nvtx_recorder::install_static!();

#[path = "workloads/vision_step.rs"]
mod vision_step;
use vision_step::{BATCH, Step as VisionStep};

#[allow(dead_code)] // The tiny op is `--bench overhead`'s.
mod workloads;
use workloads::MlpStep;

#[path = "workloads/interleaved.rs"]
mod interleaved;
use interleaved::{Variant, timed_with};

#[global_allocator]
static ALLOCATOR: TrackingAllocator = TrackingAllocator::system();

type Group<'a> = criterion::BenchmarkGroup<'a, criterion::measurement::WallTime>;

/// Steps run before each variant is measured (kernels compile and tune on their first runs).
const WARM_UP_STEPS: usize = 5;

/// A session that only counts steps, or also samples memory at each one's end.
fn session<B: Backend>(
    device: &B::Device,
    per_step: bool,
    launch: Option<LaunchThread>,
) -> (Session, tempfile::TempDir) {
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 0;
    config.memory.per_step = per_step;
    let out = tempfile::tempdir().expect("a temporary directory");
    let mut session = Session::start::<B>(config, device, out.path());
    if let Some(launch) = launch {
        session.set_launch_thread(launch);
    }
    (session, out)
}

fn per_step_variant<B: AutodiffBackend>(
    group: &mut Group<'_>,
    id: &str,
    device: &B::Device,
    per_step: bool,
    launch: Option<LaunchThread>,
) {
    let mut step = VisionStep::<B>::new(device);
    for _ in 0..WARM_UP_STEPS {
        step.run();
    }
    let (mut session, _out) = session::<B>(device, per_step, launch);
    group.bench_function(BenchmarkId::new(id, format!("batch {BATCH}")), |bench| {
        bench.iter(|| {
            step.run();
            let _ = session.finish_iter();
        })
    });
}

fn per_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("per_step");
    group
        .sample_size(20)
        .measurement_time(std::time::Duration::from_secs(15));
    let device = WgpuDevice::default();
    type F = Autodiff<fused::Wgpu>;
    let launch = || Some(LaunchThread::cubecl::<fused::Wgpu>(&device));
    per_step_variant::<F>(
        &mut group,
        "fused::Wgpu, memory off",
        &device,
        false,
        launch(),
    );
    per_step_variant::<F>(&mut group, "fused::Wgpu, per step", &device, true, launch());
    type N = Autodiff<Profiled<NdArray>>;
    let cpu = Default::default();
    per_step_variant::<N>(
        &mut group,
        "Profiled<NdArray>, memory off",
        &cpu,
        false,
        None,
    );
    per_step_variant::<N>(&mut group, "Profiled<NdArray>, per step", &cpu, true, None);
    group.finish();
}

/// The end of a step alone, sampled or not: what a sample costs, to set against a step's time.
fn sample(c: &mut Criterion) {
    let mut group = c.benchmark_group("step_end");
    let device = WgpuDevice::default();
    type F = Autodiff<fused::Wgpu>;
    // A step first, so the device has memory to report.
    VisionStep::<F>::new(&device).run();
    for (id, per_step) in [
        ("fused::Wgpu, memory off", false),
        ("fused::Wgpu, per step", true),
    ] {
        let launch = Some(LaunchThread::cubecl::<fused::Wgpu>(&device));
        let (mut session, _out) = session::<F>(&device, per_step, launch);
        group.bench_function(BenchmarkId::from_parameter(id), |bench| {
            bench.iter(|| session.finish_iter())
        });
    }
    type N = Autodiff<Profiled<NdArray>>;
    let cpu = Default::default();
    for (id, per_step) in [("NdArray, memory off", false), ("NdArray, per step", true)] {
        let (mut session, _out) = session::<N>(&cpu, per_step, None);
        group.bench_function(BenchmarkId::from_parameter(id), |bench| {
            bench.iter(|| session.finish_iter())
        });
    }
    group.finish();
}

fn per_op_variant<B: AutodiffBackend>(group: &mut Group<'_>, id: &str, memory: bool) {
    let mut step = MlpStep::<B>::new();
    let device = B::Device::default();
    for _ in 0..WARM_UP_STEPS {
        step.run();
    }
    stats::start(stats::StatsConfig {
        memory,
        ..stats::StatsConfig::default()
    });
    group.bench_function(BenchmarkId::from_parameter(id), |bench| {
        bench.iter(|| {
            step.run();
            let _ = B::sync(&device);
        })
    });
    stats::stop();
    stats::reset();
}

fn per_op(c: &mut Criterion) {
    let mut group = c.benchmark_group("per_op");
    group
        .sample_size(30)
        .measurement_time(std::time::Duration::from_secs(10));
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<Wgpu>(&device);
    let attached = launch.attach();
    type W = Autodiff<Profiled<Wgpu>>;
    per_op_variant::<W>(&mut group, "Profiled<Wgpu>, statistics", false);
    per_op_variant::<W>(
        &mut group,
        "Profiled<Wgpu>, statistics + per-op memory",
        true,
    );
    // As in the profile preset: op ranges queued on the device thread already.
    probe::set_op_ranges(true);
    per_op_variant::<W>(&mut group, "Profiled<Wgpu>, op ranges + statistics", false);
    per_op_variant::<W>(
        &mut group,
        "Profiled<Wgpu>, op ranges + statistics + memory",
        true,
    );
    probe::set_op_ranges(false);
    drop(attached);
    type N = Autodiff<Profiled<NdArray>>;
    per_op_variant::<N>(&mut group, "Profiled<NdArray>, statistics", false);
    per_op_variant::<N>(
        &mut group,
        "Profiled<NdArray>, statistics + per-op memory",
        true,
    );
    group.finish();
}

/// A variant of `per_op` for the interleaved runs: its own warm MLP, statistics (with or
/// without per-op memory) and op ranges switched on around each of its steps.
fn per_op_turn<'a, B: AutodiffBackend>(name: &'a str, memory: bool, ranges: bool) -> Variant<'a> {
    let mut step = MlpStep::<B>::new();
    let device = B::Device::default();
    for _ in 0..WARM_UP_STEPS {
        step.run();
    }
    Variant::new(name, move || {
        let statistics = stats::StatsConfig {
            memory,
            ..stats::StatsConfig::default()
        };
        timed_with(Some(statistics), ranges, || {
            step.run();
            let _ = B::sync(&device);
        })
    })
}

fn per_op_interleaved() {
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<Wgpu>(&device);
    let attached = launch.attach();
    type W = Autodiff<Profiled<Wgpu>>;
    interleaved::compare(
        "per_op on Wgpu (launch thread attached), interleaved",
        150,
        &mut [
            per_op_turn::<W>("Profiled<Wgpu>, statistics", false, false),
            per_op_turn::<W>("Profiled<Wgpu>, statistics + per-op memory", true, false),
            per_op_turn::<W>("Profiled<Wgpu>, op ranges + statistics", false, true),
            per_op_turn::<W>(
                "Profiled<Wgpu>, op ranges + statistics + memory",
                true,
                true,
            ),
        ],
    );
    drop(attached);
    type N = Autodiff<Profiled<NdArray>>;
    interleaved::compare(
        "per_op on NdArray, interleaved",
        2000,
        &mut [
            per_op_turn::<N>("Profiled<NdArray>, statistics", false, false),
            per_op_turn::<N>("Profiled<NdArray>, statistics + per-op memory", true, false),
        ],
    );
    stats::reset();
}

criterion_group!(benches, per_step, sample, per_op);

fn main() {
    interleaved::criterion_then(benches, per_op_interleaved);
}
