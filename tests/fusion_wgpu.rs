//! `Profiled` inside burn's fusion, on CubeCL's real threads: burn's `Wgpu` on Mesa's lavapipe
//! (a Vulkan driver on the CPU; `.ci/run` installs it). Run with
//! `cargo test --features wgpu,fusion-inspector --test fusion_wgpu` (without
//! `fusion-inspector`, the check against burn's `FusionInspector` is left out).

use std::sync::{Arc, Mutex};

use burn::backend::Autodiff;
use burn::backend::wgpu::{WgpuDevice, WgpuRuntime};
use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Int, Tensor, TensorData};
use burn_cubecl::CubeBackend;
use burn_fusion::Fusion;
use burn_profiled::probe;
use burn_profiled::stats::{self, GroupBy, StatsConfig};
use burn_profiled::{LaunchThread, fused, nvtx};
use nvtx_recorder::Event;

#[path = "../examples/common/vision.rs"]
mod vision;

mod support;
use support::Started;
use support::nesting::{
    Launching, device_thread, launches_outside_their_ranges, on_four_threads, op_ranges, thread_ops,
};

nvtx_recorder::install_static!();

/// burn's own fused Wgpu, without `Profiled`.
type BurnFused = Fusion<CubeBackend<WgpuRuntime, f32, i32, u32>>;

/// The switches and the registry are process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// User ranges, enabled once for the process.
fn user_ranges() {
    static RANGES: std::sync::Once = std::sync::Once::new();
    RANGES.call_once(|| nvtx::enable(nvtx::RangeConfig::new()));
}

/// Losses of each step, then every parameter value after the last step.
fn train<B: AutodiffBackend>(steps: usize) -> (Vec<f32>, Vec<f32>) {
    let device = B::Device::default();
    B::seed(&device, 42);
    let mut model = vision::VisionModel::<B>::new(&device);
    let mut optim = AdamConfig::new().init();
    let mut losses = Vec::new();
    for step in 0..steps {
        let (images, labels) = vision::generated_batch(step, 4);
        let images = Tensor::<B, 4>::from_data(images, &device);
        let labels = Tensor::<B, 1, Int>::from_data(labels, &device);
        let logits = model.forward(images, false);
        let loss = CrossEntropyLossConfig::new()
            .init(&device)
            .forward(logits, labels);
        losses.push(loss.clone().into_data().to_vec::<f32>().unwrap()[0]);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(1e-2, model, grads);
    }
    let record = model.into_record();
    let params = [
        record.conv1.weight.val().into_data(),
        record.conv2.weight.val().into_data(),
        record.head.weight.val().into_data(),
    ];
    let params = params
        .iter()
        .flat_map(|d| d.to_vec::<f32>().unwrap())
        .collect();
    (losses, params)
}

fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// `Profiled` inside fusion must not change what fusion computes: same fused blocks, same
/// kernels, the same bits, with everything off and with op ranges and statistics on.
#[test]
fn training_on_fused_profiled_wgpu_is_bit_identical_to_burns_fused_wgpu() {
    let _serial = serial();
    let (plain_losses, plain_params) = train::<Autodiff<BurnFused>>(3);
    assert!(
        plain_losses.iter().all(|l| l.is_finite()),
        "{plain_losses:?}"
    );

    let (losses, params) = train::<Autodiff<fused::Wgpu>>(3);
    assert_eq!(bits(&losses), bits(&plain_losses), "losses, everything off");
    assert_eq!(
        bits(&params),
        bits(&plain_params),
        "weights, everything off"
    );

    probe::set_op_ranges(true);
    stats::start(StatsConfig {
        by_shapes: true,
        ..StatsConfig::default()
    });
    let (losses, params) = train::<Autodiff<fused::Wgpu>>(3);
    stats::stop();
    probe::set_op_ranges(false);
    let rows = stats::snapshot().rows(GroupBy::Op);
    stats::reset();
    assert_eq!(bits(&losses), bits(&plain_losses), "losses, profiled");
    assert_eq!(bits(&params), bits(&plain_params), "weights, profiled");
    assert!(
        rows.iter()
            .any(|row| row.op.starts_with("fused elementwise[")),
        "the backward's elementwise ops fuse too: {:?}",
        rows.iter().map(|row| &row.op).collect::<Vec<_>>()
    );
}

