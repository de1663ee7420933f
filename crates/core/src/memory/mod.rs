//! Where the memory goes: per step (host RSS, each device's memory in use and reserved), per op
//! (what each op allocated and the memory in use when it ended, in the op table), growth over
//! the run (the leak warning), and the context of an out-of-memory failure.
//!
//! An edition's session does all of it from its `[memory]` section:
//!
//! ```toml
//! [memory]
//! per_step = true          # a sample at each measured step's end: run.json, trace.json
//! per_op = true            # Alloc and Peak columns in the op table (with [stats] enabled)
//! device_limit_mib = 20000 # stop the run cleanly past 20000 MiB reserved on a device
//! ```
//!
//! Device memory is read through the launch threads given to the session
//! (Burn 0.21: `Session::set_launch_thread`; `LaunchThread::cubecl`
//! reads CubeCL's `memory_usage`). CubeCL keeps one memory pool per stream (per thread that
//! runs ops): a step's reading adds up the pools of the thread that gave the session its launch
//! thread and, once steps run there, of the launch thread. Host memory per op needs the
//! [`TrackingAllocator`] installed as the global allocator.

mod growth;
mod oom;

use std::sync::{Mutex, PoisonError};

use serde::Serialize;

#[doc(hidden)]
pub use crate::context::live_allocations::LiveBlock;
pub use crate::context::memory::{DeviceMemory, TrackingAllocator};
pub use crate::sinks::stats::{KeptAlive, MemoryPeak, PhasePeak, StepAllocation};
pub use growth::Growth;

use crate::context::live_allocations;
use crate::context::memory as context_memory;
use crate::sinks::stats::{self, bytes_text};
use crate::sinks::trace;

#[doc(hidden)]
pub use oom::{install_out_of_memory_context, limit_text, remember};

/// The blocks still alive that editions handed over, by memory, and what they keep alive
/// once the run is finished: for the memories traced (the host's blocks, with a tracking
/// allocator; Burn 0.22's tensors, from the IR).
static KEPT_ALIVE: Mutex<Traced> = Mutex::new(Traced {
    live: Vec::new(),
    memories: Vec::new(),
    kept: Vec::new(),
});

#[derive(Debug, Clone, Default)]
struct Traced {
    live: Vec<(String, Vec<LiveBlock>)>,
    memories: Vec<String>,
    kept: Vec<KeptAlive>,
}

fn traced() -> std::sync::MutexGuard<'static, Traced> {
    KEPT_ALIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Hands over the tensors of `memory` alive at the run's end, each with the maker
/// ([`stats::maker`]) and the step that made it: for an edition that sees tensors made and
/// freed (Burn 0.22: from the IR), so that the growth warning names the ops whose outputs stay,
/// not the largest outputs.
#[doc(hidden)]
pub fn set_live_blocks(memory: &str, blocks: Vec<LiveBlock>) {
    let mut traced = traced();
    traced.live.retain(|(traced, _)| traced != memory);
    traced.live.push((memory.to_owned(), blocks));
}

/// Forgets what was handed over, and starts the host's table when `host` (per-op memory on:
/// [`live_allocations`]).
#[doc(hidden)]
pub fn start_kept_alive(host: bool) {
    *traced() = Traced::default();
    if host {
        live_allocations::start();
    }
}

/// Ends the host's table and finds, in it (when a [`TrackingAllocator`] filled it) and in what
/// editions handed over, what the ops' outputs made in the `measured` steps (of `steps_done`)
/// keep alive.
#[doc(hidden)]
pub fn finish_kept_alive(measured: &[usize], steps_done: usize) {
    let host = live_allocations::tracing().then(live_allocations::stop);
    let mut traced = traced();
    if let Some(blocks) = host
        && context_memory::host_in_use().is_some()
    {
        traced.live.push(("host".to_owned(), blocks));
    }
    let live = std::mem::take(&mut traced.live);
    for (memory, blocks) in live {
        let kept = stats::kept_alive(&memory, &blocks, measured, steps_done);
        traced.memories.push(memory);
        traced.kept.extend(kept);
    }
}

/// Memory at the end of one measured step.
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub struct StepSample {
    pub step: usize,
    pub host_rss_bytes: u64,
    pub host_in_use_bytes: Option<u64>,
    /// Each device's memory, in the order of the session's launch threads.
    pub devices: Vec<(String, DeviceMemory)>,
}

