//! Per-op statistics: how often each op ran and how long it took, grouped by op, by op and the
//! innermost user range (the phase: `forward`, `backward`, `optimizer`, ...), or by op and
//! input shapes; printed like `torch.profiler`'s `key_averages().table()` or as JSON.
//!
//! ```
//! use burn::backend::NdArray;
//! use burn::tensor::Tensor;
//! use burn_profiled::{Profiled, stats};
//!
//! stats::start(stats::StatsConfig::default());
//! let x = Tensor::<Profiled<NdArray>, 2>::ones([4, 4], &Default::default());
//! let _y = x.clone().matmul(x).exp();
//! stats::stop();
//! let table = stats::snapshot().table(stats::GroupBy::Op);
//! assert!(table.contains("float_matmul"));
//! ```
//!
//! Times are host times of the op call: exact for synchronous backends (NdArray), launch time
//! for asynchronous ones unless per-op sync is on
//! ([`probe::set_op_sync`](crate::probe::set_op_sync)). While the stopwatch is enabled and in
//! warm-up, nothing is recorded.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use burn_std::Shape;
use hdrhistogram::Histogram;
use rustc_hash::FxHashMap;
use serde::Serialize;
use thread_local::ThreadLocal;

use crate::context::op::Op;
use crate::context::switches::{self, SHAPES, STATS};
use crate::context::{phase, warmup};

/// What [`start`] records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatsConfig {
    /// Also key the statistics by the shapes of the op's tensor arguments (costs a `Vec` of
    /// shapes per op).
    pub by_shapes: bool,
}

/// One row's key: op, phase and input shapes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    /// The op's address: one `Op` per forwarded method.
    op: usize,
    phase: u32,
    shapes: Option<Box<[Shape]>>,
}

struct Aggregate {
    name: &'static str,
    count: u64,
    total: Duration,
    min: Duration,
    max: Duration,
    histogram: Histogram<u32>,
}

impl Aggregate {
    fn new(name: &'static str) -> Self {
        Aggregate {
            name,
            count: 0,
            total: Duration::ZERO,
            min: Duration::MAX,
            max: Duration::ZERO,
            // Two significant digits: p50/p95 within 1%, a few KiB per row.
            histogram: Histogram::new(2)
                .unwrap_or_else(|_| unreachable!("2 significant digits is valid")),
        }
    }

    fn record(&mut self, time: Duration) {
        self.count += 1;
        self.total += time;
        self.min = self.min.min(time);
        self.max = self.max.max(time);
        let _ = self.histogram.record((time.as_nanos() as u64).max(1));
    }

    fn merge(&mut self, other: &Aggregate) {
        self.count += other.count;
        self.total += other.total;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        let _ = self.histogram.add(&other.histogram);
    }
}

static RECORDING: AtomicBool = AtomicBool::new(false);
static CONFIG: Mutex<StatsConfig> = Mutex::new(StatsConfig { by_shapes: false });
/// Each thread's rows, merged when a snapshot is taken.
static THREADS: ThreadLocal<Mutex<FxHashMap<Key, Aggregate>>> = ThreadLocal::new();

/// Starts recording op statistics (again: rows recorded before are kept, see [`reset`]).
pub fn start(config: StatsConfig) {
    *CONFIG.lock().unwrap_or_else(PoisonError::into_inner) = config;
    RECORDING.store(true, Ordering::Relaxed);
    switches::set(STATS, true);
    switches::set(SHAPES, config.by_shapes);
}

/// Stops recording; the statistics stay until [`reset`].
pub fn stop() {
    RECORDING.store(false, Ordering::Relaxed);
    switches::set(STATS | SHAPES, false);
}

/// Whether op statistics are being recorded.
pub fn is_recording() -> bool {
    RECORDING.load(Ordering::Relaxed)
}