/// Ranges must nest: no pop without a push, none left open.
fn assert_balanced(ranges: &[String], what: &str) {
    let mut depth = 0i64;
    for range in ranges {
        depth += if range == "pop" { -1 } else { 1 };
        assert!(depth >= 0, "{what}: a pop without its push in {ranges:?}");
    }
    assert_eq!(depth, 0, "{what}: ranges left open in {ranges:?}");
}

fn elementwise_chain<B: Backend>(device: &B::Device) -> Tensor<B, 2> {
    let x = Tensor::<B, 2>::from_floats([[1.0, 2.0], [3.0, 4.0]], device);
    (x.exp() * 2.0) + 1.0
}

/// `x` convolved with `weight`: stride 1, no padding, no bias (fusion runs it unfused).
fn conv<B: Backend>(x: Tensor<B, 4>, weight: Tensor<B, 4>) -> Tensor<B, 4> {
    let options = burn::tensor::ops::ConvOptions::new([1, 1], [0, 0], [1, 1], 1);
    burn::tensor::module::conv2d(x, weight, None, options)
}

/// The elementwise chain (one fused block), then a convolution (run unfused).
fn chain_then_conv<B: Backend>(device: &B::Device) -> Tensor<B, 4> {
    let x = elementwise_chain::<B>(device).reshape([1, 1, 2, 2]);
    conv(x, Tensor::<B, 4>::ones([1, 1, 2, 2], device))
}

/// The op table by op and phase of what `work` runs, with statistics kept around it alone.
fn rows_by_phase(work: impl FnOnce()) -> Vec<stats::Row> {
    stats::start(StatsConfig::default());
    work();
    stats::stop();
    let rows = stats::snapshot().rows(GroupBy::OpAndPhase);
    stats::reset();
    rows
}

/// Nsight Systems projects a kernel onto the range open on the thread that launched it: the
/// fused blocks' and unfused ops' ranges must be on CubeCL's device thread, balanced, under
/// the names the op table gives them.
#[test]
fn fused_blocks_and_unfused_ops_have_their_ranges_on_the_device_thread() {
    let _serial = serial();
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<fused::Wgpu>(&device);
    assert!(
        !launch.runs_steps(),
        "a fused backend's steps stay where they are called"
    );
    let runner = device_thread(&launch);
    let caller = nvtx_recorder::current_tid();
    let expected = chain_then_conv::<BurnFused>(&device).into_data();

    let attached = launch.attach().expect("CubeCL's launch thread has a queue");
    let before = nvtx_recorder::events().len();
    stats::start(StatsConfig::default());
    probe::set_op_ranges(true);
    let result = chain_then_conv::<fused::Wgpu>(&device).into_data();
    probe::set_op_ranges(false);
    stats::stop();
    drop(attached);
    let events = nvtx_recorder::events()[before..].to_vec();
    let rows = stats::snapshot().rows(GroupBy::Op);
    stats::reset();

    assert_eq!(result, expected, "results change under Profiled");
    let on_runner: Vec<Event> = events.iter().filter(|e| e.tid == runner).cloned().collect();
    let ranges = op_ranges(&on_runner);
    assert_balanced(&ranges, "the device thread");
    assert!(
        ranges
            .iter()
            .any(|name| name == "fused elementwise[exp, mul_scalar, add_scalar]"),
        "the chain is one fused block, named for its ops: {ranges:?}"
    );
    assert!(
        ranges.iter().any(|name| name == "conv2d"),
        "conv2d runs unfused: {ranges:?}"
    );
    let elsewhere: Vec<Event> = events.iter().filter(|e| e.tid != runner).cloned().collect();
    assert_eq!(
        op_ranges(&elsewhere),
        Vec::<String>::new(),
        "every op range is queued on the device thread (the caller is {caller})"
    );
    let mut named: Vec<&str> = ranges
        .iter()
        .filter(|r| *r != "pop")
        .map(String::as_str)
        .collect();
    named.sort_unstable();
    named.dedup();
    let mut table: Vec<&str> = rows.iter().map(|row| row.op.as_str()).collect();
    table.sort_unstable();
    assert_eq!(named, table, "NVTX and the op table name the same ops");
}

