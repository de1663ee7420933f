//! Per-op statistics: how often each op ran and how long it took, grouped by op, by op and the
//! innermost user range (the phase: `forward`, `backward`, `optimizer`, ...), or by op and
//! input shapes; printed like `torch.profiler`'s `key_averages().table()` or as JSON.
//!
//! ```
//! # use burn_profiled_core as burn_profiled;
//! use burn_profiled::stats;
//!
//! stats::start(stats::StatsConfig::default());
//! // ... the steps to look at, on a profiled backend or device
//! stats::stop();
//! let table = stats::snapshot().table(stats::GroupBy::Op);
//! assert!(table.contains("# of Calls"));
//! ```
//!
//! Times are host times of the op call: exact for synchronous backends (NdArray), launch time
//! for asynchronous ones unless per-op sync is on
//! (`probe::set_op_sync`). While the stopwatch is enabled and in
//! warm-up, nothing is recorded.

use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::shape::Shape;
use hdrhistogram::Histogram;
use rustc_hash::FxHashMap;
use thread_local::ThreadLocal;

use crate::call_sites;
use crate::context::lineage;
use crate::context::op::Op;
use crate::context::switches::{self, LINKS, SHAPES, STATS};
use crate::context::{phase, warmup};
use crate::roofline::{Calibration, Peaks};
use crate::work::Work;

mod kept_alive;
mod memory;
mod modules;
mod report;

pub use kept_alive::KeptAlive;
#[doc(hidden)]
pub use kept_alive::{kept_alive, maker};
pub use memory::{MemoryPeak, StepAllocation, memory_peaks, step_allocations};
#[doc(hidden)]
pub use memory::{OpMemory, host_untracked, host_was_untracked, record_memory};
pub use modules::{ModuleKey, ModuleRow, NOT_LINKED};
pub use report::{
    FORMAT_VERSION, GroupBy, PhasePeak, Row, RowRoofline, Snapshot, WorkCoverage, snapshot,
};
#[doc(hidden)]
pub use report::{bytes_text, shapes_text};

/// What [`start`] records.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StatsConfig {
    /// Also key the statistics by the shapes of the op's tensor arguments (costs a `Vec` of
    /// shapes per op).
    pub by_shapes: bool,
    /// Also record the memory each op allocated and freed, and the memory in use when it
    /// ended: its device's, read on its launch thread when that can read memory
    /// (`LaunchThread::with_memory`), else the host's
    /// when a `TrackingAllocator` is installed.
    pub memory: bool,
    /// Also count each op's work (FLOPs and bytes, [`work`](crate::work)) from its tensors'
    /// shapes and dtypes, for its achieved rates and its place on the roofline.
    pub work: bool,
    /// The device's peaks, for each op's share of the roofline (with `work`).
    pub peaks: Option<Peaks>,
    /// Whether an op's host time is only its launch (an asynchronous backend without per-op
    /// sync): then no rate is computed from it, only from device time.
    pub host_times_are_launches: bool,
    /// Print the roofline's columns in the [`Snapshot::table`] too.
    pub roofline_in_table: bool,
    /// Also key the statistics by each op's call stack, for its call site
    /// ([`GroupBy::OpAndCallSite`]) and a flame graph; an op outside any user range gets the
    /// phase Burn's frames give it (`backward`, `optimizer`). The edition's probe takes the
    /// stacks ([`call_sites`]).
    pub call_sites: bool,
    /// Also link each backward and optimizer op to the forward op it works for, from the
    /// tensors they share ([`lineage`](crate::context::lineage)): each such row gets its
    /// forward phase, and [`Snapshot::modules`] gives the time per module (forward phase) with
    /// its backward and optimizer. The edition's probe takes the tensors' identities.
    pub forward_links: bool,
}

/// One row's key: op, phase, input shapes, device and call stack.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    /// The op's address: one `Op` per forwarded method.
    op: usize,
    phase: u32,
    shapes: Option<Box<[Shape]>>,
    /// The op's device (`context::device`), 0 when unknown.
    device: u32,
    /// The op's call stack ([`call_sites::capture`]), 0 when not taken.
    stack: u32,
    /// The forward op a backward or optimizer op works for ([`lineage`] link), 0 for none.
    forward: u32,
}

struct Aggregate {
    name: &'static str,
    count: u64,
    total: Duration,
    min: Duration,
    max: Duration,
    histogram: Histogram<u32>,
    /// Kernels the op's calls launched, and their device time (the device-time sink's).
    kernels: u64,
    device: Duration,
    /// Calls whose memory was read, the bytes they allocated and freed, and the most memory in
    /// use at the end of one.
    memory_calls: u64,
    alloc_bytes: u64,
    freed_bytes: u64,
    peak_bytes: u64,
    /// Calls whose work was counted, those of them with no formula, and the FLOPs and bytes of
    /// the others.
    work_calls: u64,
    unknown_work_calls: u64,
    flops: u64,
    bytes: u64,
}

