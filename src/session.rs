//! A profiling session: a [`RuntimeConfig`] applied to a training loop, from the first step to
//! the artefacts on disk.
//!
//! ```no_run
//! use burn::backend::{Autodiff, NdArray};
//! use burn_profiled::config::{Preset, RuntimeConfig};
//! use burn_profiled::{Profiled, Session};
//!
//! type B = Autodiff<Profiled<NdArray>>;
//! let device = Default::default();
//! let config = RuntimeConfig::from_env_or(Preset::Train).expect("a valid BURN_PROFILED");
//! let mut session = Session::start::<B>(config, &device, "target/run");
//! for _step in 0..100 {
//!     // ... forward, backward, optimizer, inside stopwatch measurements and nvtx ranges
//!     if let Err(exceeded) = session.finish_iter() {
//!         eprintln!("{exceeded}");
//!         break;
//!     }
//! }
//! session.finish().expect("artefacts written");
//! ```

use std::path::PathBuf;

use burn_backend::Backend;
use burn_profiled_core::recorder::{self, RunIdentity, RunRecorder};

pub use burn_profiled_core::formats::RUN_FORMAT_VERSION;
pub use burn_profiled_core::recorder::{DeviceTimeRun, RunStopped, RunSummary};

use crate::config::RuntimeConfig;
use crate::{AttachedLaunchThread, DeviceSync, LaunchThread, trace};

/// The Burn version this crate is built against (pinned in its Cargo.toml).
pub const BURN_VERSION: &str = "0.21.0";

/// A run under a [`RuntimeConfig`]: tools enabled at the start, per-op tools switched on when
/// warm-up ends, artefacts written at the end.
pub struct Session {
    /// What every edition's session records: tools, steps, memory, the run directory.
    recorder: RunRecorder,
    /// The launch threads of the session's devices, the first one's first.
    launch_threads: Vec<LaunchThread>,
    /// Keeps `launch_threads` attached while the session lives.
    attached: Vec<AttachedLaunchThread>,
}

impl Session {
    /// Enables the tools `config` asks for, syncing `device` where it asks for sync, and keeps
    /// `out_dir` for the artefacts. Start it before or after making the model: on a fused
    /// device it waits for what the program queued there and creates no fusion server the
    /// program does not use (a program that trains on burn's own fused backend too calls
    /// `fused::share_device` between the two runs). With `[dump] enabled`, the process-wide
    /// [`dump::global`](crate::dump::global) dumper writes to `[dump] dir` (default
    /// `out_dir/dumps`), or compares with what is there when `[dump] compare` is set.
    ///
    /// # Panics
    /// If a tool it enables was enabled before in this process (the tools are enable-once).
    pub fn start<B: Backend>(
        config: RuntimeConfig,
        device: &B::Device,
        out_dir: impl Into<PathBuf>,
    ) -> Self {
        Self::start_on_devices::<B>(config, std::slice::from_ref(device), out_dir)
    }

    /// [`start`](Session::start) for a run on several devices (data-parallel training): every
    /// sync the config asks for (stopwatch, user ranges, device time) syncs all `devices`, and
    /// with more than one device the op table is also printed by device and written to
    /// `ops_by_device.json`.
    ///
    /// # Panics
    /// If `devices` is empty, or as [`start`](Session::start).
    pub fn start_on_devices<B: Backend>(
        config: RuntimeConfig,
        devices: &[B::Device],
        out_dir: impl Into<PathBuf>,
    ) -> Self {
        let Some(device) = devices.first() else {
            panic!("Session::start_on_devices needs at least one device");
        };
        // Waits for what the program queued on fused devices, creating no fusion server it
        // does not use (`fused::shared_device` says why), watched for cubecl-common 0.10's
        // deadlock.
        #[cfg(feature = "fusion")]
        if B::name(device).contains("fusion<") {
            devices
                .iter()
                .for_each(crate::fused::settle_for_session::<B>);
        }
        let sync = DeviceSync::all::<B>(devices);
        trace::set_process_devices(devices.iter().map(|d| format!("{d:?}")).collect());
        if let Some(note) = registration_times_note(&B::name(device)) {
            eprintln!("{note}");
        }
        let identity = RunIdentity {
            crate_version: env!("CARGO_PKG_VERSION"),
            burn_version: BURN_VERSION,
            backend: B::name(device),
            device: sync.devices().to_owned(),
            asynchronous: crate::numerics_batch::runs_asynchronously(&B::name(device)),
        };
        recorder::calibrate(&config, || crate::calibration::calibrate::<B>(device));
        let recorder = RunRecorder::start(config, identity, sync.into(), out_dir.into());
        Session {
            recorder,
            launch_threads: Vec::new(),
            attached: Vec::new(),
        }
    }

