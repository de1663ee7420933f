//! What every edition's session does with a [`RuntimeConfig`], from the first step to the run
//! directory: the tools switched on at the start, the per-op tools when warm-up ends, each
//! step's time and memory, and at the end the op tables, `trace.json`, `run.json` and the
//! report. An edition's session adds what is Burn's own (Burn 0.21: launch threads, fused
//! devices, dumps) around a [`RunRecorder`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::config::RuntimeConfig;
use crate::context::clock;
use crate::context::memory::DeviceMemory;
use crate::device_sync::DeviceSync;
use crate::device_time::{self, DeviceTimeError, DeviceTimeSummary, Source};
use crate::formats::RUN_FORMAT_VERSION;
use crate::host::{MemoryGuard, MemoryLimitExceeded};
use crate::memory::{self, MemoryRun, MemorySteps, StepSample};
use crate::numerics::{NUMERICS_FILE, NonFinite};

/// The graph of a step's file (`[memory] graph`).
pub const GRAPH_FILE: &str = "graph.json";
use crate::nvtx::{self, RangeConfig};
use crate::roofline::Calibration;
use crate::sinks::numerics;
use crate::stopwatch::{self, StopwatchConfig};
use crate::{probe, stats, trace};

/// What a session says at its end when its first step took far longer than a measured one on
/// an asynchronous (CubeCL) backend: that time is the kernels' compilation and autotuning,
/// which CubeCL caches for the next runs. `None` otherwise (under 5 s, or under 10 measured
/// steps' median).
pub fn first_step_note(first: Option<f64>, measured: &[f64], asynchronous: bool) -> Option<String> {
    let first = first?;
    let mut sorted = measured.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = *sorted.get(sorted.len() / 2)?;
    (asynchronous && first >= 5.0 && first > 10.0 * median).then(|| {
        format!(
            "burn-profiled: the first step took {first:.1} s, {:.0}x a measured step ({}): on this \
             backend that is CubeCL compiling and autotuning its kernels, which it caches for the \
             next runs; it is in warm-up, not in the measured steps",
            first / median,
            match median >= 1.0 {
                true => format!("{median:.2} s"),
                false => format!("{:.1} ms", median * 1e3),
            }
        )
    })
}

/// Where a run keeps the inputs of the first op that made a NaN or an Inf
/// (`input_<i>.npy`, in argument order), next to `run.json`'s `non_finite`.
pub const NON_FINITE_DIR: &str = "non_finite";

/// Where a run keeps the inputs of the op call `[numerics] capture` names (`input_<i>.npy`),
/// next to `run.json`'s `captured`.
pub const CAPTURED_DIR: &str = "captured";

/// Steps between two collections of device time.
const DEVICE_TIME_EVERY: usize = 20;

/// What [`RunRecorder::finish`] wrote, for `run.json` and the caller.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    /// [`RUN_FORMAT_VERSION`].
    pub format_version: u32,
    /// The configuration the run used.
    pub config: RuntimeConfig,
    /// The edition's crate version.
    pub crate_version: &'static str,
    /// Burn's version.
    pub burn_version: &'static str,
    /// The backend, as Burn names it (`B::name(device)` on Burn 0.21).
    pub backend: String,
    /// The device, as `Debug` prints it.
    pub device: String,
    /// Iterations finished.
    pub steps: usize,
    /// Iterations after warm-up.
    pub measured_steps: usize,
    /// Wall time from `start` to `finish`, in seconds.
    pub wall_seconds: f64,
    /// Each measured step's time, in seconds: from the end of the step before (at
    /// `finish_iter`) to its own end.
    pub step_seconds: Vec<f64>,
    /// The first step's time, from the session's start to its `finish_iter`, warm-up or not:
    /// on a CubeCL backend it holds the kernels' compilation and autotuning.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_step_seconds: Option<f64>,
    /// Autotune's trial runs of fused blocks' ops during the run, left off the op path (not
    /// ops of the op table, not records of `numerics.jsonl`); absent when none ran.
    #[serde(skip_serializing_if = "is_zero")]
    pub autotune_trials: u64,
    /// The stopwatch report, if the stopwatch ran.
    pub stopwatch: Option<stopwatch::Report>,
    /// Device time, if it was recorded (`[stats] device_time`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_time: Option<DeviceTimeRun>,
    /// Memory per step, its peaks and growth (`[memory] per_step`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryRun>,
    /// The first op whose output held a NaN or an Inf (`[numerics] check_finite`), if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub non_finite: Option<NonFinite>,
    /// The op call `[numerics] capture` named, if it ran: its fingerprints and its re-run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub captured: Option<crate::numerics::CapturedOp>,
    /// The message of what stopped the run (a memory limit, a NaN with
    /// `check_finite = "stop"`), if something did: a program should exit with a failure code
    /// then (the examples exit with 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
    /// Files written.
    pub files: Vec<PathBuf>,
}

