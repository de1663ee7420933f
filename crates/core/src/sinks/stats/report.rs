//! The statistics as people read them: rows grouped by op, phase or shapes, a table laid out
//! like `torch.profiler`'s, and JSON.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::PoisonError;
use std::time::Duration;

use crate::shape::Shape;
#[doc(hidden)]
pub use crate::units::bytes_text;
use crate::units::rate_text;
use serde::Serialize;

use super::memory::{device_name, host_was_untracked};
use super::{Aggregate, Key, THREADS, config};
use crate::call_sites;
use crate::context::lineage::{self, Pass};
use crate::context::{device as context_device, phase};
use crate::roofline::{Calibration, Limit, Peaks};
use crate::work::Work;

/// How rows are grouped in a [`Snapshot`]'s table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    /// One row per op.
    Op,
    /// One row per op and phase (the innermost user range the op ran in).
    OpAndPhase,
    /// One row per op and input shapes (needs [`StatsConfig::by_shapes`](super::StatsConfig::by_shapes)).
    OpAndShapes,
    /// One row per op and device (its `Debug` text, `-` where the op's device is not known):
    /// with several devices in one process, which device spends its time where.
    OpAndDevice,
    /// One row per op, phase and call site (the innermost function of the user's code it was
    /// called from; needs [`StatsConfig::call_sites`](super::StatsConfig::call_sites)).
    OpAndCallSite,
}

/// The statistics of one row, in nanoseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The op's name.
    pub op: String,
    /// The phase, when grouped by phase: the innermost user range (`-` outside any).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The tensor arguments' shapes, when grouped by shapes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_shapes: Option<String>,
    /// The device, when grouped by device (`-` where the op's device is not known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The call site, when grouped by call site: `VisionModel::forward (examples/train.rs:42)`,
    /// the function alone without line tables, `-` where the stack has no user frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_site: Option<String>,
    /// The forward phase of a backward or optimizer op, when grouped by phase with
    /// [`StatsConfig::forward_links`](super::StatsConfig::forward_links) on: the phase of the
    /// forward op it works for (`-` when none was found, see
    /// [`lineage`](crate::context::lineage)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forward_phase: Option<String>,
    /// Calls.
    pub calls: u64,
    /// Total time.
    pub total_ns: u64,
    /// Share of the total time of all ops, in percent.
    pub total_percent: f64,
    /// Mean time per call.
    pub mean_ns: u64,
    /// Shortest call.
    pub min_ns: u64,
    /// Median call (within 1%).
    pub p50_ns: u64,
    /// 95th percentile (within 1%).
    pub p95_ns: u64,
    /// Longest call.
    pub max_ns: u64,
    /// Kernels the calls launched, when device time was recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernels: Option<u64>,
    /// Device time of those kernels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_total_ns: Option<u64>,
    /// Device time per call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_mean_ns: Option<u64>,
    /// Share of the device time of all ops, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_percent: Option<f64>,
    /// Bytes the calls allocated, when their memory was read (`[memory] per_op`). On devices
    /// that report memory in use only (CubeCL's), what their stream's memory in use grew by,
    /// from the end of the op before on that stream to the call's end (one read per op, on the
    /// launch thread behind the op's kernels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alloc_bytes: Option<u64>,
    /// Bytes the calls freed (on CubeCL's devices, what the memory in use shrank by).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub freed_bytes: Option<u64>,
    /// The most memory in use (the device's, or the host's) at the end of a call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_bytes: Option<u64>,
    /// The calls' FLOPs, when work was counted (`[roofline] counts`): `null` where the op has
    /// no formula ([`work`](crate::work)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flops: Option<Option<u64>>,
    /// The bytes the calls moved at least (their tensors read or written once), when work was
    /// counted: `null` where the op has no formula.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Option<u64>>,
    /// The rates achieved and the place on the roofline, for a row with FLOPs and a time that
    /// is its own (device time, or host time on a synchronous backend).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roofline: Option<RowRoofline>,
}

/// A row's rates and its place on the roofline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowRoofline {
    /// The time the rates are over: `device` (its kernels') or `host` (its calls').
    pub time: &'static str,
    /// FLOPs per byte.
    pub intensity: f64,
    /// FLOPs over that time.
    pub flops_per_s: f64,
    /// Bytes over that time (a lower bound: the minimum traffic).
    pub bytes_per_s: f64,
    /// With the device's peaks: `min(peak FLOP/s, intensity × peak bytes/s)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound_flops_per_s: Option<f64>,
    /// With the peaks: the share of that bound achieved, 0 to 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// With the peaks: the roof that binds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
}

/// The peak memory in use at the end of an op, of one device in one phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PhasePeak {
    /// The device (`host` where the op's device is not known).
    pub device: String,
    /// The phase.
    pub phase: String,
    /// The peak.
    pub bytes: u64,
}