/// The per-step series of a run.
#[derive(Debug, Default)]
#[doc(hidden)]
pub struct MemorySteps {
    samples: Vec<StepSample>,
}

/// A device's series in `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceSeries {
    /// The device.
    pub device: String,
    /// Live allocations at each step's end.
    pub allocations: Vec<u64>,
    /// Bytes in use at each step's end.
    pub in_use_bytes: Vec<u64>,
    /// Bytes reserved at each step's end.
    pub reserved_bytes: Vec<u64>,
    /// The most bytes in use at a step's end.
    pub peak_in_use_bytes: u64,
    /// The most bytes reserved at a step's end.
    pub peak_reserved_bytes: u64,
}

/// The host's series in `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostSeries {
    /// Resident size at each step's end.
    pub rss_bytes: Vec<u64>,
    /// The tracking allocator's bytes in use at each step's end; absent without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_use_bytes: Option<Vec<u64>>,
    /// The largest resident size at a step's end.
    pub peak_rss_bytes: u64,
}

/// The `memory` of `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryRun {
    /// The steps sampled (counting warm-up steps: the first measured step is `warmup_iters`).
    pub steps: Vec<usize>,
    /// The host's series.
    pub host: HostSeries,
    /// Each device's series.
    pub devices: Vec<DeviceSeries>,
    /// Whether each memory grew over the measured steps (`growing`), with the growth per step.
    pub growth: Vec<Growth>,
    /// With per-op memory: each device's peak at the end of an op, with the op, phase and step.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub op_peaks: Vec<MemoryPeak>,
    /// With per-op memory: each device's peak per phase.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phase_peaks: Vec<PhasePeak>,
    /// With per-op memory: whether host allocations were tracked (a tracking allocator).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_allocations_tracked: Option<bool>,
    /// With per-op memory, where it can be seen (the host's blocks with a tracking allocator;
    /// Burn 0.22's tensors): the ops whose outputs, made in one step, are still alive at the
    /// run's end, most first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kept_alive: Vec<KeptAlive>,
    /// The memories whose `kept_alive` was traced.
    #[serde(skip)]
    pub kept_alive_traced: Vec<String>,
}

impl MemorySteps {
    /// Records a step's sample, and its counters on the timeline.
    #[doc(hidden)]
    pub fn record(&mut self, sample: StepSample) {
        let now = crate::context::clock::now();
        trace::record_counter(
            "host memory",
            now,
            &[("rss_bytes", sample.host_rss_bytes as f64)],
        );
        if let Some(in_use) = sample.host_in_use_bytes {
            trace::record_counter("host allocations", now, &[("in_use_bytes", in_use as f64)]);
        }
        for (device, memory) in &sample.devices {
            trace::record_counter(
                &format!("memory {device}"),
                now,
                &[
                    ("in_use_bytes", memory.in_use_bytes as f64),
                    ("reserved_bytes", memory.reserved_bytes as f64),
                ],
            );
        }
        self.samples.push(sample);
    }

    /// The steps sampled.
    #[doc(hidden)]
    pub fn steps(&self) -> Vec<usize> {
        self.samples.iter().map(|s| s.step).collect()
    }