/// What burn-fusion says it fused (its `FusionInspector`) is what the blocks are named for.
#[cfg(feature = "fusion-inspector")]
#[test]
fn block_names_agree_with_burns_fusion_inspector() {
    use burn_fusion::inspect::{BlockKind, FusionInspector};
    let _serial = serial();
    let device = WgpuDevice::default();
    let inspector = FusionInspector::install(burn_backend::StreamId::current());
    let started = Arc::new(Started::default());
    let observing = probe::observe(started.clone());
    let x = Tensor::<fused::Wgpu, 2>::from_floats([[1.0, -2.0], [3.0, 4.0]], &device);
    let y = (x.clone().abs().sqrt() + x.clone()).sum_dim(1) * 3.0;
    let z = elementwise_chain::<fused::Wgpu>(&device) - x;
    let _ = (y.into_data(), z.into_data());
    drop(observing);
    let reports = inspector.drain();

    let inspected: Vec<(String, usize)> = reports
        .iter()
        .flat_map(|report| report.blocks.iter())
        .filter_map(|block| match block.kind {
            BlockKind::Fused { name, .. } => Some((kind_of(name), block.operations.len())),
            BlockKind::Unfused => None,
        })
        .collect();
    let names: Vec<&str> = started.0.lock().unwrap().iter().map(|(n, _)| *n).collect();
    let recorded: Vec<(String, usize)> = names
        .into_iter()
        .filter_map(|name| name.strip_prefix("fused "))
        .map(|name| {
            let (kind, ops) = name.split_once('[').expect("fused <kind>[<ops>]");
            let ops = ops.trim_end_matches(']');
            let count = match ops.rsplit_once(", +") {
                Some((shown, more)) => shown.split(", ").count() + more.parse::<usize>().unwrap(),
                None => ops.split(", ").count(),
            };
            (kind.to_owned(), count)
        })
        .collect();
    assert!(
        !inspected.is_empty(),
        "burn-fusion fused nothing: {reports:#?}"
    );
    assert_eq!(
        recorded, inspected,
        "blocks recorded against blocks burn-fusion ran"
    );
}

#[cfg(feature = "fusion-inspector")]
fn kind_of(fuser: &str) -> String {
    match fuser {
        "ElementWise" => "elementwise".to_owned(),
        "ReduceBroadcasted" => "reduce_broadcasted".to_owned(),
        other => other.to_lowercase(),
    }
}

/// `<op> in <phase>` for each row of `rows` (by op and phase) whose op `keep` keeps, sorted:
/// rows come longest first, and which op took longer is the machine's business.
fn in_phases(rows: &[stats::Row], keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut kept: Vec<String> = rows
        .iter()
        .filter(|row| keep(&row.op))
        .map(|row| format!("{} in {}", row.op, row.phase.clone().unwrap_or_default()))
        .collect();
    kept.sort_unstable();
    kept
}