/// The format version of the JSON [`Snapshot::to_json`] writes (`ops.json`): the session's
/// `RUN_FORMAT_VERSION`.
pub const FORMAT_VERSION: u32 = crate::formats::RUN_FORMAT_VERSION;

/// All rows recorded so far, merged over threads.
pub struct Snapshot {
    pub(super) rows: HashMap<Key, Aggregate>,
}

/// Takes a snapshot of the statistics recorded so far.
pub fn snapshot() -> Snapshot {
    let mut rows: HashMap<Key, Aggregate> = HashMap::new();
    for thread in THREADS.iter() {
        let thread = thread.lock().unwrap_or_else(PoisonError::into_inner);
        for (key, aggregate) in thread.iter() {
            rows.entry(key.clone())
                .or_insert_with(|| Aggregate::new(aggregate.name))
                .merge(aggregate);
        }
    }
    Snapshot { rows }
}

/// The phase name of the forward op of link `forward` ([`lineage`](crate::context::lineage)),
/// `-` for none.
fn forward_phase_name(forward: u32) -> String {
    crate::context::lineage::forward_op(forward)
        .map_or_else(|| "-".to_owned(), |op| phase::name(op.phase))
}

/// The phase of a row's ops: its user range, else the one Burn's frames on its call stack give
/// (`backward`, `optimizer`), else `-`.
pub(super) fn phase_name(key: &Key) -> String {
    phase_name_of(key.phase, key.stack)
}

/// The name of `phase`, or outside any user range the phase Burn's frames on `stack` give.
pub(super) fn phase_name_of(phase: u32, stack: u32) -> String {
    match phase {
        0 => call_sites::phase_of(stack).unwrap_or("-").to_owned(),
        phase => phase::name(phase),
    }
}

#[doc(hidden)]
pub fn shapes_text(shapes: &[Shape]) -> String {
    let shapes: Vec<String> = shapes
        .iter()
        .map(|s| format!("{:?}", s.as_slice()))
        .collect();
    format!("[{}]", shapes.join(", "))
}

impl Snapshot {
    /// The devices ops ran on, by their `Debug` text, in the order they were first seen.
    pub fn devices(&self) -> Vec<String> {
        let mut ids: Vec<u32> = self.rows.keys().map(|key| key.device).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.into_iter()
            .filter(|id| *id != 0)
            .map(context_device::name)
            .collect()
    }

    /// Whether device time was recorded (some op launched a kernel).
    pub fn has_device_time(&self) -> bool {
        self.rows.values().any(|a| a.kernels > 0)
    }

    /// Kernels and their device time over all ops; `None` without device time.
    pub fn device_totals(&self) -> Option<(u64, Duration)> {
        self.has_device_time().then(|| {
            self.rows
                .values()
                .fold((0, Duration::ZERO), |(kernels, time), a| {
                    (kernels + a.kernels, time + a.device)
                })
        })
    }

    /// Whether some op's memory was recorded (`[memory] per_op`).
    pub fn has_memory(&self) -> bool {
        self.rows.values().any(|a| a.memory_calls > 0)
    }

    /// Each device's peak memory in use per phase, at the ends of ops, by device then phase.
    pub fn phase_peaks(&self) -> Vec<PhasePeak> {
        let mut peaks: HashMap<(u32, u32), u64> = HashMap::new();
        for (key, aggregate) in self.rows.iter().filter(|(_, a)| a.memory_calls > 0) {
            let peak = peaks.entry((key.device, key.phase)).or_default();
            *peak = (*peak).max(aggregate.peak_bytes);
        }
        let mut peaks: Vec<PhasePeak> = peaks
            .into_iter()
            .map(|((device, phase), bytes)| PhasePeak {
                device: device_name(device),
                phase: phase::name(phase),
                bytes,
            })
            .collect();
        peaks.sort_by(|a, b| a.device.cmp(&b.device).then_with(|| a.phase.cmp(&b.phase)));
        peaks
    }