/// The device time of a run, in `run.json`.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceTimeRun {
    /// Kernels matched to the op that launched them.
    pub kernels: u64,
    /// Their device time, in ns.
    pub device_ns: u64,
    /// Device time per measured step, in seconds.
    pub seconds_per_step: Option<f64>,
    /// Kernels launched under no op, and their device time.
    #[serde(flatten)]
    pub unattributed: DeviceTimeSummary,
}

/// Why a run must stop, as a session's `finish_iter` returns it (having printed it on stderr):
/// stop the run, and exit with a failure code (the examples exit with 3).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunStopped {
    /// A memory limit was passed (`[host] memory_limit_mib`, `[memory] device_limit_mib`).
    #[error(transparent)]
    Memory(#[from] MemoryLimitExceeded),
    /// An op made a NaN or an Inf, and `[numerics] check_finite = "stop"`.
    #[error("{}", non_finite_text(.0))]
    NonFinite(Box<NonFinite>),
}

fn non_finite_text(found: &NonFinite) -> String {
    format!("stopping the run at the first NaN or Inf: {found}")
}

/// What `run.json` says the run was: the edition, its Burn, the backend and the device.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct RunIdentity {
    /// The edition's crate version.
    pub crate_version: &'static str,
    /// The Burn version the edition is built against.
    pub burn_version: &'static str,
    /// The backend, as Burn names it.
    pub backend: String,
    /// The devices, as `Debug` prints them.
    pub device: String,
    /// Whether the backend's ops return before their work is done (CubeCL's, LibTorch's on a
    /// GPU): their host times are then launches, and no rate is computed from them.
    pub asynchronous: bool,
}

/// How an edition records device time when warm-up ends (`[stats] device_time`), where it
/// does not go through CUPTI: the source it starts, or why it cannot.
#[doc(hidden)]
pub type DeviceTimeStart = Box<dyn FnOnce() -> Result<Arc<dyn Source>, DeviceTimeError> + Send>;

/// A run under a [`RuntimeConfig`], as every edition's session records it.
#[doc(hidden)]
pub struct RunRecorder {
    config: RuntimeConfig,
    out_dir: PathBuf,
    identity: RunIdentity,
    started: Instant,
    /// When the last step ended (the start for the first), on the shared clock (the timeline's
    /// `ProfilerStep` spans are on it), and the measured steps' times.
    step_ended: Duration,
    first_step_seconds: Option<f64>,
    /// The trial runs left out before the run started.
    autotune_trials_before: u64,
    step_seconds: Vec<f64>,
    steps: usize,
    warmup_done: bool,
    memory_guard: Option<MemoryGuard>,
    /// The session's devices, synced before device time is collected.
    sync: DeviceSync,
    /// Whether device time is being recorded.
    device_time: bool,
    /// The edition's own way of recording it, instead of CUPTI.
    device_time_start: Option<DeviceTimeStart>,
    /// The per-step memory series, with `[memory] per_step`.
    memory_steps: Option<MemorySteps>,
    /// The memory limit's message, once one stopped the run (printed once).
    stopped_by: Option<String>,
}

impl RunRecorder {
    /// Enables the tools `config` asks for, syncing `sync` where it asks for sync, and keeps
    /// `out_dir` for the artefacts. With `[dump] enabled`, the process-wide dumper
    /// ([`dump::global`](crate::dump::global)) writes to `[dump] dir` (default
    /// `out_dir/dumps`), or compares with what is there when `[dump] compare` is set.
    ///
    /// # Panics
    /// If a tool it enables was enabled before in this process (the tools are enable-once).
    pub fn start(
        config: RuntimeConfig,
        identity: RunIdentity,
        sync: DeviceSync,
        out_dir: PathBuf,
    ) -> Self {
        Self::start_timing_devices_with(config, identity, sync, out_dir, None)
    }