/// The longest call the histograms tell apart (an hour); longer ones count as an hour there
/// (their total, min and max stay exact).
const LONGEST_NS: u64 = 3_600_000_000_000;

impl Aggregate {
    fn new(name: &'static str) -> Self {
        Aggregate {
            name,
            count: 0,
            total: Duration::ZERO,
            min: Duration::MAX,
            max: Duration::ZERO,
            // Two significant digits: p50/p95 within 1%. Sized once for calls up to an hour
            // (18 KiB per row), so that a row's memory does not grow as longer calls come:
            // a run's memory stays flat once its rows exist.
            histogram: Histogram::new_with_bounds(1, LONGEST_NS, 2)
                .unwrap_or_else(|_| unreachable!("valid bounds and 2 significant digits")),
            kernels: 0,
            device: Duration::ZERO,
            memory_calls: 0,
            alloc_bytes: 0,
            freed_bytes: 0,
            peak_bytes: 0,
            work_calls: 0,
            unknown_work_calls: 0,
            flops: 0,
            bytes: 0,
        }
    }

    /// The `q` quantile of the calls' times, within the shortest and the longest; 0 for a row
    /// with device time only (its calls ran while statistics were off).
    fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        self.histogram
            .value_at_quantile(q)
            .clamp(self.min.as_nanos() as u64, self.max.as_nanos() as u64)
    }

    fn record(&mut self, time: Duration) {
        self.count += 1;
        self.total += time;
        self.min = self.min.min(time);
        self.max = self.max.max(time);
        let _ = self
            .histogram
            .record((time.as_nanos() as u64).clamp(1, LONGEST_NS));
    }

    fn merge(&mut self, other: &Aggregate) {
        self.count += other.count;
        self.total += other.total;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        let _ = self.histogram.add(&other.histogram);
        self.kernels += other.kernels;
        self.device += other.device;
        self.memory_calls += other.memory_calls;
        self.alloc_bytes += other.alloc_bytes;
        self.freed_bytes += other.freed_bytes;
        self.peak_bytes = self.peak_bytes.max(other.peak_bytes);
        self.work_calls += other.work_calls;
        self.unknown_work_calls += other.unknown_work_calls;
        self.flops += other.flops;
        self.bytes += other.bytes;
    }

    fn add_work(&mut self, work: Work) {
        self.work_calls += 1;
        match (work.flops, work.bytes) {
            (Some(flops), Some(bytes)) => {
                self.flops += flops;
                self.bytes += bytes;
            }
            _ => self.unknown_work_calls += 1,
        }
    }
}

static RECORDING: AtomicBool = AtomicBool::new(false);
static CONFIG: Mutex<StatsConfig> = Mutex::new(StatsConfig {
    by_shapes: false,
    memory: false,
    work: false,
    peaks: None,
    host_times_are_launches: false,
    forward_links: false,
    roofline_in_table: false,
    call_sites: false,
});
/// Whether rows are keyed by shapes ([`StatsConfig::by_shapes`]); ops collect their shapes
/// also to count their work.
static BY_SHAPES: AtomicBool = AtomicBool::new(false);
/// Whether ops count their work ([`StatsConfig::work`]).
static WORK: AtomicBool = AtomicBool::new(false);
/// Whether ops record their memory ([`StatsConfig::memory`]).
static MEMORY: AtomicBool = AtomicBool::new(false);
/// How many times recording started: memory read in an earlier recording is stale.
static MEMORY_GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Each thread's rows, merged when a snapshot is taken.
static THREADS: ThreadLocal<Mutex<FxHashMap<Key, Aggregate>>> = ThreadLocal::new();

/// Starts recording op statistics (again: rows recorded before are kept, see [`reset`]).
pub fn start(config: StatsConfig) {
    *CONFIG.lock().unwrap_or_else(PoisonError::into_inner) = config;
    RECORDING.store(true, Ordering::Relaxed);
    MEMORY.store(config.memory, Ordering::Relaxed);
    MEMORY_GENERATION.fetch_add(1, Ordering::Relaxed);
    switches::set_memory_per_op(config.memory);
    BY_SHAPES.store(config.by_shapes, Ordering::Relaxed);
    WORK.store(config.work, Ordering::Relaxed);
    call_sites::set_enabled(config.call_sites);
    if config.forward_links && !switches::requested(LINKS) {
        lineage::reset();
    }
    switches::set(STATS, true);
    switches::set(SHAPES, config.by_shapes || config.work);
    switches::set(LINKS, config.forward_links);
}

