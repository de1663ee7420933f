//! A profiling session on a Burn 0.22 device: a [`RuntimeConfig`] applied to a training loop,
//! from the first step to the run directory, with every block the device's fusion server runs
//! recorded as an op.

use std::any::TypeId;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use burn::tensor::Device;
use burn_fusion::observer::FusionObservation;
use burn_profiled_core::DeviceSync;
use burn_profiled_core::config::RuntimeConfig;
use burn_profiled_core::context::device::{self as core_device, DeviceKey};
use burn_profiled_core::context::memory::DeviceMemory;
use burn_profiled_core::recorder::RunStopped;
use burn_profiled_core::recorder::{self, RunIdentity, RunRecorder, RunSummary};

use crate::blocks::BlockRecorder;

/// The Burn version this edition is built against (pinned in its Cargo.toml).
pub const BURN_VERSION: &str = "0.22.1";

/// A run under a [`RuntimeConfig`] on one device: tools enabled at the start, per-op tools
/// switched on when warm-up ends, artefacts written at the end; while it lives, every block the
/// device's fusion server runs is an op.
pub struct Session {
    recorder: RunRecorder,
    device: Device,
    blocks: Arc<BlockRecorder>,
    /// Keeps the observer installed while the session lives.
    _observation: FusionObservation,
    /// Whether the session has said that the device's ops are not visible.
    told_ops_invisible: bool,
    /// Marks the session live until it is finished or dropped.
    _live: Live,
}

/// Whether a session is live in this process: a second one would observe every block twice.
static LIVE: AtomicBool = AtomicBool::new(false);

/// A live session's mark, taken off when the session ends.
struct Live;

impl Drop for Live {
    fn drop(&mut self) {
        LIVE.store(false, Ordering::SeqCst);
    }
}

/// What a session says once when it sees none of the device's ops, and what still works.
fn ops_invisible_note(device: &Device, why: &str) -> String {
    format!(
        "burn-profiled: the ops of {} are not visible ({why}): the op table, the \
         timeline and NVTX op ranges stay empty. The stopwatch, user ranges, memory per step and \
         the run directory work as usual. Ops are visible on CubeCL devices with fusion on \
         (burn's default for wgpu, CUDA, ROCm, Metal and Vulkan).",
        device_label(device)
    )
}

/// A device's name in the run's tables, warnings and files: `wgpu:DefaultDevice`, `cuda:0`,
/// from Burn's `Debug` of the device without autodiff (the whole of it where its shape is
/// not the one known).
pub(crate) fn device_label(device: &Device) -> String {
    let dispatch = format!("{:?}", device.clone().without_autodiff().as_dispatch());
    label_of(&dispatch).unwrap_or(dispatch)
}

/// `wgpu:DefaultDevice` of `Cube(Wgpu(WgpuDevice { kind: DefaultDevice, backend: Auto }))`,
/// `cuda:0` of `Cube(Cuda(CudaDevice { index: 0 }))`, `ndarray:Cpu` of `NdArray(Cpu)`.
fn label_of(dispatch: &str) -> Option<String> {
    let inner = (dispatch.strip_prefix("Cube("))
        .map_or(dispatch, |rest| rest.strip_suffix(')').unwrap_or(rest));
    let (backend, device) = inner.split_once('(')?;
    let device = device.strip_suffix(')')?;
    let detail = match device.split_once('{') {
        // A struct: its first field's value.
        Some((_, fields)) => {
            let first = fields.trim_end_matches('}').split(',').next()?;
            first.split_once(':')?.1.trim().to_owned()
        }
        None => device.trim().to_owned(),
    };
    let backend = backend.trim().to_lowercase();
    match detail.is_empty() || backend.is_empty() {
        true => None,
        false => Some(format!("{backend}:{detail}")),
    }
}

/// Burn's name for what `device` runs on, as `run.json` says it: `autodiff<fusion<cube>>`.
fn backend_name(device: &Device) -> String {
    let dispatch = format!("{:?}", device.clone().without_autodiff().as_dispatch());
    let backend = match dispatch.split('(').next() {
        Some("Cube") => "fusion<cube>".to_owned(),
        Some(other) => other.to_lowercase(),
        None => dispatch,
    };
    if device.is_autodiff() {
        format!("autodiff<{backend}>")
    } else {
        backend
    }
}