    /// What each op kept of what it allocated (allocated minus freed, over its calls), by
    /// device (`host` where not known) then op, most first: `(device, op, bytes)`.
    pub fn net_allocations(&self) -> Vec<(String, String, u64)> {
        let mut net: HashMap<(u32, &'static str), i128> = HashMap::new();
        for (key, a) in self.rows.iter().filter(|(_, a)| a.memory_calls > 0) {
            *net.entry((key.device, a.name)).or_default() +=
                i128::from(a.alloc_bytes) - i128::from(a.freed_bytes);
        }
        let mut net: Vec<(String, String, u64)> = net
            .into_iter()
            .filter(|(_, bytes)| *bytes > 0)
            .map(|((device, op), bytes)| (device_name(device), op.to_owned(), bytes as u64))
            .collect();
        net.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.1.cmp(&b.1)));
        net
    }

    /// The rows grouped by `group`, sorted by total time, longest first: device time when it
    /// was recorded, host time otherwise.
    pub fn rows(&self, group: GroupBy) -> Vec<Row> {
        type Group = (
            &'static str,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
        );
        let mut grouped: HashMap<Group, Aggregate> = HashMap::new();
        let by_phase = matches!(group, GroupBy::OpAndPhase | GroupBy::OpAndCallSite);
        let settings_links = config().forward_links;
        for (key, aggregate) in &self.rows {
            let phase = by_phase.then(|| phase_name(key));
            let call_site = (group == GroupBy::OpAndCallSite).then(|| {
                call_sites::call_site(key.stack).map_or_else(|| "-".to_owned(), |s| s.to_string())
            });
            let shapes = (group == GroupBy::OpAndShapes).then(|| {
                key.shapes
                    .as_deref()
                    .map_or_else(|| "-".to_owned(), shapes_text)
            });
            let device = (group == GroupBy::OpAndDevice).then(|| context_device::name(key.device));
            let forward_phase = phase
                .as_deref()
                .filter(|_| settings_links)
                .and_then(Pass::of_range)
                .map(|_| forward_phase_name(key.forward));
            grouped
                .entry((
                    aggregate.name,
                    phase,
                    shapes,
                    device,
                    call_site,
                    forward_phase,
                ))
                .or_insert_with(|| Aggregate::new(aggregate.name))
                .merge(aggregate);
        }
        let all: Duration = grouped.values().map(|a| a.total).sum();
        let device = self.has_device_time();
        let settings = config();
        let all_device: Duration = grouped.values().map(|a| a.device).sum();
        let percent = |part: Duration, all: Duration| {
            if all.is_zero() {
                0.0
            } else {
                100.0 * part.as_secs_f64() / all.as_secs_f64()
            }
        };
        let mut rows: Vec<Row> = grouped
            .into_iter()
            .map(
                |((op, phase, input_shapes, device_name, call_site, forward_phase), a)| Row {
                    op: op.to_owned(),
                    phase,
                    input_shapes,
                    device: device_name,
                    call_site,
                    forward_phase,
                    calls: a.count,
                    total_ns: a.total.as_nanos() as u64,
                    total_percent: percent(a.total, all),
                    mean_ns: (a.total.as_nanos() / u128::from(a.count.max(1))) as u64,
                    // A row with device time only (its calls ran while statistics were off) has no
                    // shortest call.
                    min_ns: a.min.min(a.max).as_nanos() as u64,
                    // The histogram answers with its bucket's upper edge: keep it within what was seen.
                    p50_ns: a.quantile_ns(0.5),
                    p95_ns: a.quantile_ns(0.95),
                    max_ns: a.max.as_nanos() as u64,
                    kernels: device.then_some(a.kernels),
                    device_total_ns: device.then_some(a.device.as_nanos() as u64),
                    device_mean_ns: device
                        .then_some((a.device.as_nanos() / u128::from(a.count.max(1))) as u64),
                    device_percent: device.then_some(percent(a.device, all_device)),
                    alloc_bytes: (a.memory_calls > 0).then_some(a.alloc_bytes),
                    freed_bytes: (a.memory_calls > 0).then_some(a.freed_bytes),
                    peak_bytes: (a.memory_calls > 0).then_some(a.peak_bytes),
                    flops: (a.work_calls > 0).then(|| a.work().flops),
                    bytes: (a.work_calls > 0).then(|| a.work().bytes),
                    roofline: roofline_of(&a, &settings),
                },
            )
            .collect();
        rows.sort_by(|a, b| {
            b.device_total_ns
                .cmp(&a.device_total_ns)
                .then_with(|| b.total_ns.cmp(&a.total_ns))
                .then_with(|| a.op.cmp(&b.op))
                .then_with(|| a.phase.cmp(&b.phase))
                .then_with(|| a.device.cmp(&b.device))
                .then_with(|| a.call_site.cmp(&b.call_site))
                .then_with(|| a.forward_phase.cmp(&b.forward_phase))
        });
        rows
    }

    /// The time per call stack in the folded format of flame graphs (inferno, flamegraph.pl,
    /// speedscope): one line per stack of the user's functions, outermost first, then the op,
    /// and its time in microseconds (`device`: its kernels' device time, else its host time).
    /// An op without a stack (call sites off, or none of the user's frames) is a root frame.
    /// With forward links, a backward or optimizer op linked to a forward op is under that
    /// op's stack, its pass in brackets: the model code that caused it, not the line that
    /// called `backward()`.
    ///
    /// ```text
    /// main;train;step;VisionModel::forward;conv2d 5120
    /// main;train;step;VisionModel::forward;conv2d;[backward];conv2d_x_backward 20480
    /// ```
    pub fn folded_stacks(&self, device: bool) -> String {
        let mut stacks: HashMap<String, Duration> = HashMap::new();
        let mut frames_of: HashMap<u32, String> = HashMap::new();
        let mut frames = |stack: u32| -> String {
            (frames_of.entry(stack))
                .or_insert_with(|| {
                    call_sites::user_frames(stack)
                        .into_iter()
                        .map(|frame| frame + ";")
                        .collect()
                })
                .clone()
        };
        for (key, aggregate) in &self.rows {
            let time = if device {
                aggregate.device
            } else {
                aggregate.total
            };
            if time.is_zero() {
                continue;
            }
            let name = aggregate.name.replace(';', ":");
            // A forward row's link is itself.
            let caused_by = (key.forward != 0 && Pass::of_range(&phase_name(key)).is_some())
                .then(|| lineage::forward_op(key.forward))
                .flatten()
                .filter(|forward| forward.stack != 0);
            let line = match caused_by {
                Some(forward) => format!(
                    "{}{};[{}];{name}",
                    frames(forward.stack),
                    forward.op.name().replace(';', ":"),
                    phase_name(key).replace(';', ":"),
                ),
                None => format!("{}{name}", frames(key.stack)),
            };
            *stacks.entry(line).or_default() += time;
        }
        let mut lines: Vec<(String, Duration)> = stacks.into_iter().collect();
        lines.sort_unstable();
        lines
            .into_iter()
            .map(|(stack, time)| {
                // Microseconds, and at least 1 for any time: a short op stays in the graph.
                let micros = time.as_nanos().div_ceil(1000);
                format!("{stack} {micros}\n")
            })
            .collect()
    }

    /// Total calls and time over all ops.
    pub fn totals(&self) -> (u64, Duration) {
        self.rows
            .values()
            .fold((0, Duration::ZERO), |(calls, time), a| {
                (calls + a.count, time + a.total)
            })
    }

    /// The rows as JSON: `{"total_calls", "total_ns", "rows": [...]}`.
    pub fn to_json(&self, group: GroupBy) -> String {
        let (calls, time) = self.totals();
        let mut json = serde_json::json!({
            "format_version": FORMAT_VERSION,
            "total_calls": calls,
            "total_ns": time.as_nanos() as u64,
            "rows": self.rows(group),
        });
        if let Some((kernels, device)) = self.device_totals() {
            json["total_kernels"] = kernels.into();
            json["device_total_ns"] = (device.as_nanos() as u64).into();
        }
        if host_was_untracked() {
            json["host_allocations_tracked"] = false.into();
        }
        if let Some(coverage) = self.work_coverage() {
            json["work"] = serde_json::to_value(coverage).unwrap_or_default();
        }
        serde_json::to_string_pretty(&json).unwrap_or_default()
    }

    /// The rows as a table laid out like `torch.profiler`'s `key_averages().table()`.
    pub fn table(&self, group: GroupBy) -> String {
        self.table_top(group, usize::MAX, "the JSON")
    }

    /// [`table`](Snapshot::table) with its `limit` longest rows (like `torch.profiler`'s
    /// `row_limit`), and a line that says how many more `json` (`ops.json`) has.
    pub fn table_top(&self, group: GroupBy, limit: usize, json: &str) -> String {
        let mut rows = self.rows(group);
        let more = rows.len().saturating_sub(limit);
        rows.truncate(limit);
        let name_width = rows.iter().map(|r| r.op.len()).max().unwrap_or(0).max(4);
        let mut columns: Vec<(String, usize)> = vec![("Name".into(), name_width)];
        // The key after the name, right-aligned like the numbers (shapes go last, unaligned).
        type KeyOf = fn(&Row) -> Option<&String>;
        let key: Option<(&str, KeyOf)> = match group {
            GroupBy::OpAndPhase | GroupBy::OpAndCallSite => Some(("Phase", |r| r.phase.as_ref())),
            GroupBy::OpAndDevice => Some(("Device", |r| r.device.as_ref())),
            GroupBy::Op | GroupBy::OpAndShapes => None,
        };
        if let Some((title, of)) = key {
            let width = rows
                .iter()
                .filter_map(|r| of(r).map(String::len))
                .max()
                .unwrap_or(0)
                .max(title.len());
            columns.push((title.into(), width));
        }
        // With forward links: the forward phase of backward and optimizer rows, after the phase.
        let linked = rows.iter().any(|r| r.forward_phase.is_some());
        if linked {
            let title = "Fwd Phase";
            let width = rows
                .iter()
                .filter_map(|r| r.forward_phase.as_ref().map(String::len))
                .max()
                .unwrap_or(0)
                .max(title.len());
            columns.push((title.into(), width));
        }
        let device = self.has_device_time();
        let device_titles: &[&str] = if device {
            &["Kernels", "Device Total", "Device Mean", "Device %"]
        } else {
            &[]
        };
        let memory = self.has_memory();
        let memory_titles: &[&str] = if memory { &["Alloc", "Peak"] } else { &[] };
        let settings = config();
        let coverage = self.work_coverage();
        let roofline = settings.roofline_in_table && coverage.is_some();
        let roofline_titles: &[&str] = match (roofline, settings.peaks.is_some()) {
            (false, _) => &[],
            (true, false) => &["FLOP/s", "FLOP/B"],
            (true, true) => &["FLOP/s", "FLOP/B", "Roofline %", "Limit"],
        };
        for title in [
            "# of Calls",
            "Total",
            "Total %",
            "Mean",
            "Min",
            "p50",
            "p95",
            "Max",
        ]
        .iter()
        .chain(device_titles)
        .chain(memory_titles)
        .chain(roofline_titles)
        {
            columns.push(((*title).into(), 12));
        }
        // The last column, unaligned: shapes or call sites.
        let last: Option<(&str, KeyOf)> = match group {
            GroupBy::OpAndShapes => Some(("Input Shapes", |r| r.input_shapes.as_ref())),
            GroupBy::OpAndCallSite => Some(("Call Site", |r| r.call_site.as_ref())),
            _ => None,
        };
        let rule: String = columns
            .iter()
            .map(|(_, w)| format!("{}  ", "-".repeat(*w)))
            .collect::<String>()
            + if last.is_some() {
                "------------------------------  "
            } else {
                ""
            };
        let mut out = String::new();
        if settings.host_times_are_launches && !device {
            // Said first: the ranking below is not the device's.
            let _ = writeln!(
                out,
                "Ranked by host time: on this asynchronous backend an op's host time is its \
                 launch, not its work on the device (`[stats] device_time = true` ranks by device \
                 time)"
            );
        }
        let rule = rule.trim_end();
        let _ = writeln!(out, "{rule}");
        let header: String = columns
            .iter()
            .map(|(t, w)| format!("{t:>w$}  "))
            .collect::<String>()
            + last.map_or("", |(title, _)| title);
        let _ = writeln!(out, "{}", header.trim_end());
        let _ = writeln!(out, "{rule}");
        for row in &rows {
            let mut cells = vec![row.op.clone()];
            cells.extend(key.and_then(|(_, of)| of(row)).cloned());
            if linked {
                cells.push(row.forward_phase.clone().unwrap_or_default());
            }
            cells.push(row.calls.to_string());
            cells.push(time_text(row.total_ns));
            cells.push(format!("{:.2}%", row.total_percent));
            for ns in [row.mean_ns, row.min_ns, row.p50_ns, row.p95_ns, row.max_ns] {
                cells.push(time_text(ns));
            }
            if let (Some(kernels), Some(total), Some(mean), Some(percent)) = (
                row.kernels,
                row.device_total_ns,
                row.device_mean_ns,
                row.device_percent,
            ) {
                cells.push(kernels.to_string());
                cells.push(time_text(total));
                cells.push(time_text(mean));
                cells.push(format!("{percent:.2}%"));
            }
            if memory {
                for bytes in [row.alloc_bytes, row.peak_bytes] {
                    cells.push(bytes.map_or_else(|| "-".to_owned(), bytes_text));
                }
            }
            if roofline {
                let point = row.roofline.as_ref();
                cells.push(point.map_or_else(|| "-".to_owned(), |p| rate_text(p.flops_per_s, "")));
                cells.push(point.map_or_else(|| "-".to_owned(), |p| format!("{:.2}", p.intensity)));
                if settings.peaks.is_some() {
                    let share = point.and_then(|p| p.share);
                    cells.push(
                        share.map_or_else(|| "-".to_owned(), |s| format!("{:.1}%", 100.0 * s)),
                    );
                    let limit = point.and_then(|p| p.limit);
                    cells.push(match limit {
                        Some(Limit::Compute) => "compute".to_owned(),
                        Some(Limit::Memory) => "memory".to_owned(),
                        None => "-".to_owned(),
                    });
                }
            }
            let mut line: String = cells
                .iter()
                .zip(&columns)
                .map(|(c, (_, w))| format!("{c:>w$}  "))
                .collect();
            if let Some(text) = last.and_then(|(_, of)| of(row)) {
                line.push_str(text);
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
        if more > 0 {
            let _ = writeln!(out, "... {more} more rows (all of them in {json})");
        }
        let _ = writeln!(out, "{rule}");
        let (calls, time) = self.totals();
        let _ = write!(
            out,
            "Total op time: {} ({calls} calls)",
            time_text(time.as_nanos() as u64)
        );
        if let Some((kernels, device)) = self.device_totals() {
            let _ = write!(
                out,
                "; device time: {} ({kernels} kernels)",
                time_text(device.as_nanos() as u64)
            );
        }
        if let Some(coverage) = &coverage {
            let _ = write!(out, "\n{}", coverage_text(coverage));
        }
        if host_was_untracked() {
            let _ = write!(
                out,
                "\nHost allocations not tracked: install burn_profiled::memory::TrackingAllocator \
                 as the global allocator to see them"
            );
        }
        out
    }
}

impl Aggregate {
    /// The calls' work: unknown if any call had no formula.
    fn work(&self) -> Work {
        match self.unknown_work_calls {
            0 => Work {
                flops: Some(self.flops),
                bytes: Some(self.bytes),
            },
            _ => Work::default(),
        }
    }

    /// The time that is the calls' own: their kernels', else their host time unless that is
    /// only their launches.
    fn own_time(&self, host_times_are_launches: bool) -> Option<(&'static str, Duration)> {
        if self.kernels > 0 {
            Some(("device", self.device))
        } else if !host_times_are_launches {
            Some(("host", self.total))
        } else {
            None
        }
    }
}

/// `a`'s rates and place on the roofline, where its work is known, it did FLOPs, and it has a
/// time of its own.
fn roofline_of(a: &Aggregate, settings: &super::StatsConfig) -> Option<RowRoofline> {
    let work = a.work();
    let (flops, bytes) = (work.flops? as f64, work.bytes? as f64);
    let (time, own) = a.own_time(settings.host_times_are_launches)?;
    let seconds = own.as_secs_f64();
    if flops == 0.0 || bytes == 0.0 || seconds <= 0.0 {
        return None;
    }
    let point = settings.peaks.and_then(|peaks| peaks.place(&work, seconds));
    Some(RowRoofline {
        time,
        intensity: flops / bytes,
        flops_per_s: flops / seconds,
        bytes_per_s: bytes / seconds,
        bound_flops_per_s: point.map(|p| p.bound_flops_per_s),
        share: point.map(|p| p.share),
        limit: point.map(|p| p.limit),
    })
}

/// How much of the ops' time has a count of its work, and the ops with none.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkCoverage {
    /// The share of all ops' time (device time where recorded, else host time) in ops whose
    /// work is known, in percent.
    pub counted_percent: f64,
    /// The ops with no formula, by name.
    pub unknown_ops: Vec<String>,
    /// The share of the time in them, in percent.
    pub unknown_percent: f64,
    /// The device's peaks the roofline uses, when given or measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peaks: Option<Peaks>,
    /// How the peaks were measured, when they were (`[roofline] calibrate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
    /// Whether the host times are launches (an asynchronous backend), so that rates come only
    /// from device time.
    pub host_times_are_launches: bool,
}