/// Starts linking backward and optimizer ops to their forward ops before statistics start (a
/// session's warm-up): the tensors made until [`start`] are known to the links it records.
#[doc(hidden)]
pub fn start_forward_links() {
    lineage::reset();
    switches::set(LINKS, true);
}

/// Stops recording; the statistics stay until [`reset`].
pub fn stop() {
    RECORDING.store(false, Ordering::Relaxed);
    MEMORY.store(false, Ordering::Relaxed);
    switches::set_memory_per_op(false);
    BY_SHAPES.store(false, Ordering::Relaxed);
    WORK.store(false, Ordering::Relaxed);
    call_sites::set_enabled(false);
    switches::set(STATS | SHAPES | LINKS, false);
}

/// Whether rows are keyed by the ops' input shapes: an edition that collected an op's tensors
/// passes their shapes to [`record`] only then.
#[doc(hidden)]
pub fn keyed_by_shapes() -> bool {
    BY_SHAPES.load(Ordering::Relaxed)
}

/// Whether ops count their work: an edition passes it to [`record`] only then.
#[doc(hidden)]
pub fn counts_work() -> bool {
    WORK.load(Ordering::Relaxed)
}

/// How the roofline's peaks were measured, when they were.
static CALIBRATION: Mutex<Option<Calibration>> = Mutex::new(None);

/// Records how the peaks in [`StatsConfig::peaks`] were measured, for `ops.json`.
#[doc(hidden)]
pub fn set_calibration(calibration: Option<Calibration>) {
    *CALIBRATION.lock().unwrap_or_else(PoisonError::into_inner) = calibration;
}

/// The peaks a calibration measured, when this run has one: the roofline's, over the config's.
#[doc(hidden)]
pub fn calibrated_peaks() -> Option<Peaks> {
    calibration().map(|calibration| calibration.peaks)
}

fn calibration() -> Option<Calibration> {
    CALIBRATION
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// The configuration of the last [`start`].
fn config() -> StatsConfig {
    *CONFIG.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether ops record their memory: statistics are on with [`StatsConfig::memory`].
#[doc(hidden)]
pub fn memory_per_op() -> bool {
    MEMORY.load(Ordering::Relaxed)
}

/// Which start of recording this is (see `MEMORY_GENERATION`).
#[doc(hidden)]
pub fn memory_generation() -> u64 {
    MEMORY_GENERATION.load(Ordering::Relaxed)
}

/// Whether op statistics are being recorded.
pub fn is_recording() -> bool {
    RECORDING.load(Ordering::Relaxed)
}

/// Forgets every row recorded so far, and the memory peaks.
pub fn reset() {
    for thread in THREADS.iter() {
        thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
    memory::reset();
}

/// Records one op; called by the probe on the op's thread.
/// With `memory`, the call's memory read where it ran (per-op memory); with `work`, what it
/// did ([`counts_work`]); `stack` is its call stack ([`call_sites::capture`], 0 for none).
#[doc(hidden)]
pub fn record(
    op: &'static Op,
    time: Duration,
    shapes: Option<Vec<Shape>>,
    (device, stack, forward): (u32, u32, u32),
    memory: Option<OpMemory>,
    work: Option<Work>,
) {
    let phase = phase::current();
    let memory = memory.filter(|call| memory::note_call(op, (phase, device), *call));
    if warmup::in_warmup() {
        return;
    }
    let shapes = shapes.map(Vec::into_boxed_slice);
    with_row(op, (phase, device, stack, forward), shapes, |row| {
        row.record(time);
        if let Some(call) = memory {
            row.add_memory(call);
        }
        if let Some(work) = work {
            row.add_work(work);
        }
    });
}

/// Adds a kernel that ran for `time` to the row of `op` run in `phase` on `device` from
/// `stack` with `shapes`: what the device-time sink matched to a call of that op.
#[doc(hidden)]
pub fn record_kernel(
    op: &'static Op,
    (phase, device, stack, forward): (u32, u32, u32, u32),
    shapes: Option<Box<[Shape]>>,
    time: Duration,
) {
    with_row(op, (phase, device, stack, forward), shapes, |row| {
        row.kernels += 1;
        row.device += time;
    });
}

/// Updates this thread's row of `op` run in `phase` on `device` from `stack` with `shapes`,
/// made if new.
fn with_row(
    op: &'static Op,
    (phase, device, stack, forward): (u32, u32, u32, u32),
    shapes: Option<Box<[Shape]>>,
    update: impl FnOnce(&mut Aggregate),
) {
    let key = Key {
        op: op as *const Op as usize,
        phase,
        shapes,
        device,
        stack,
        forward,
    };
    let mut rows = THREADS
        .get_or_default()
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    update(rows.entry(key).or_insert_with(|| Aggregate::new(op.name())));
}