/// A block counts its ops' work from the tensors of its run: a matmul and the elementwise ops
/// after it give their FLOPs whether fusion runs them in one block or several.
#[test]
fn fused_blocks_count_the_work_of_their_ops() {
    let _serial = serial();
    let device = WgpuDevice::default();
    stats::start(StatsConfig {
        work: true,
        ..StatsConfig::default()
    });
    let x = Tensor::<fused::Wgpu, 2>::ones([8, 8], &device);
    let y = x.clone().matmul(x).exp().mul_scalar(0.5).add_scalar(1.0);
    let _ = y.into_data();
    stats::stop();
    let rows = stats::snapshot().rows(GroupBy::Op);
    stats::reset();

    let counted: u64 = rows.iter().filter_map(|row| row.flops.flatten()).sum();
    assert_eq!(
        counted,
        2 * 8 * 8 * 8 + 3 * 8 * 8,
        "every block's FLOPs, summed over its ops: {rows:#?}"
    );
    let unknown: Vec<&str> = rows
        .iter()
        .filter(|row| row.flops == Some(None))
        .map(|row| row.op.as_str())
        .collect();
    assert_eq!(unknown, Vec::<&str>::new(), "every op has a count");
    let block = rows
        .iter()
        .find(|row| row.op == "fused elementwise[exp, mul_scalar, add_scalar]")
        .expect("the ops after the matmul are one block");
    assert_eq!(
        block.bytes,
        Some(Some(2 * 8 * 8 * 4)),
        "the block reads x and writes its result; its intermediates stay in registers: {rows:#?}"
    );
}

/// A forward's last ops run when the next phase's first ops (or its read) flush them: the
/// block still belongs to the phase its ops were registered in.
#[test]
fn a_block_flushed_in_the_next_phase_keeps_the_phase_it_was_registered_in() {
    let _serial = serial();
    let device = WgpuDevice::default();
    user_ranges();
    let mut read = Vec::new();
    let rows = rows_by_phase(|| {
        let forward = nvtx::range("forward");
        let x = Tensor::<fused::Wgpu, 2>::from_floats([[1.0, 2.0], [3.0, 4.0]], &device);
        let y = (x.exp() * 2.0) + 1.0; // registered, not run: nothing reads it yet
        drop(forward);
        let _backward = nvtx::range("backward");
        read.push(y.clone().into_data()); // the read flushes the forward's block here
        read.push((y.log() * 3.0).into_data()); // a block of the backward's own
    });
    for data in read {
        assert_eq!(data.to_vec::<f32>().unwrap().len(), 4);
    }

    let blocks = in_phases(&rows, |op| op.starts_with("fused "));
    assert_eq!(
        blocks,
        [
            "fused elementwise[exp, mul_scalar, add_scalar] in forward",
            "fused elementwise[log, mul_scalar] in backward"
        ],
        "each block in the phase its ops were registered in"
    );
}

/// Ops fusion runs unfused run soon after they are registered, on the fusion thread: they get
/// the phase their thread is in then, not that of the last fused block.
#[test]
fn an_unfused_op_gets_the_phase_its_thread_is_in() {
    let _serial = serial();
    let device = WgpuDevice::default();
    user_ranges();
    let x = Tensor::<fused::Wgpu, 4>::ones([1, 1, 3, 3], &device);
    let rows = rows_by_phase(|| {
        let forward = nvtx::range("forward");
        let _ = chain_then_conv::<fused::Wgpu>(&device).into_data();
        drop(forward);
        let _backward = nvtx::range("backward");
        // No fused block runs in this phase before the convolution.
        let weight = Tensor::<fused::Wgpu, 4>::ones([1, 1, 2, 2], &device);
        let _ = conv(x, weight).into_data();
    });

    let convs = in_phases(&rows, |op| op == "conv2d");
    assert_eq!(convs, ["conv2d in backward", "conv2d in forward"]);
}

/// Holds the fusion thread at the start of the first fused block it runs until released.
#[derive(Default)]
struct HoldFirstBlock {
    released: Mutex<bool>,
    release: std::sync::Condvar,
}

impl HoldFirstBlock {
    fn release(&self) {
        *self.released.lock().unwrap() = true;
        self.release.notify_all();
    }
}