    /// [`start`](Self::start), with device time recorded by `device_time_start`'s source
    /// rather than CUPTI, when the config asks for it.
    pub fn start_timing_devices_with(
        config: RuntimeConfig,
        identity: RunIdentity,
        sync: DeviceSync,
        out_dir: PathBuf,
        device_time_start: Option<DeviceTimeStart>,
    ) -> Self {
        if config.stopwatch.enabled {
            let mut stopwatch_config =
                StopwatchConfig::new(config.stopwatch.warmup_iters, config.stopwatch.print_every);
            if config.stopwatch.sync {
                stopwatch_config = stopwatch_config.sync(sync.clone());
            }
            stopwatch::enable(stopwatch_config);
            if let Some(name) = &config.stopwatch.cpu_usage_name {
                // A fresh stopwatch has measured nothing: selecting a name cannot fail.
                let _ = stopwatch::set_cpu_usage_meas_name(name);
            }
            stopwatch::start_one_time_measurement("complete run");
        }
        if config.nvtx.user_ranges {
            let mut ranges =
                RangeConfig::new().keep_track_of_range_order(config.nvtx.keep_track_of_range_order);
            if config.nvtx.sync_on_push {
                ranges = ranges.sync_on_push(sync.clone());
            }
            if config.nvtx.sync_on_pop {
                ranges = ranges.sync_on_pop(sync.clone());
            }
            nvtx::enable(ranges);
        }
        // Op ranges look for a tool when switched on; only they do, as looking registers the
        // domain `burn` in the tool.
        if config.nvtx.op_ranges
            && let Some(note) = no_nvtx_tool_note(crate::sinks::op_ranges::reach_a_tool())
        {
            eprintln!("{note}");
        }
        let mut recorder = RunRecorder {
            memory_guard: config
                .host
                .memory_limit_mib
                .map(|mib| MemoryGuard::new(mib.saturating_mul(1 << 20))),
            identity,
            config,
            out_dir,
            started: Instant::now(),
            step_ended: clock::now(),
            first_step_seconds: None,
            autotune_trials_before: crate::context::autotune::trials_left_out(),
            step_seconds: Vec::new(),
            steps: 0,
            warmup_done: false,
            sync,
            device_time: false,
            device_time_start,
            memory_steps: None,
            stopped_by: None,
        };
        let memory_config = &recorder.config.memory;
        // The graph's host frees are the tracking allocator's table's.
        memory::start_kept_alive(memory_config.per_op || memory_config.graph);
        if memory_config.graph {
            let step = (memory_config.graph_step).unwrap_or(recorder.config.stopwatch.warmup_iters);
            crate::sinks::graph::start(step, crate::sinks::graph::Frees::NotSeen);
        }
        if memory_config.per_step || memory_config.per_op {
            memory::install_out_of_memory_context();
        }
        if memory_config.per_step {
            recorder.memory_steps = Some(MemorySteps::default());
        }
        let dump = &recorder.config.dump;
        if dump.enabled {
            crate::dump::global::enable(dump.dir_in(&recorder.out_dir));
            if dump.compare {
                crate::dump::global::set_dump_is_compare(crate::dump::CompareSettings::default());
            }
        }
        if recorder.config.stats.enabled && recorder.config.stats.forward_links
            || recorder.config.memory.graph
        {
            // From the first step: what warm-up makes (an optimizer's state) is known when the
            // measured steps read it.
            stats::start_forward_links();
        }
        if recorder.config.numerics.enabled() {
            // From the first step: a NaN in a warm-up step matters.
            numerics::start(recorder.config.numerics.clone());
            if recorder.config.stats.call_sites {
                // The records' call sites, from the first step (statistics start after warm-up).
                crate::call_sites::set_enabled(true);
            }
        }
        if recorder.config.stopwatch.warmup_iters == 0 {
            recorder.end_warmup();
        }
        recorder
    }

    /// The configuration.
    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// Where artefacts go.
    pub fn out_dir(&self) -> &Path {
        &self.out_dir
    }

    /// Iterations finished so far.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// Whether warm-up is over (per-op tools recording).
    pub fn warmup_done(&self) -> bool {
        self.warmup_done
    }

    /// The session's devices, to sync.
    pub fn sync(&self) -> &DeviceSync {
        &self.sync
    }