    /// Steps sampled.
    #[doc(hidden)]
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether no step was sampled.
    #[doc(hidden)]
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The run's memory for `run.json`; per-op parts from the statistics when `per_op`.
    #[doc(hidden)]
    pub fn summary(&self, per_op: bool) -> MemoryRun {
        let steps = self.samples.iter().map(|s| s.step).collect();
        let rss: Vec<u64> = self.samples.iter().map(|s| s.host_rss_bytes).collect();
        let host_in_use: Option<Vec<u64>> =
            self.samples.iter().map(|s| s.host_in_use_bytes).collect();
        let mut devices: Vec<DeviceSeries> = Vec::new();
        for sample in &self.samples {
            for (device, memory) in &sample.devices {
                let series = match devices.iter_mut().position(|d| d.device == *device) {
                    Some(at) => &mut devices[at],
                    None => {
                        devices.push(DeviceSeries {
                            device: device.clone(),
                            allocations: Vec::new(),
                            in_use_bytes: Vec::new(),
                            reserved_bytes: Vec::new(),
                            peak_in_use_bytes: 0,
                            peak_reserved_bytes: 0,
                        });
                        devices
                            .last_mut()
                            .unwrap_or_else(|| unreachable!("just pushed"))
                    }
                };
                series.allocations.push(memory.allocations);
                series.in_use_bytes.push(memory.in_use_bytes);
                series.reserved_bytes.push(memory.reserved_bytes);
                series.peak_in_use_bytes = series.peak_in_use_bytes.max(memory.in_use_bytes);
                series.peak_reserved_bytes = series.peak_reserved_bytes.max(memory.reserved_bytes);
            }
        }
        let mut growth: Vec<Growth> = devices
            .iter()
            .filter_map(|d| growth::detect(&d.device, &d.in_use_bytes, growth::COUNTED_FLOOR))
            .collect();
        match &host_in_use {
            Some(in_use) => growth.extend(growth::detect("host", in_use, growth::HOST_FLOOR)),
            None => growth.extend(growth::detect("host RSS", &rss, growth::HOST_FLOOR)),
        }
        let snapshot = per_op.then(stats::snapshot);
        let traced = match per_op {
            true => traced().clone(),
            false => Traced::default(),
        };
        MemoryRun {
            steps,
            host: HostSeries {
                peak_rss_bytes: rss.iter().copied().max().unwrap_or(0),
                rss_bytes: rss,
                in_use_bytes: host_in_use,
            },
            devices,
            growth,
            op_peaks: if per_op {
                stats::memory_peaks()
            } else {
                Vec::new()
            },
            phase_peaks: snapshot
                .as_ref()
                .map(stats::Snapshot::phase_peaks)
                .unwrap_or_default(),
            host_allocations_tracked: per_op.then(|| !stats::host_was_untracked()),
            kept_alive: traced.kept,
            kept_alive_traced: traced.memories,
        }
    }
}

impl MemoryRun {
    /// The lines a session ends with: the peaks at steps' ends and, with per-op memory, at
    /// ops' ends and per phase. The stopwatch's "during" figure is sampled within steps, so
    /// it can be higher than the peak at a step's end.
    pub fn closing_lines(&self) -> String {
        let mut parts = vec![format!(
            "host RSS peak {}",
            bytes_text(self.host.peak_rss_bytes)
        )];
        for device in &self.devices {
            let mut part = format!(
                "{}: peak {} in use, {} reserved",
                device.device,
                bytes_text(device.peak_in_use_bytes),
                bytes_text(device.peak_reserved_bytes)
            );
            if let Some(peak) = self.op_peaks.iter().find(|p| p.device == device.device) {
                part.push_str(&format!("; {}", op_peak_text(peak)));
            }
            parts.push(part);
        }
        for peak in self
            .op_peaks
            .iter()
            .filter(|p| !self.devices.iter().any(|d| d.device == p.device))
        {
            parts.push(format!("{}: {}", peak.device, op_peak_text(peak)));
        }
        let mut text = format!(
            "memory at the ends of {} measured steps: {}",
            self.steps.len(),
            parts.join("; ")
        );
        if !self.phase_peaks.is_empty() {
            let phases: Vec<String> = self
                .phase_peaks
                .iter()
                .map(|p| format!("{} {} {}", p.device, p.phase, bytes_text(p.bytes)))
                .collect();
            text.push_str(&format!("\nmemory peak by phase: {}", phases.join(", ")));
        }
        text
    }

    /// The warning for each memory that grew: `burn-profiled: memory grew ...`, with (per-op
    /// memory on) the ops whose outputs stay alive where that can be seen, else the ops that
    /// kept most of what they allocated.
    pub fn growth_warnings(&self, measured_steps: usize) -> Vec<String> {
        self.growth
            .iter()
            .filter(|g| g.growing)
            .map(|growth| {
                let mut text = format!(
                    "burn-profiled: memory grew by {} per step on {} over {} measured steps \
                     (from {} to {}, rising in {} of {} steps)",
                    bytes_text(growth.bytes_per_step.max(0.0) as u64),
                    growth.memory,
                    growth.steps,
                    bytes_text(growth.first_bytes),
                    bytes_text(growth.last_bytes),
                    growth.rising_steps,
                    growth.steps - 1,
                );
                if self.host_allocations_tracked.is_none() && self.op_peaks.is_empty() {
                    text.push_str(
                        "; set `[memory] per_op = true` (with `[stats] enabled`) to see which ops \
                         keep it",
                    );
                    return text;
                }
                let host = matches!(growth.memory.as_str(), "host" | "host RSS");
                let traced_as = if host { "host" } else { &growth.memory };
                match self.kept_alive_traced.iter().any(|m| m == traced_as) {
                    true => text.push_str(&self.kept_alive_text(traced_as, growth)),
                    false => text.push_str(&self.net_allocations_text(growth, measured_steps)),
                }
                text
            })
            .collect()
    }