impl Snapshot {
    /// How much of the time has a count of its work; `None` when work was not counted.
    pub fn work_coverage(&self) -> Option<WorkCoverage> {
        if !self.rows.values().any(|a| a.work_calls > 0) {
            return None;
        }
        let device = self.has_device_time();
        let time = |a: &Aggregate| if device { a.device } else { a.total };
        let all: Duration = self.rows.values().map(time).sum();
        let (mut counted, mut unknown) = (Duration::ZERO, Duration::ZERO);
        let mut unknown_ops: Vec<String> = Vec::new();
        for a in self.rows.values() {
            if a.work_calls == 0 {
                continue;
            }
            if a.unknown_work_calls == 0 {
                counted += time(a);
            } else {
                unknown += time(a);
                unknown_ops.push(a.name.to_owned());
            }
        }
        unknown_ops.sort();
        unknown_ops.dedup();
        let percent = |part: Duration| match all.is_zero() {
            true => 0.0,
            false => 100.0 * part.as_secs_f64() / all.as_secs_f64(),
        };
        let settings = config();
        Some(WorkCoverage {
            counted_percent: percent(counted),
            unknown_ops,
            unknown_percent: percent(unknown),
            peaks: settings.peaks,
            calibration: super::calibration(),
            host_times_are_launches: settings.host_times_are_launches && !device,
        })
    }
}