impl Session {
    /// Enables the tools `config` asks for on `device`, and keeps `out_dir` for the artefacts.
    /// With `[dump] enabled`, the process-wide dumper ([`dump::global`](crate::dump::global))
    /// writes to `[dump] dir` (default `out_dir/dumps`), or compares with what is there when
    /// `[dump] compare` is set. Says once, on stderr, when `device` is one whose ops burn-fusion's observer does not see
    /// (Flex, NdArray, a CubeCL device with fusion off).
    ///
    /// # Panics
    /// If another session is live in this process (on this device or another: the tools and
    /// the observer are process-wide), or if a tool it enables was enabled before in this
    /// process (the tools are enable-once).
    pub fn start(config: RuntimeConfig, device: &Device, out_dir: impl Into<PathBuf>) -> Self {
        if LIVE.swap(true, Ordering::SeqCst) {
            panic!(
                "burn_profiled_022::Session::start: a session is already live in this process; \
                 finish it (Session::finish) before starting another, or profile both devices \
                 in one run"
            );
        }
        let live = Live;
        let mut config = config;
        if config.stats.call_sites {
            // Turned off, so that run.json says what ran and no table of call sites, all `-`,
            // nor flame graph of op names is written.
            eprintln!(
                "burn-profiled: [stats] call_sites: none on Burn 0.22, whose ops run on its fusion \
                 thread, away from the stack of the code that called them; a user range around a \
                 module's forward (nvtx::scope) gives its blocks that phase instead"
            );
            config.stats.call_sites = false;
        }
        // The fusion thread launches every kernel on Burn 0.22: steps have no launch thread to
        // run on. Off without a word (the presets turn it on for Burn 0.21's CubeCL backends),
        // so that run.json says what ran.
        config.nvtx.steps_on_launch_thread = false;
        if config.numerics.enabled() {
            eprintln!(
                "burn-profiled: [numerics] on Burn 0.22: the loss (Session::record_loss) and the \
                 dumper's tensors and gradients are fingerprinted and checked, not each block's \
                 outputs: Burn 0.22's hooks hand over each block's IR, not its data \
                 (docs/guide/numerics.md)"
            );
        }
        if let Some([step, seq]) = config.numerics.capture.take() {
            // Turned off, so that run.json says what ran.
            eprintln!(
                "burn-profiled: [numerics] capture = [{step}, {seq}] names an op call, and Burn \
                 0.22 records none: ignored (on Burn 0.21, `Profiled<B>` and `fused::*` record \
                 every op and capture it)"
            );
        }
        // Before any observer: the calibration's ops are not the run's.
        recorder::calibrate(&config, || crate::calibration::calibrate(device));
        let name = device_label(device);
        let sync_device = device.clone();
        let sync = DeviceSync::custom(name.clone(), move || {
            // A failed sync resurfaces at the next read of the device; timing goes on.
            let _ = sync_device.sync();
        });
        let device_id = core_device::id(
            DeviceKey {
                kind: TypeId::of::<Device>(),
                number: 0,
            },
            || name.clone(),
        );
        burn_profiled_core::trace::set_process_devices(vec![name.clone()]);
        let backend = backend_name(device);
        let fused = backend.contains("fusion<");
        if !fused {
            eprintln!(
                "{}",
                ops_invisible_note(device, "it is not a CubeCL device, whose ops fusion runs")
            );
        }
        let per_op_memory = (config.memory.per_op && config.stats.enabled)
            .then(|| format!("logical memory {name}"));
        let identity = RunIdentity {
            crate_version: env!("CARGO_PKG_VERSION"),
            burn_version: BURN_VERSION,
            backend,
            device: name,
            // CubeCL's: every block runs after its registration returned.
            asynchronous: fused,
        };
        let launches = fused.then(|| {
            // What this thread queued runs first: see `runners::of`.
            let _ = device.sync();
            let (fusion, compute) = crate::runners::of(device);
            crate::phases::follow(fusion);
            compute
        });
        let phases = config.stats.enabled || config.trace.enabled || config.memory.graph;
        let blocks = Arc::new(BlockRecorder::new(
            device_id,
            phases,
            launches,
            per_op_memory,
        ));
        let observation = FusionObservation::new(blocks.clone());
        // Device time through CubeCL's launch observer, on devices whose launches it sees.
        let device_time = fused.then(|| {
            Box::new(crate::device_time::start) as burn_profiled_core::recorder::DeviceTimeStart
        });
        let recorder = RunRecorder::start_timing_devices_with(
            config,
            identity,
            sync,
            out_dir.into(),
            device_time,
        );
        if fused {
            // Each block's drops and last reads end its tensors.
            burn_profiled_core::sinks::graph::frees_seen(
                burn_profiled_core::sinks::graph::Frees::Ir,
            );
        }
        Session {
            recorder,
            device: device.clone(),
            blocks,
            _observation: observation,
            told_ops_invisible: !fused,
            _live: live,
        }
    }

    burn_profiled_core::session_accessors!();

    /// With `[memory] per_op`, the bytes of the device's tensors alive now, from the IR (exact
    /// from shapes and dtypes, no padding nor reserve): those made since the session started
    /// and not freed since, once the ops registered so far have run (after
    /// `Device::memory_pool_usage` or a read, for this thread's). `None` without it.
    ///
    /// Tensors dropped on another thread than the one whose ops made them stay live here:
    /// burn-fusion does not report those frees.
    pub fn live_bytes(&self) -> Option<u64> {
        self.blocks.live_bytes()
    }