    burn_profiled_core::session_accessors!();

    /// Gives the session the thread its device's kernels are launched on (for CubeCL backends,
    /// `LaunchThread::cubecl`). With `[nvtx] steps_on_launch_thread`,
    /// [`run_step`](Session::run_step) runs steps there: every op range of a step then contains
    /// its kernels under Nsight Systems. Ops outside steps run where they are called; while the
    /// session lives, the launch thread is [attached](LaunchThread::attach), so their ranges
    /// still contain their kernels.
    ///
    /// With several devices, give the session each device's launch thread: every one is
    /// attached (replacing an earlier one of the same device), so each device's op ranges land
    /// on its own named thread, queued around their kernels. `run_step` then runs steps where
    /// it is called: a step on one device's thread that moves tensors to another device, or
    /// waits for a collective, would wait for a device thread that waits for it.
    ///
    /// ```no_run
    /// # #[cfg(feature = "cuda")] {
    /// use burn::backend::{Autodiff, Cuda};
    /// use burn_profiled::config::{Preset, RuntimeConfig};
    /// use burn_profiled::{LaunchThread, Profiled, Session};
    ///
    /// let device = Default::default();
    /// let mut session = Session::start::<Autodiff<Profiled<Cuda>>>(
    ///     RuntimeConfig::preset(Preset::Profile), &device, "target/run");
    /// session.set_launch_thread(LaunchThread::cubecl::<Cuda>(&device));
    /// for _ in 0..10 {
    ///     session.run_step(|| { /* forward, backward, optimizer */ });
    ///     session.finish_iter().unwrap();
    /// }
    /// session.finish().unwrap();
    /// # }
    /// ```
    pub fn set_launch_thread(&mut self, launch_thread: LaunchThread) {
        // Device memory is read per stream: this thread's is the one its steps allocate in.
        launch_thread.note_stream();
        self.attached
            .retain(|attached| !attached.launch_thread().same_device(&launch_thread));
        self.attached.extend(launch_thread.attach());
        match self
            .launch_threads
            .iter_mut()
            .find(|other| other.same_device(&launch_thread))
        {
            Some(same_device) => *same_device = launch_thread,
            None => self.launch_threads.push(launch_thread),
        }
    }

    /// Runs one training step: on the launch thread when the session has one (one device) that
    /// [runs steps](LaunchThread::runs_steps) (not a fused backend's) and
    /// `[nvtx] steps_on_launch_thread` is set (see [`LaunchThread::run`]: the caller's phase
    /// carries over, a panic reaches the caller), here otherwise (with several devices, see
    /// [`set_launch_thread`](Session::set_launch_thread)).
    pub fn run_step<T: Send>(&self, step: impl FnOnce() -> T + Send) -> T {
        match self.launch_threads.as_slice() {
            [launch]
                if self.recorder.config().nvtx.steps_on_launch_thread && launch.runs_steps() =>
            {
                launch.run(step)
            }
            _ => step(),
        }
    }