    /// What the ops' outputs on `memory` keep alive, as the growth warning's end.
    fn kept_alive_text(&self, memory: &str, growth: &Growth) -> String {
        // The ops that keep a share of the growth worth looking at (1% or more).
        let grown = growth.bytes_per_step.max(0.0);
        let kept: Vec<&KeptAlive> = (self.kept_alive.iter())
            .filter(|kept| kept.memory == memory)
            .enumerate()
            .filter(|(at, kept)| *at == 0 || kept.bytes_per_step as f64 * 100.0 >= grown)
            .map(|(_, kept)| kept)
            .collect();
        if kept.is_empty() {
            return match memory {
                "host" => "; no op's output made in one step is alive at the end: the growth is \
                           the program's own allocations (or an op's made on a worker thread)"
                    .to_owned(),
                _ => "; no op's output made in one step is alive at the end".to_owned(),
            };
        }
        let mut text = format!(
            "; made in one step and still alive at the end: {}",
            (kept.iter().take(3))
                .map(|kept| kept.text())
                .collect::<Vec<_>>()
                .join("; ")
        );
        let kept_per_step: u64 = kept.iter().map(|kept| kept.bytes_per_step).sum();
        if kept_per_step as f64 <= 0.75 * grown {
            text.push_str(&format!(
                " (the other {} per step of the growth was not made by ops: the program's own, \
                 or the profiler's records)",
                bytes_text((grown - kept_per_step as f64) as u64)
            ));
        }
        // Alive by the IR yet more than the memory grew: frees the edition could not see
        // (Burn 0.22's foreign drops, of tensors another thread made).
        if memory != "host" && kept_per_step as f64 > 2.0 * grown {
            text.push_str(&format!(
                " ({} per step in all, more than the memory grew: some of these were freed \
                 where the profiler does not see it, on another thread than the one that made \
                 them, as the batches of a data-loading thread are)",
                bytes_text(kept_per_step)
            ));
        }
        text
    }

    /// The ops that allocated most and freed least on `growth`'s memory, as the growth
    /// warning's end, where which outputs stay alive cannot be seen.
    fn net_allocations_text(&self, growth: &Growth, measured_steps: usize) -> String {
        // A device's growth is its ops'; the host's, that of the ops on the devices that
        // report no memory of their own (NdArray's).
        let is_device = self.devices.iter().any(|d| d.device == growth.memory);
        let steps = measured_steps.max(1) as u64;
        let net = stats::snapshot().net_allocations();
        let ops: Vec<String> = (net.iter())
            .filter(|(on, _, _)| match is_device {
                true => *on == growth.memory,
                false => !self.devices.iter().any(|d| d.device == *on),
            })
            .take(3)
            .map(|(_, op, bytes)| format!("{op} {}", bytes_text(*bytes / steps)))
            .collect();
        if ops.is_empty() {
            return String::new();
        }
        let unseen = match is_device {
            true => "which outputs stay alive cannot be seen on this device's backend",
            false => "install the TrackingAllocator to see which outputs stay alive",
        };
        format!(
            "; ops that kept most of what they allocated, per step ({unseen}): {}",
            ops.join(", ")
        )
    }
}

fn op_peak_text(peak: &MemoryPeak) -> String {
    format!(
        "peak {} at the end of {} ({}), step {}",
        bytes_text(peak.bytes),
        peak.op,
        peak.phase,
        peak.step
    )
}

/// The program's host memory now: resident size, and the tracking allocator's bytes in use,
/// less what the timeline holds (the profiler's own memory, which grows with every event).
#[doc(hidden)]
pub fn host_now() -> (u64, Option<u64>) {
    let profiler = trace::retained_bytes();
    (
        crate::host::rss_bytes()
            .unwrap_or(0)
            .saturating_sub(profiler),
        context_memory::host_in_use().map(|bytes| bytes.saturating_sub(profiler)),
    )
}