impl probe::OpObserver for HoldFirstBlock {
    fn op_started(&self, op: &'static probe::Op) {
        if op.name().starts_with("fused ") {
            let released = self.released.lock().unwrap();
            let timeout = std::time::Duration::from_secs(60);
            drop(
                self.release
                    .wait_timeout_while(released, timeout, |released| !*released),
            );
        }
    }
    fn op_finished(&self, _op: &'static probe::Op) {}
}

/// The fusion thread lags behind the thread registering ops (far behind when the device's
/// queue is full): an op fusion runs unfused after a fused block gets the block's phase, not
/// the phase the registering thread has gone on to.
#[test]
fn an_unfused_op_run_after_its_phase_ended_gets_the_phase_of_the_block_before_it() {
    let _serial = serial();
    let device = WgpuDevice::default();
    user_ranges();
    let held = Arc::new(HoldFirstBlock::default());
    let rows = rows_by_phase(|| {
        let _observing = probe::observe(held.clone());
        let forward = nvtx::range("forward");
        let y = chain_then_conv::<fused::Wgpu>(&device);
        drop(forward);
        let _backward = nvtx::range("backward");
        // Only now can the chain's block, and the convolution after it, run.
        held.release();
        let _ = y.into_data();
    });

    let ran = in_phases(&rows, |op| op == "conv2d" || op.starts_with("fused "));
    assert_eq!(
        ran.len(),
        2,
        "one block and the convolution, each once: {ran:?}"
    );
    assert!(
        ran.iter().all(|row| row.ends_with(" in forward")),
        "both in the phase they were registered in: {ran:?}"
    );
}

/// A block can fuse the last ops of one phase with the first of the next: the ops after it
/// were registered after its last op, and get that op's phase.
#[test]
fn an_unfused_op_after_a_block_of_two_phases_gets_the_phase_of_the_blocks_last_op() {
    let _serial = serial();
    let device = WgpuDevice::default();
    user_ranges();
    let x = Tensor::<fused::Wgpu, 4>::from_floats([[[[1.0, 2.0], [3.0, 4.0]]]], &device);
    let weight = Tensor::<fused::Wgpu, 4>::ones([1, 1, 2, 2], &device);
    let _ = (x.clone().into_data(), weight.clone().into_data());
    let rows = rows_by_phase(|| {
        let forward = nvtx::range("forward");
        let y = x.exp() * 2.0;
        drop(forward);
        let _backward = nvtx::range("backward");
        let _ = conv(y + 1.0, weight).into_data();
    });

    let ran = in_phases(&rows, |op| op == "conv2d" || op.starts_with("fused "));
    assert_eq!(
        ran,
        [
            "conv2d in backward",
            "fused elementwise[exp, mul_scalar, add_scalar] in forward"
        ]
    );
}

/// A read runs everything registered before it: an unfused op after it, before any block, is
/// not the last block's, but gets the phase its stream is in.
#[test]
fn an_unfused_op_after_a_read_does_not_get_the_phase_of_the_block_before_the_read() {
    let _serial = serial();
    let device = WgpuDevice::default();
    user_ranges();
    let x = Tensor::<fused::Wgpu, 4>::ones([1, 1, 3, 3], &device);
    let weight = Tensor::<fused::Wgpu, 4>::ones([1, 1, 2, 2], &device);
    let _ = (x.clone().into_data(), weight.clone().into_data());
    let rows = rows_by_phase(|| {
        let forward = nvtx::range("forward");
        let _ = (x.clone().exp() * 2.0).into_data();
        drop(forward);
        let _backward = nvtx::range("backward");
        let _ = conv(x, weight).into_data();
    });

    let ran = in_phases(&rows, |op| op == "conv2d" || op.starts_with("fused "));
    assert_eq!(
        ran,
        [
            "conv2d in backward",
            "fused elementwise[exp, mul_scalar] in forward"
        ]
    );
}

/// Ops fusion does not fuse run later on the fusion thread: they are recorded there, when
/// they run, under their Burn names.
#[test]
fn an_unfused_op_is_recorded_when_the_fusion_thread_runs_it() {
    let _serial = serial();
    let device = WgpuDevice::default();
    let caller = nvtx_recorder::current_tid();
    let started = Arc::new(Started::default());
    let observing = probe::observe(started.clone());
    let x = Tensor::<fused::Wgpu, 4>::ones([1, 1, 4, 4], &device);
    let weight = Tensor::<fused::Wgpu, 4>::ones([1, 1, 3, 3], &device);
    let y = conv(x, weight);
    let registered = started.0.lock().unwrap().clone();
    let _ = y.into_data();
    drop(observing);
    let ops = started.0.lock().unwrap().clone();

    assert!(
        !registered.iter().any(|(name, _)| *name == "conv2d"),
        "conv2d was recorded when it was registered: {registered:?}"
    );
    let conv = ops.iter().find(|(name, _)| *name == "conv2d");
    let (_, tid) = conv.unwrap_or_else(|| panic!("conv2d ran unrecorded: {ops:?}"));
    assert_ne!(
        *tid, caller,
        "conv2d ran on the fusion thread, not the caller's"
    );
}

/// A step on the device thread of a fused backend would deadlock: it is refused, saying why
/// and what to do instead.
#[test]
fn a_step_on_a_fused_backends_device_thread_is_refused_with_the_reason() {
    let _serial = serial();
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<fused::Wgpu>(&device);
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| launch.run(|| 1)))
        .expect_err("run refuses");
    let message = refused
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.starts_with("LaunchThread::run on `fusion<profiled<cubecl<wgpu"),
        "{message}"
    );
    assert!(
        message.contains("a fused backend: a read or sync in the step would wait"),
        "{message}"
    );
    assert!(
        message.contains("Run the step where it is called"),
        "{message}"
    );
}