    fn end_warmup(&mut self) {
        self.warmup_done = true;
        let device_time_start = self.device_time_start.take();
        let config = &self.config;
        probe::set_op_sync(config.nvtx.per_op_sync);
        probe::set_op_ranges(config.nvtx.op_ranges);

        if config.stats.enabled {
            // This run's rows only: a session before it in this process kept its own. The peaks
            // are those measured, else those given.
            stats::reset();
            stats::start(stats::StatsConfig {
                by_shapes: config.stats.by_shapes,
                memory: config.memory.per_op,
                work: config.roofline.counts,
                peaks: stats::calibrated_peaks().or(config.roofline.peaks()),
                host_times_are_launches: self.identity.asynchronous && !config.nvtx.per_op_sync,
                roofline_in_table: config.roofline.in_table,
                call_sites: config.stats.call_sites,
                // The graph's backward ops name their forward ops.
                forward_links: config.stats.forward_links || config.memory.graph,
            });
        }
        if config.stats.device_time {
            let started = match device_time_start {
                Some(start) => start().map(device_time::start_with),
                None => device_time::start(),
            };
            match started {
                Ok(()) => self.device_time = true,
                Err(why) => eprintln!("burn-profiled: {why}; the op table has host times only"),
            }
        }
        if config.trace.enabled {
            trace::start(trace::TraceConfig {
                max_events: config.trace.max_events,
            });
        }
        if config.capture.after_warmup {
            nvtx::start_capture();
        }
    }

    /// Ends an iteration: the stopwatch's `finish_iter`, per-op tools on when warm-up ends, the
    /// memory sample of a measured step (`[memory] per_step`, with each device's memory from
    /// `device_memory`), and the memory guards' checks (`[host] memory_limit_mib`,
    /// `[memory] device_limit_mib`). With device time, every 20 steps: a device sync, then the
    /// kernels recorded are collected into the statistics.
    ///
    /// Past a memory limit it returns the guard's error, having printed it on stderr (once);
    /// after an op made a NaN or an Inf with `[numerics] check_finite = "stop"`, that op.
    pub fn finish_iter(
        &mut self,
        device_memory: impl FnOnce() -> Vec<(String, DeviceMemory)>,
    ) -> Result<(), RunStopped> {
        stopwatch::finish_iter();
        let now = clock::now();
        if self.warmup_done {
            self.step_seconds
                .push(now.saturating_sub(self.step_ended).as_secs_f64());
            trace::record_step(self.steps, self.step_ended, now);
        }
        if self.steps == 0 {
            self.first_step_seconds = Some(now.saturating_sub(self.step_ended).as_secs_f64());
        }
        self.step_ended = now;
        self.steps += 1;
        if self.device_time && self.steps.is_multiple_of(DEVICE_TIME_EVERY) {
            // Keeps what CUPTI and the matching hold bounded over long runs. After a sync, as
            // CUPTI holds back a buffer while a kernel in it runs, unless forced, and a forced
            // flush hands a running kernel over without its end.
            self.sync.sync();
            probe::flush_device_time();
        }
        let measured = self.warmup_done;
        if !self.warmup_done && self.steps >= self.config.stopwatch.warmup_iters {
            self.end_warmup();
        }
        let device_limit = self.config.memory.device_limit_mib;
        let sample = (measured && self.memory_steps.is_some() || device_limit.is_some())
            .then(|| self.memory_sample(device_memory()));
        if let Some(sample) = &sample {
            memory::remember(sample);
        }
        let host = self
            .memory_guard
            .as_ref()
            .and_then(|guard| guard.check().err());
        let exceeded = host.or_else(|| {
            let (limit, sample) = (device_limit?, sample.as_ref()?);
            sample
                .devices
                .iter()
                .find(|(_, memory)| memory.reserved_bytes > limit.get() << 20)
                .map(|(device, memory)| MemoryLimitExceeded {
                    memory: device.clone(),
                    used_mib: memory.reserved_bytes >> 20,
                    limit_mib: limit.get(),
                })
        });
        if let (Some(steps), Some(sample), true) = (&mut self.memory_steps, sample, measured) {
            steps.record(sample);
        }
        if let Some(exceeded) = &exceeded
            && self.stopped_by.is_none()
        {
            // The step's allocations are still the current step's.
            eprintln!("{}", memory::limit_text(exceeded));
            self.stopped_by = Some(exceeded.to_string());
        }
        memory::set_step(self.steps);
        crate::sinks::graph::set_step(self.steps);
        let non_finite = self.config.numerics.enabled().then(|| {
            // What the step queued (a fused device's blocks) runs now, as the step's.
            self.sync.sync();
            numerics::set_step(self.steps as u64);
            numerics::stop_asked()
        });
        if let Some(exceeded) = exceeded {
            return Err(exceeded.into());
        }
        match non_finite.flatten() {
            Some(found) => {
                // Printed when the op ran.
                let stopped = RunStopped::NonFinite(Box::new(found));
                self.stopped_by.get_or_insert_with(|| stopped.to_string());
                Err(stopped)
            }
            None => Ok(()),
        }
    }