    /// Ends an iteration: the stopwatch's `finish_iter`, per-op tools on when warm-up ends, the
    /// memory sample of a measured step (`[memory] per_step`), and the memory guards' checks
    /// (`[host] memory_limit_mib`, `[memory] device_limit_mib`). With device time, every 20
    /// steps: a device sync, then the kernels CUPTI recorded are collected into the statistics.
    ///
    /// Past a memory limit it returns the guard's error, having printed it on stderr (once),
    /// and after an op made a NaN or an Inf with `[numerics] check_finite = "stop"`, that op:
    /// stop the run, and exit with a failure code.
    pub fn finish_iter(&mut self) -> Result<(), RunStopped> {
        let launch_threads = &self.launch_threads;
        self.recorder.finish_iter(|| {
            launch_threads
                .iter()
                .filter_map(|launch| Some((launch.device_name().to_owned(), launch.memory()?)))
                .collect()
        })
    }

    /// Records the step's loss for `[numerics]`, before [`finish_iter`](Self::finish_iter):
    /// its fingerprint in `numerics.jsonl` as a record named `loss`, and `check_finite`
    /// checks it. It reads the loss (a sync) only while `[numerics]` records, and does nothing
    /// otherwise. With the dumper's tensors and gradients, what a Burn 0.21 run and a Burn
    /// 0.22 run of the same model compare on (`burn-profiled numerics`).
    ///
    /// ```no_run
    /// # use burn::backend::{Autodiff, NdArray};
    /// # use burn::tensor::Tensor;
    /// # use burn_profiled::{Profiled, Session};
    /// # fn step(session: &mut Session, loss: Tensor<Autodiff<Profiled<NdArray>>, 1>) {
    /// session.record_loss(&loss);
    /// session.finish_iter().expect("finite and within the memory limits");
    /// # }
    /// ```
    pub fn record_loss<B: Backend, const D: usize>(&self, loss: &burn::tensor::Tensor<B, D>) {
        burn_profiled_core::sinks::numerics::record_loss(|| {
            crate::op_numerics::array(&loss.clone().into_data())
                .ok_or_else(|| format!("its dtype {:?} has no fingerprint", loss.dtype()))
        });
    }

    /// Stops the per-op tools, prints the stopwatch report and the op table, and writes
    /// `trace.json`, `ops.json` and `run.json` (those whose tools ran) to the output directory,
    /// with `ops_by_shapes.json` when statistics are kept by shapes and `ops_by_device.json`
    /// with several devices.
    pub fn finish(mut self) -> std::io::Result<RunSummary> {
        // What is still queued ends inside the capture and while device time records: the
        // device's work, then what the ops queued on the launch threads after it, such as the
        // closing sync's range and tag (detaching waits for them).
        self.recorder.sync().sync();
        drop(std::mem::take(&mut self.attached));
        self.recorder.finish()
    }
}

/// What a session on `Profiled` outside `Fusion` (backend name `backend`) says once at its
/// start: that it times registrations, and what to use instead.
fn registration_times_note(backend: &str) -> Option<String> {
    backend.contains("profiled<fusion<").then(|| {
        format!(
            "burn-profiled: `{backend}` has Profiled outside Fusion: its op times are the times \
             ops took to be registered, and the fused kernels run later, inside whichever op \
             flushed them. To see fused blocks and their kernels, use \
             `burn_profiled::fused::Cuda` or `burn_profiled::fused::Wgpu` (feature `fusion`), \
             Profiled inside Fusion."
        )
    })
}

#[cfg(test)]
mod registration_note_tests {
    use super::registration_times_note;

    #[test]
    fn profiled_outside_fusion_is_told_it_times_registrations() {
        let note = registration_times_note("autodiff<profiled<fusion<cubecl<wgpu>>>>")
            .expect("Profiled<Fusion<..>> gets the note");
        assert!(
            note.starts_with("burn-profiled: `autodiff<profiled<fusion<"),
            "{note}"
        );
        assert!(note.contains("burn_profiled::fused::Wgpu"), "{note}");
        assert_eq!(
            registration_times_note("fusion<profiled<cubecl<wgpu>>>"),
            None
        );
        assert_eq!(registration_times_note("autodiff<profiled<ndarray>>"), None);
    }
}