/// A data loader and a training loop on one fused device: the fusion thread runs every
/// thread's blocks, and the threads' own ops (tensors from data) run where they are called,
/// all queuing their ranges on the one device thread. Each op must still hold its own
/// launches, and the ranges stay nested.
#[test]
fn ops_of_four_threads_on_one_fused_device_keep_their_launches_in_their_own_ranges() {
    let _serial = serial();
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<fused::Wgpu>(&device);
    // The fused launch thread refuses work; the marks go through the unfused one's runner.
    let marks = LaunchThread::cubecl::<CubeBackend<WgpuRuntime, f32, i32, u32>>(&device);
    let runner = device_thread(&launch);
    let expected: Vec<TensorData> = (0..4)
        .map(|t| thread_ops::<BurnFused>(t, &device))
        .collect();
    let before = nvtx_recorder::events().len();
    let attached = launch.attach().expect("CubeCL's launch thread has a queue");
    let observing = probe::observe(Arc::new(Launching(marks)));
    probe::set_op_ranges(true);
    let results = on_four_threads(25, |t| thread_ops::<fused::Wgpu>(t, &device));
    probe::set_op_ranges(false);
    drop(observing);
    drop(attached);

    for (t, results) in results.iter().enumerate() {
        assert!(
            results.iter().all(|r| *r == expected[t]),
            "thread {t}'s results change"
        );
    }
    let on_runner: Vec<Event> = nvtx_recorder::events()[before..]
        .iter()
        .filter(|e| e.tid == runner)
        .cloned()
        .collect();
    let (broken, marks) = launches_outside_their_ranges(&on_runner);
    let blocks = op_ranges(&on_runner)
        .into_iter()
        .filter(|name| name.starts_with("fused "))
        .count();
    assert!(
        blocks >= 4 * 25,
        "every thread's chain ran as a fused block: {blocks}"
    );
    assert!(
        marks >= 4 * 25 * 2,
        "every op's launch reached the device thread: {marks}"
    );
    assert_eq!(broken, Vec::<String>::new(), "on the device thread");
}

/// A session finds `Profiled` outside `Fusion` by the backend's name, to say once that its op
/// times are registration times: the names burn gives must read that way.
#[test]
fn backend_names_tell_profiled_outside_fusion_from_inside() {
    let device = WgpuDevice::default();
    let outside = <Autodiff<burn_profiled::Profiled<BurnFused>> as Backend>::name(&device);
    let inside = <Autodiff<fused::Wgpu> as Backend>::name(&device);
    assert!(
        outside.starts_with("autodiff<profiled<fusion<cubecl<wgpu"),
        "{outside}"
    );
    assert!(
        inside.starts_with("autodiff<fusion<profiled<cubecl<wgpu"),
        "{inside}"
    );
}