    /// The memory now, at the end of step `steps - 1`.
    fn memory_sample(&self, devices: Vec<(String, DeviceMemory)>) -> StepSample {
        let (host_rss_bytes, host_in_use_bytes) = memory::host_now();
        StepSample {
            step: self.steps - 1,
            host_rss_bytes,
            host_in_use_bytes,
            devices,
        }
    }

    /// Stops the per-op tools, prints the stopwatch report and the op table, and writes
    /// `trace.json`, `ops.json` and `run.json` (those whose tools ran) to the output directory,
    /// with `ops_by_shapes.json` when statistics are kept by shapes and `ops_by_device.json`
    /// with several devices. The dumps' directory is listed after `trace.json` when the
    /// process-wide dumper (`[dump] enabled`) dumped there (not when it compared with what
    /// was there). Sync the devices first.
    pub fn finish(self) -> std::io::Result<RunSummary> {
        let device_time = self.device_time.then(|| {
            let summary = device_time::stop();
            probe::flush_device_time();
            summary
        });
        let config = &self.config;
        nvtx::stop_capture();
        probe::set_op_ranges(false);
        probe::set_op_sync(false);
        stats::stop();
        trace::stop();
        if config.stopwatch.enabled {
            stopwatch::end_one_time_measurement("complete run");
        }
        std::fs::create_dir_all(&self.out_dir)?;
        let mut files = Vec::new();
        let report = stopwatch::report();
        if let Some(report) = &report {
            println!("{report}");
        }
        if config.stats.enabled {
            let snapshot = stats::snapshot();
            // Tables printed: by phase, and by device with several; by shapes only written
            // (one row per op and shapes is too long to read on a terminal).
            let by_device = (snapshot.devices().len() > 1).then_some((
                stats::GroupBy::OpAndDevice,
                "ops_by_device.json",
                true,
            ));
            let by_shapes = config.stats.by_shapes.then_some((
                stats::GroupBy::OpAndShapes,
                "ops_by_shapes.json",
                false,
            ));
            let by_call_site = config.stats.call_sites.then_some((
                stats::GroupBy::OpAndCallSite,
                "ops_by_call_site.json",
                true,
            ));
            for (group, file, print) in [(stats::GroupBy::OpAndPhase, "ops.json", true)]
                .into_iter()
                .chain(by_device)
                .chain(by_shapes)
                .chain(by_call_site)
            {
                if print {
                    let rows = match config.stats.table_rows {
                        0 => usize::MAX,
                        rows => rows,
                    };
                    println!("{}", snapshot.table_top(group, rows, file));
                }
                let path = self.out_dir.join(file);
                crate::files::write_atomically(&path, &[snapshot.to_json(group).as_bytes()])?;
                files.push(path);
            }
            if config.stats.forward_links {
                let by_call_site = config
                    .stats
                    .call_sites
                    .then_some((stats::ModuleKey::CallSite, "ops_by_forward_call_site.json"));
                for (key, file) in [(stats::ModuleKey::Phase, "ops_by_module.json")]
                    .into_iter()
                    .chain(by_call_site)
                {
                    println!("{}", snapshot.modules_table(key, file));
                    let path = self.out_dir.join(file);
                    let json = snapshot.modules_json(key);
                    crate::files::write_atomically(&path, &[json.as_bytes()])?;
                    files.push(path);
                }
            }
            if config.stats.call_sites {
                for (device, file) in [(false, "stacks.folded"), (true, "stacks_device.folded")] {
                    if device && !snapshot.has_device_time() {
                        continue;
                    }
                    let path = self.out_dir.join(file);
                    let folded = snapshot.folded_stacks(device);
                    crate::files::write_atomically(&path, &[folded.as_bytes()])?;
                    files.push(path);
                }
            }
        }
        if config.trace.enabled {
            let path = self.out_dir.join("trace.json");
            trace::write(&path)?;
            files.push(path);
        }
        let numerics = numerics::stop();
        if config.numerics.fingerprints {
            let path = self.out_dir.join(NUMERICS_FILE);
            crate::numerics::file::write(&path, &numerics.records)?;
            files.push(path);
        }
        // The first NaN's op, and the captured one, reproduced: their inputs, for a test or an
        // upstream report.
        for (name, inputs) in [
            (NON_FINITE_DIR, &numerics.non_finite_inputs),
            (CAPTURED_DIR, &numerics.captured_inputs),
        ] {
            if inputs.is_empty() {
                continue;
            }
            let dir = self.out_dir.join(name);
            std::fs::create_dir_all(&dir)?;
            for (at, input) in inputs.iter().enumerate() {
                crate::dump::blob::write_npy(&dir.join(format!("input_{at}.npy")), input)
                    .map_err(std::io::Error::other)?;
            }
            files.push(dir);
        }
        let dump = &config.dump;
        // A comparison reads the dumps there: it wrote nothing.
        if dump.enabled && !dump.compare && crate::dump::global::dump_count() > 0 {
            files.push(dump.dir_in(&self.out_dir));
        }
        let measured_steps = self.steps.saturating_sub(config.stopwatch.warmup_iters);
        let device_time = device_time.map(|unattributed| {
            let (kernels, device) = stats::snapshot().device_totals().unwrap_or_default();
            println!("{}", device_time_line(kernels, &unattributed));
            DeviceTimeRun {
                kernels,
                device_ns: device.as_nanos() as u64,
                seconds_per_step: (measured_steps > 0)
                    .then(|| device.as_secs_f64() / measured_steps as f64),
                unattributed,
            }
        });
        if let Some(note) = first_step_note(
            self.first_step_seconds,
            &self.step_seconds,
            self.identity.asynchronous,
        ) {
            eprintln!("{note}");
        }
        if config.memory.graph {
            let step = config
                .memory
                .graph_step
                .unwrap_or(config.stopwatch.warmup_iters);
            match crate::sinks::graph::finish() {
                Some(graph) => {
                    let path = self.out_dir.join(GRAPH_FILE);
                    let json =
                        serde_json::to_string_pretty(&graph).map_err(std::io::Error::other)?;
                    crate::files::write_atomically(&path, &[json.as_bytes()])?;
                    files.push(path);
                }
                None => eprintln!(
                    "burn-profiled: no {GRAPH_FILE}: its step {step} (`[memory] graph_step`) \
                     never ran; the run had {} steps",
                    self.steps
                ),
            }
        }
        if config.memory.per_op || config.memory.graph {
            let sampled = (self.memory_steps.as_ref()).map_or_else(Vec::new, MemorySteps::steps);
            memory::finish_kept_alive(&sampled, self.steps);
        }
        let memory = self.memory_steps.as_ref().map(|steps| {
            let run = steps.summary(config.memory.per_op);
            if !steps.is_empty() {
                println!("{}", run.closing_lines());
            }
            for warning in run.growth_warnings(measured_steps) {
                eprintln!("{warning}");
            }
            run
        });
        let autotune_trials =
            crate::context::autotune::trials_left_out().saturating_sub(self.autotune_trials_before);
        if autotune_trials > 0 {
            println!(
                "autotune: {autotune_trials} trial runs of fused blocks' ops not recorded (CubeCL \
                 tried candidate kernels on their inputs; not ops of the program)"
            );
        }
        let path = self.out_dir.join("run.json");
        files.push(path.clone());
        let report_html = config.report.html.then(|| self.out_dir.join("report.html"));
        files.extend(report_html.clone());
        let summary = RunSummary {
            format_version: RUN_FORMAT_VERSION,
            config: self.config.clone(),
            crate_version: self.identity.crate_version,
            burn_version: self.identity.burn_version,
            backend: self.identity.backend.clone(),
            device: self.identity.device.clone(),
            steps: self.steps,
            measured_steps,
            wall_seconds: self.started.elapsed().as_secs_f64(),
            step_seconds: self.step_seconds.clone(),
            first_step_seconds: self.first_step_seconds,
            autotune_trials,
            stopwatch: report,
            device_time,
            memory,
            non_finite: numerics.non_finite,
            captured: numerics.captured,
            stopped_by: self.stopped_by.clone(),
            files,
        };
        let json = serde_json::to_string_pretty(&summary).map_err(std::io::Error::other)?;
        crate::files::write_atomically(&path, &[json.as_bytes()])?;
        if let Some(report) = report_html {
            // From the files just written, as `burn-profiled report` reads them.
            let run = crate::runs::Run::open(&self.out_dir).map_err(std::io::Error::other)?;
            crate::runs::report::write(&run, &report)?;
        }
        Ok(summary)
    }
}