/// The lines under the op table about the work counted: how much of the time has a count,
/// what has none, and why there are no rates where the host times are launches.
fn coverage_text(coverage: &WorkCoverage) -> String {
    let mut text = format!(
        "Work counted for {:.1}% of op time",
        coverage.counted_percent
    );
    if !coverage.unknown_ops.is_empty() {
        let _ = write!(
            text,
            "; no formula for {} ({:.1}%)",
            coverage.unknown_ops.join(", "),
            coverage.unknown_percent
        );
    }
    if coverage.host_times_are_launches {
        text.push_str(
            "\nNo FLOP/s or roofline from these host times: on this asynchronous backend an op's \
             host time is its launch, and the wait lands in `sync`. Device time \
             (`[stats] device_time`) or per-op sync (`[nvtx] per_op_sync`) gives each op its own time",
        );
    }
    text
}

/// A time as `torch.profiler` prints it: `12.345us`, `1.234ms`, `2.000s`.
pub(super) fn time_text(ns: u64) -> String {
    let ns = ns as f64;
    if ns >= 1e9 {
        format!("{:.3}s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3}ms", ns / 1e6)
    } else {
        format!("{:.3}us", ns / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{GroupBy, time_text};
    use crate::context::device::tests::{Gpu, gpu_id};
    use crate::context::op::Op;
    use crate::sinks::{TEST_SERIAL, stats};

    #[test]
    fn rows_group_by_device_with_a_device_column() {
        let _serial = TEST_SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        static COMPUTE: Op = Op::new("by_device_matmul\0");
        static ALL_REDUCE: Op = Op::new("by_device_all_reduce\0");
        let (gpu0, gpu1) = (gpu_id(&Gpu(0)), gpu_id(&Gpu(1)));
        stats::reset();
        stats::start(stats::StatsConfig::default());
        let us = Duration::from_micros;
        super::super::record(&COMPUTE, us(100), None, (gpu0, 0, 0), None, None);
        super::super::record(&COMPUTE, us(300), None, (gpu1, 0, 0), None, None);
        super::super::record(&ALL_REDUCE, us(50), None, (gpu0, 0, 0), None, None);
        super::super::record(&ALL_REDUCE, us(450), None, (gpu1, 0, 0), None, None);
        super::super::record(&ALL_REDUCE, us(500), None, (0, 0, 0), None, None);
        stats::stop();
        let snapshot = stats::snapshot();

        assert_eq!(snapshot.devices(), ["Gpu(0)", "Gpu(1)"]);
        let rows: Vec<(String, Option<String>, u64)> = snapshot
            .rows(GroupBy::OpAndDevice)
            .into_iter()
            .map(|row| (row.op, row.device, row.total_ns))
            .collect();
        let row =
            |op: &str, device: &str, us: u64| (op.to_owned(), Some(device.to_owned()), us * 1_000);
        assert_eq!(
            rows,
            [
                row("by_device_all_reduce", "-", 500),
                row("by_device_all_reduce", "Gpu(1)", 450),
                row("by_device_matmul", "Gpu(1)", 300),
                row("by_device_matmul", "Gpu(0)", 100),
                row("by_device_all_reduce", "Gpu(0)", 50),
            ]
        );
        let by_op = snapshot.rows(GroupBy::Op);
        assert!(by_op.iter().all(|row| row.device.is_none()));
        assert_eq!(by_op[0].total_ns, 1_000_000, "all_reduce over all devices");

        let table = snapshot.table(GroupBy::OpAndDevice);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[1],
            "                Name  Device    # of Calls         Total       Total %          Mean           Min           p50           p95           Max"
        );
        assert_eq!(
            lines[4],
            "by_device_all_reduce  Gpu(1)             1     450.000us        32.14%     450.000us     450.000us     450.000us     450.000us     450.000us"
        );
        let json: serde_json::Value =
            serde_json::from_str(&snapshot.to_json(GroupBy::OpAndDevice)).unwrap();
        assert_eq!(json["rows"][1]["device"], "Gpu(1)");

        // The top rows only, and how many more the file has.
        let top = snapshot.table_top(GroupBy::OpAndDevice, 2, "ops_by_device.json");
        let lines: Vec<&str> = top.lines().collect();
        assert_eq!(lines[3..5], table.lines().collect::<Vec<_>>()[3..5]);
        assert_eq!(
            lines[5],
            "... 3 more rows (all of them in ops_by_device.json)"
        );
        assert!(
            lines[7].starts_with("Total op time: 1.400ms (5 calls)"),
            "{top}"
        );
        stats::reset();
    }

    #[test]
    fn counted_work_gives_rates_a_roofline_and_the_share_of_time_counted() {
        use crate::roofline::Peaks;
        use crate::work::Work;

        let _serial = TEST_SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        static MATMUL: Op = Op::new("roofline_matmul\0");
        static ADD: Op = Op::new("roofline_add\0");
        static SORT: Op = Op::new("roofline_sort\0");
        let work = |flops, bytes| {
            Some(Work {
                flops: Some(flops),
                bytes: Some(bytes),
            })
        };
        let peaks = Peaks {
            flops_per_s: 1e12,
            bytes_per_s: 1e11,
        };
        stats::reset();
        stats::start(stats::StatsConfig {
            work: true,
            peaks: Some(peaks),
            roofline_in_table: true,
            ..stats::StatsConfig::default()
        });
        let us = Duration::from_micros;
        // 2 GFLOP over 12 MB in 4 ms: intensity 166.7, beyond the ridge (10).
        for _ in 0..2 {
            super::super::record(
                &MATMUL,
                us(2_000),
                None,
                (0, 0, 0),
                None,
                work(1_000_000_000, 6_000_000),
            );
        }
        // 1 MFLOP over 12 MB in 3 ms: memory-bound, 4 GB/s of 100.
        super::super::record(
            &ADD,
            us(3_000),
            None,
            (0, 0, 0),
            None,
            work(1_000_000, 12_000_000),
        );
        super::super::record(
            &SORT,
            us(1_000),
            None,
            (0, 0, 0),
            None,
            Some(Work::default()),
        );
        stats::stop();
        let snapshot = stats::snapshot();
        let rows = snapshot.rows(GroupBy::Op);

        let matmul = &rows[0];
        assert_eq!(matmul.op, "roofline_matmul");
        assert_eq!(matmul.flops, Some(Some(2_000_000_000)));
        assert_eq!(matmul.bytes, Some(Some(12_000_000)));
        let point = matmul.roofline.as_ref().unwrap();
        assert_eq!(point.time, "host");
        assert_eq!(point.flops_per_s, 2e9 / 4e-3);
        assert_eq!(point.limit, Some(crate::roofline::Limit::Compute));
        assert!((point.share.unwrap() - 0.5).abs() < 1e-12);

        let add = &rows[1];
        let point = add.roofline.as_ref().unwrap();
        assert_eq!(point.limit, Some(crate::roofline::Limit::Memory));
        assert!((point.bytes_per_s - 4e9).abs() < 1.0);
        assert!((point.share.unwrap() - 0.04).abs() < 1e-12);

        let sort = &rows[2];
        assert_eq!(
            (sort.flops, sort.bytes),
            (Some(None), Some(None)),
            "unknown, not zero"
        );
        assert_eq!(sort.roofline, None);

        let coverage = snapshot.work_coverage().unwrap();
        assert_eq!(coverage.unknown_ops, ["roofline_sort"]);
        assert_eq!(coverage.counted_percent, 87.5);
        let json: serde_json::Value = serde_json::from_str(&snapshot.to_json(GroupBy::Op)).unwrap();
        assert_eq!(json["rows"][2]["flops"], serde_json::Value::Null);
        assert_eq!(json["rows"][0]["roofline"]["limit"], "compute");
        assert_eq!(json["work"]["unknown_ops"][0], "roofline_sort");
        assert_eq!(json["work"]["peaks"]["flops_per_s"], 1e12);

        let table = snapshot.table(GroupBy::Op);
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[1].ends_with("FLOP/s        FLOP/B    Roofline %         Limit"),
            "{table}"
        );
        assert!(
            lines[3].ends_with("500.0 G        166.67         50.0%       compute"),
            "{table}"
        );
        assert!(
            lines[5].ends_with("-             -             -             -"),
            "{table}"
        );
        assert_eq!(
            lines.last().copied(),
            Some("Work counted for 87.5% of op time; no formula for roofline_sort (12.5%)")
        );
        stats::reset();
    }

    #[test]
    fn host_times_that_are_launches_give_no_rates_and_say_why() {
        use crate::work::Work;

        let _serial = TEST_SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        static LAUNCHED: Op = Op::new("launched_matmul\0");
        stats::reset();
        stats::start(stats::StatsConfig {
            work: true,
            host_times_are_launches: true,
            ..stats::StatsConfig::default()
        });
        let work = Work {
            flops: Some(1_000),
            bytes: Some(100),
        };
        super::super::record(
            &LAUNCHED,
            Duration::from_micros(5),
            None,
            (0, 0, 0),
            None,
            Some(work),
        );
        stats::stop();
        let snapshot = stats::snapshot();
        let row = &snapshot.rows(GroupBy::Op)[0];
        assert_eq!(row.flops, Some(Some(1_000)), "the count stands");
        assert_eq!(row.roofline, None, "a launch time is no execution time");
        let table = snapshot.table(GroupBy::Op);
        assert!(
            table.contains("on this asynchronous backend an op's host time is its launch, and the wait lands in `sync`"),
            "{table}"
        );
        assert!(
            table.starts_with("Ranked by host time: on this asynchronous backend"),
            "the table says it first: {table}"
        );
        // Kernels' device time is the op's own: rates from it.
        stats::record_kernel(&LAUNCHED, (0, 0, 0, 0), None, Duration::from_micros(2));
        let snapshot = stats::snapshot();
        let point = snapshot.rows(GroupBy::Op)[0].roofline.clone().unwrap();
        assert_eq!(point.time, "device");
        assert_eq!(point.flops_per_s, 1_000.0 / 2e-6);
        assert!(!snapshot.table(GroupBy::Op).contains("asynchronous backend"));
        stats::reset();
    }

    #[test]
    fn times_print_like_torch_profiler() {
        assert_eq!(time_text(812), "0.812us");
        assert_eq!(time_text(12_345), "12.345us");
        assert_eq!(time_text(1_234_567), "1.235ms");
        assert_eq!(time_text(2_000_000_000), "2.000s");
    }
}