    /// Ends an iteration: the stopwatch's `finish_iter`, per-op tools on when warm-up ends, the
    /// memory sample of a measured step (`[memory] per_step`: the device's memory pools, read
    /// after the calling thread's queued ops ran), and the memory guards' checks
    /// (`[host] memory_limit_mib`, `[memory] device_limit_mib`).
    ///
    /// Past a memory limit it returns the guard's error, having printed it on stderr (once),
    /// and after an op made a NaN or an Inf with `[numerics] check_finite = "stop"`, that op:
    /// stop the run, and exit with a failure code.
    pub fn finish_iter(&mut self) -> Result<(), RunStopped> {
        if !self.told_ops_invisible && !self.blocks.saw_an_op.load(Ordering::Relaxed) {
            // A step that read nothing left its ops queued in fusion: run them before
            // concluding (once: after this the session has said it, or seen one).
            let _ = self.device.sync();
        }
        if !self.told_ops_invisible && !self.blocks.saw_an_op.load(Ordering::Relaxed) {
            // A CubeCL device whose first step reached no fusion server: fusion is off.
            self.told_ops_invisible = true;
            eprintln!(
                "{}",
                ops_invisible_note(&self.device, "its first step registered no op with fusion")
            );
        }
        let device = &self.device;
        let finished = self.recorder.finish_iter(|| {
            device
                .memory_pool_usage()
                .map(|usage| {
                    vec![(
                        device_label(device),
                        DeviceMemory {
                            allocations: usage.number_allocs,
                            in_use_bytes: usage.bytes_in_use,
                            reserved_bytes: usage.bytes_reserved,
                        },
                    )]
                })
                .unwrap_or_default()
        });
        crate::phases::step_ended(self.recorder.steps());
        finished
    }

    /// Records the step's loss for `[numerics]`, before [`finish_iter`](Self::finish_iter):
    /// its fingerprint in `numerics.jsonl` as a record named `loss`, and `check_finite`
    /// checks it. It reads the loss (a sync) only while `[numerics]` records, and does nothing
    /// otherwise. On Burn 0.22, whose hooks hand over no op's data, the loss and the dumper's
    /// tensors and gradients are what `[numerics]` records: what a Burn 0.22 run and a Burn
    /// 0.21 run of the same model compare on (`burn-profiled numerics`).
    ///
    /// ```no_run
    /// # use burn::tensor::Tensor;
    /// # use burn_profiled_022::Session;
    /// # fn step(session: &mut Session, loss: Tensor<1>) {
    /// session.record_loss(&loss);
    /// session.finish_iter().expect("finite and within the memory limits");
    /// # }
    /// ```
    pub fn record_loss<const D: usize>(&self, loss: &burn::tensor::Tensor<D>) {
        burn_profiled_core::sinks::numerics::record_loss(|| {
            let data = loss.clone().try_into_data();
            let data = data.map_err(|error| format!("{error:?}"))?;
            crate::dump::tensors::array_at(data, "loss").map_err(|error| error.to_string())
        });
    }

    /// Syncs the device, stops the per-op tools, prints the stopwatch report and the op table,
    /// and writes `trace.json`, `ops.json` and `run.json` (those whose tools ran) to the output
    /// directory, with `ops_by_shapes.json` when statistics are kept by shapes.
    pub fn finish(self) -> std::io::Result<RunSummary> {
        self.recorder.sync().sync();
        // From the IR, frees are the `drop` blocks' and the last readers': the growth warning
        // names the blocks whose outputs are still alive instead.
        burn_profiled_core::memory::set_live_blocks(
            &device_label(&self.device),
            self.blocks.live_blocks(),
        );
        let unsized_tensors = self.blocks.unsized_tensors();
        if unsized_tensors > 0 {
            eprintln!(
                "burn-profiled: {unsized_tensors} tensors had a sub-byte quantized dtype, whose \
                 size per element the IR does not give: per-op memory counts them as 0 bytes"
            );
        }
        self.recorder.finish()
    }
}

#[cfg(test)]
mod label_tests {
    use super::label_of;

    /// A device is named by its backend and its first field, not Burn's whole `Debug`.
    #[test]
    fn devices_are_labelled_by_backend_and_index() {
        let cases = [
            (
                "Cube(Wgpu(WgpuDevice { kind: DefaultDevice, backend: Auto }))",
                "wgpu:DefaultDevice",
            ),
            (
                "Cube(Wgpu(WgpuDevice { kind: DiscreteGpu(1), backend: Vulkan }))",
                "wgpu:DiscreteGpu(1)",
            ),
            ("Cube(Cuda(CudaDevice { index: 0 }))", "cuda:0"),
            ("NdArray(Cpu)", "ndarray:Cpu"),
        ];
        for (debug, label) in cases {
            assert_eq!(label_of(debug).as_deref(), Some(label), "{debug}");
        }
        assert_eq!(label_of("Unavailable"), None, "the whole Debug is kept");
    }
}