/// The line a session ends with when it recorded device time: how many kernels were
/// attributed, and what CUPTI reported of itself.
fn device_time_line(kernels: u64, summary: &DeviceTimeSummary) -> String {
    let all = kernels + summary.unattributed_kernels;
    if summary.source != "CUPTI" {
        return launch_observer_line(kernels, summary);
    }
    let mut line = format!(
        "device time: {kernels} of {all} kernels attributed to their op ({:.2}%); CUPTI: \
         {} API calls tagged, {} kernels without an end, {} records dropped, {} tag errors",
        100.0 * kernels as f64 / all.max(1) as f64,
        summary.tagged_api_calls,
        summary.incomplete_kernels,
        summary.dropped_records,
        summary.tag_errors,
    );
    if all > 0 && summary.tagged_api_calls == 0 {
        line.push_str(
            "\nburn-profiled: no kernel launch was made under an op on the thread that launched \
             it: run the steps on the launch thread (`Session::set_launch_thread`)",
        );
    }
    line
}

/// The closing line of device time recorded through CubeCL's launch observer: what was
/// attributed, and the launches that were not measured on the device, apart.
fn launch_observer_line(kernels: u64, summary: &DeviceTimeSummary) -> String {
    let all = kernels + summary.unattributed_kernels;
    let mut line = format!(
        "device time: {kernels} of {all} kernels attributed to their op ({:.2}%), measured by \
         the device through {}",
        100.0 * kernels as f64 / all.max(1) as f64,
        summary.source,
    );
    if summary.host_timed_kernels > 0 {
        line.push_str(&format!(
            "\nburn-profiled: {} launches were timed on the host instead ({:.3} ms in all: \
             submit and wait, not kernel time; CubeCL's TimingMethod::System, as wgpu does \
             without timestamp queries): left out of the op table",
            summary.host_timed_kernels,
            summary.host_timed_ns as f64 / 1e6,
        ));
    }
    if summary.unmeasured_kernels > 0 {
        line.push_str(&format!(
            "\nburn-profiled: {} launches came back without a measurement: left out",
            summary.unmeasured_kernels
        ));
    }
    if all == 0 && summary.host_timed_kernels == 0 && summary.unmeasured_kernels == 0 {
        line.push_str(
            "\nburn-profiled: no kernel launch reached burn-profiled's launch observer: CubeCL \
             has one slot for it, and another observer (burn-instrument?) took it after the \
             session started",
        );
    }
    line
}