/// Forgets every row recorded so far.
pub fn reset() {
    for thread in THREADS.iter() {
        thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// Records one op; called by the probe on the op's thread.
pub(crate) fn record(op: &'static Op, time: Duration, shapes: Option<Vec<Shape>>) {
    if warmup::in_warmup() {
        return;
    }
    let key = Key {
        op: op as *const Op as usize,
        phase: phase::current(),
        shapes: shapes.map(Vec::into_boxed_slice),
    };
    let mut rows = THREADS
        .get_or_default()
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    rows.entry(key)
        .or_insert_with(|| Aggregate::new(op.name()))
        .record(time);
}

/// How rows are grouped in a [`Snapshot`]'s table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    /// One row per op.
    Op,
    /// One row per op and phase (the innermost user range the op ran in).
    OpAndPhase,
    /// One row per op and input shapes (needs [`StatsConfig::by_shapes`]).
    OpAndShapes,
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
}

/// All rows recorded so far, merged over threads.
pub struct Snapshot {
    rows: HashMap<Key, Aggregate>,
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

fn shapes_text(shapes: &[Shape]) -> String {
    let shapes: Vec<String> = shapes
        .iter()
        .map(|s| format!("{:?}", s.as_slice()))
        .collect();
    format!("[{}]", shapes.join(", "))
}

impl Snapshot {
    /// The rows grouped by `group`, sorted by total time, longest first.
    pub fn rows(&self, group: GroupBy) -> Vec<Row> {
        let mut grouped: HashMap<(&'static str, Option<String>, Option<String>), Aggregate> =
            HashMap::new();
        for (key, aggregate) in &self.rows {
            let phase = (group == GroupBy::OpAndPhase).then(|| phase::name(key.phase));
            let shapes = (group == GroupBy::OpAndShapes).then(|| {
                key.shapes
                    .as_deref()
                    .map_or_else(|| "-".to_owned(), shapes_text)
            });
            grouped
                .entry((aggregate.name, phase, shapes))
                .or_insert_with(|| Aggregate::new(aggregate.name))
                .merge(aggregate);
        }
        let all: Duration = grouped.values().map(|a| a.total).sum();
        let mut rows: Vec<Row> = grouped
            .into_iter()
            .map(|((op, phase, input_shapes), a)| Row {
                op: op.to_owned(),
                phase,
                input_shapes,
                calls: a.count,
                total_ns: a.total.as_nanos() as u64,
                total_percent: if all.is_zero() {
                    0.0
                } else {
                    100.0 * a.total.as_secs_f64() / all.as_secs_f64()
                },
                mean_ns: (a.total.as_nanos() / u128::from(a.count.max(1))) as u64,
                min_ns: a.min.as_nanos() as u64,
                // The histogram answers with its bucket's upper edge: keep it within what was seen.
                p50_ns: a
                    .histogram
                    .value_at_quantile(0.5)
                    .clamp(a.min.as_nanos() as u64, a.max.as_nanos() as u64),
                p95_ns: a
                    .histogram
                    .value_at_quantile(0.95)
                    .clamp(a.min.as_nanos() as u64, a.max.as_nanos() as u64),
                max_ns: a.max.as_nanos() as u64,
            })
            .collect();
        rows.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then_with(|| a.op.cmp(&b.op))
                .then_with(|| a.phase.cmp(&b.phase))
        });
        rows
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
        let json = serde_json::json!({
            "total_calls": calls,
            "total_ns": time.as_nanos() as u64,
            "rows": self.rows(group),
        });
        serde_json::to_string_pretty(&json).unwrap_or_default()
    }

    /// The rows as a table laid out like `torch.profiler`'s `key_averages().table()`.
    pub fn table(&self, group: GroupBy) -> String {
        let rows = self.rows(group);
        let name_width = rows.iter().map(|r| r.op.len()).max().unwrap_or(0).max(4);
        let mut columns: Vec<(String, usize)> = vec![("Name".into(), name_width)];
        if group == GroupBy::OpAndPhase {
            let width = rows
                .iter()
                .filter_map(|r| r.phase.as_ref().map(String::len))
                .max()
                .unwrap_or(0)
                .max(5);
            columns.push(("Phase".into(), width));
        }
        for title in [
            "# of Calls",
            "Total",
            "Total %",
            "Mean",
            "Min",
            "p50",
            "p95",
            "Max",
        ] {
            columns.push((title.into(), 12));
        }
        let shapes = group == GroupBy::OpAndShapes;
        let rule: String = columns
            .iter()
            .map(|(_, w)| format!("{}  ", "-".repeat(*w)))
            .collect::<String>()
            + if shapes {
                "------------------------------  "
            } else {
                ""
            };
        let mut out = String::new();
        let rule = rule.trim_end();
        let _ = writeln!(out, "{rule}");
        let header: String = columns
            .iter()
            .map(|(t, w)| format!("{t:>w$}  "))
            .collect::<String>()
            + if shapes {
                "Input Shapes                    "
            } else {
                ""
            };
        let _ = writeln!(out, "{}", header.trim_end());
        let _ = writeln!(out, "{rule}");
        for row in &rows {
            let mut cells = vec![row.op.clone()];
            if let Some(phase) = &row.phase {
                cells.push(phase.clone());
            }
            cells.push(row.calls.to_string());
            cells.push(time_text(row.total_ns));
            cells.push(format!("{:.2}%", row.total_percent));
            for ns in [row.mean_ns, row.min_ns, row.p50_ns, row.p95_ns, row.max_ns] {
                cells.push(time_text(ns));
            }
            let mut line: String = cells
                .iter()
                .zip(&columns)
                .map(|(c, (_, w))| format!("{c:>w$}  "))
                .collect();
            if let Some(shapes) = &row.input_shapes {
                line.push_str(shapes);
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
        let _ = writeln!(out, "{rule}");
        let (calls, time) = self.totals();
        let _ = write!(
            out,
            "Total op time: {} ({calls} calls)",
            time_text(time.as_nanos() as u64)
        );
        out
    }
}

/// A time as `torch.profiler` prints it: `12.345us`, `1.234ms`, `2.000s`.
fn time_text(ns: u64) -> String {
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
    use super::time_text;

    #[test]
    fn times_print_like_torch_profiler() {
        assert_eq!(time_text(812), "0.812us");
        assert_eq!(time_text(12_345), "12.345us");
        assert_eq!(time_text(1_234_567), "1.235ms");
        assert_eq!(time_text(2_000_000_000), "2.000s");
    }
}