/// Publishes the step ops run in now (for peaks and out-of-memory messages).
#[doc(hidden)]
pub fn set_step(step: usize) {
    context_memory::set_step(step);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(name: &str, in_use: u64, reserved: u64) -> DeviceSeries {
        DeviceSeries {
            device: name.to_owned(),
            allocations: vec![1],
            in_use_bytes: vec![in_use],
            reserved_bytes: vec![reserved],
            peak_in_use_bytes: in_use,
            peak_reserved_bytes: reserved,
        }
    }

    fn run(devices: Vec<DeviceSeries>, op_peaks: Vec<MemoryPeak>) -> MemoryRun {
        MemoryRun {
            steps: vec![3, 4],
            host: HostSeries {
                rss_bytes: vec![10 << 20, 12 << 20],
                in_use_bytes: None,
                peak_rss_bytes: 12 << 20,
            },
            devices,
            growth: Vec::new(),
            op_peaks,
            phase_peaks: Vec::new(),
            host_allocations_tracked: None,
            kept_alive: Vec::new(),
            kept_alive_traced: Vec::new(),
        }
    }

    /// Outputs alive at the end by the IR, more than the pool grew: the warning names them,
    /// and says that some were freed unseen (tensors another thread made and dropped).
    #[test]
    fn alive_outputs_beyond_the_growth_are_said_to_include_unseen_frees() {
        let _serial = crate::sinks::TEST_SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut grown = run(
            vec![device("wgpu:DefaultDevice", 158 << 10, 21 << 20)],
            vec![peak("wgpu:DefaultDevice", "matmul")],
        );
        grown.growth.push(Growth {
            memory: "wgpu:DefaultDevice".to_owned(),
            growing: true,
            bytes_per_step: 3.0 * 1024.0,
            rising_steps: 33,
            steps: 37,
            first_bytes: 125 << 10,
            last_bytes: 158 << 10,
        });
        let device = || "wgpu:DefaultDevice".to_owned();
        let kept = |op: &str, bytes_per_step: u64| KeptAlive {
            memory: device(),
            op: op.to_owned(),
            phase: "-".to_owned(),
            call_site: None,
            input_shapes: None,
            bytes_per_step,
            made_in_steps: Some(36),
            of_steps: 36,
        };
        grown.kept_alive_traced = vec![device()];
        grown.kept_alive = vec![kept("init", 22 << 10)];
        let warning = grown.growth_warnings(37).remove(0);
        assert!(
            warning.ends_with(
                "made in one step and still alive at the end: 22.00 KiB/step by init (in 36 of \
                 36 steps) (22.00 KiB per step in all, more than the memory grew: some of these \
                 were freed where the profiler does not see it, on another thread than the one \
                 that made them, as the batches of a data-loading thread are)"
            ),
            "{warning}"
        );
        grown.kept_alive = vec![kept("matmul", 3 << 10)];
        let warning = grown.growth_warnings(37).remove(0);
        assert!(
            warning.ends_with("end: 3.00 KiB/step by matmul (in 36 of 36 steps)"),
            "{warning}"
        );
    }

    fn peak(device: &str, op: &str) -> MemoryPeak {
        MemoryPeak {
            device: device.to_owned(),
            bytes: 14 << 20,
            op: op.to_owned(),
            phase: "forward".to_owned(),
            step: 4,
        }
    }

    #[test]
    fn the_closing_line_says_where_each_peak_was_taken() {
        let on_device = run(
            vec![device("DefaultDevice", 13 << 20, 16 << 20)],
            vec![peak("DefaultDevice", "float_zeros")],
        );
        assert_eq!(
            on_device.closing_lines(),
            "memory at the ends of 2 measured steps: host RSS peak 12.00 MiB; DefaultDevice: \
             peak 13.00 MiB in use, 16.00 MiB reserved; peak 14.00 MiB at the end of \
             float_zeros (forward), step 4"
        );
        let host_only = run(Vec::new(), vec![peak("Cpu", "conv2d")]);
        assert_eq!(
            host_only.closing_lines(),
            "memory at the ends of 2 measured steps: host RSS peak 12.00 MiB; Cpu: peak \
             14.00 MiB at the end of conv2d (forward), step 4"
        );
    }
}