/// What a session whose config asks for op ranges says at its start when nothing takes
/// them (no NVTX tool attached, or the `nvtx` feature off): that they go nowhere, how to see
/// them, and that the rest of the session needs no tool.
/// Measures the roofline's peaks with `measure` when `config` asks for a calibration
/// (`[roofline] calibrate`): said on stderr with what was measured, and kept for the run's
/// statistics and `ops.json`; where the measurement fails, said with why, and the run goes on
/// without a roofline. Called by an edition before [`RunRecorder::start`], on its backend and
/// device.
#[doc(hidden)]
pub fn calibrate(config: &RuntimeConfig, measure: impl FnOnce() -> Result<Calibration, String>) {
    let measured = config.roofline.calibrate.then(measure);
    if let Some(measured) = &measured {
        eprintln!("{}", calibration_line(measured));
    }
    stats::set_calibration(measured.and_then(Result::ok));
}

/// What [`calibrate`] says of a calibration: what it measured, or why it was skipped.
fn calibration_line(measured: &Result<Calibration, String>) -> String {
    match measured {
        Ok(calibration) => format!("burn-profiled: {}", calibration.summary()),
        Err(why) => format!(
            "burn-profiled: roofline calibration skipped: {why}; ops keep their counts and \
             rates, without a share of the roofline (give `[roofline] peak_tflops` and \
             `peak_gbps` instead)"
        ),
    }
}

fn no_nvtx_tool_note(tool_attached: bool) -> Option<String> {
    let why = if !cfg!(feature = "nvtx") {
        "this build has no `nvtx` feature, so NVTX ranges compile to nothing"
    } else {
        "no NVTX tool is attached to this process, so its NVTX ranges go nowhere and cost \
         nothing; run it under `nsys profile --trace=nvtx,cuda` to see them"
    };
    (!tool_attached)
        .then(|| format!("burn-profiled: {why}. The op table and trace.json need no tool."))
}

#[cfg(test)]
mod no_nvtx_tool_note_tests {
    use super::no_nvtx_tool_note;

    #[test]
    #[cfg(feature = "nvtx")]
    fn op_ranges_that_reach_no_tool_are_told_with_what_to_run() {
        assert_eq!(
            no_nvtx_tool_note(false).as_deref(),
            Some(
                "burn-profiled: no NVTX tool is attached to this process, so its NVTX ranges go \
                 nowhere and cost nothing; run it under `nsys profile --trace=nvtx,cuda` to see \
                 them. The op table and trace.json need no tool."
            )
        );
        assert_eq!(no_nvtx_tool_note(true), None, "a tool takes them");
    }
}

#[cfg(test)]
mod calibration_tests {
    use super::{calibrate, calibration_line};
    use crate::config::RuntimeConfig;
    use crate::roofline::{Calibration, Workload};

    fn calibrating() -> RuntimeConfig {
        let mut config = RuntimeConfig::default();
        config.stats.enabled = true;
        config.roofline.counts = true;
        config.roofline.calibrate = true;
        config
    }

    #[test]
    fn a_calibration_that_ran_gives_the_peaks_and_says_what_it_measured() {
        // The calibration a run keeps is the process's.
        let _serial = crate::sinks::TEST_SERIAL
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let workload = |what: &str, amount| Workload {
            what: what.to_owned(),
            amount,
        };
        let measured = Calibration::measure(
            |step| (step == 0).then(|| (workload("matmul 4x4 f32", 128), || Ok(()))),
            |step| (step == 0).then(|| (workload("add_scalar over 1 MiB", 2 << 20), || Ok(()))),
        )
        .unwrap();
        assert!(
            measured
                .arithmetic
                .starts_with("matmul 4x4 f32, best of 3 runs: ")
        );
        let line = calibration_line(&Ok(measured.clone()));
        assert!(
            line.starts_with("burn-profiled: roofline peaks measured: "),
            "{line}"
        );
        assert!(
            line.contains(" GFLOP/s (matmul 4x4 f32, best of 3 runs: "),
            "{line}"
        );
        calibrate(&calibrating(), || Ok(measured.clone()));
        assert_eq!(crate::stats::calibrated_peaks(), Some(measured.peaks));
        crate::stats::set_calibration(None);
    }

    #[test]
    fn a_calibration_that_cannot_run_is_skipped_with_why_and_no_peaks() {
        // The calibration a run keeps is the process's.
        let _serial = crate::sinks::TEST_SERIAL
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let failed = Calibration::measure(
            |_| {
                Some((
                    Workload {
                        what: "matmul".to_owned(),
                        amount: 1,
                    },
                    || Err("the device failed: lost".to_owned()),
                ))
            },
            |_| None::<(Workload, fn() -> Result<(), String>)>,
        );
        assert_eq!(failed, Err("the device failed: lost".to_owned()));
        assert_eq!(
            calibration_line(&failed),
            "burn-profiled: roofline calibration skipped: the device failed: lost; ops keep their \
             counts and rates, without a share of the roofline (give `[roofline] peak_tflops` \
             and `peak_gbps` instead)"
        );
        calibrate(&calibrating(), || failed.clone());
        assert_eq!(crate::stats::calibrated_peaks(), None);
        let nothing = Calibration::measure(
            |_| None::<(Workload, fn() -> Result<(), String>)>,
            |_| None::<(Workload, fn() -> Result<(), String>)>,
        );
        assert_eq!(
            nothing,
            Err("no workload to measure FLOP/s with".to_owned())
        );
    }
}

#[cfg(test)]
mod first_step_tests {
    use super::first_step_note;

    /// A first step of minutes on a CubeCL backend is explained; a short one, or one on
    /// NdArray, is not.
    #[test]
    fn a_first_step_far_longer_than_the_others_is_explained_on_cubecl() {
        let measured = [0.9, 1.0, 1.1];
        let note = first_step_note(Some(118.2), &measured, true).expect("explained");
        assert_eq!(
            note,
            "burn-profiled: the first step took 118.2 s, 118x a measured step (1.00 s): on this \
             backend that is CubeCL compiling and autotuning its kernels, which it caches for \
             the next runs; it is in warm-up, not in the measured steps"
        );
        assert_eq!(first_step_note(Some(118.2), &measured, false), None);
        assert_eq!(first_step_note(Some(4.0), &[0.01], true), None, "under 5 s");
        assert_eq!(first_step_note(Some(8.0), &[1.0], true), None, "under 10x");
        assert_eq!(
            first_step_note(Some(8.0), &[], true),
            None,
            "no measured step"
        );
    }
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}
