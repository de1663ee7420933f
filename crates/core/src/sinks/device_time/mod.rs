//! Device time per op: which kernels each op launched and how long they ran on the device,
//! matched through CUPTI's external correlation (cargo feature `cupti`), without syncing the
//! device per op.
//!
//! Each op started while device time is on pushes its own id as CUPTI's external correlation
//! id, on the thread it runs on, and pops it when it returns. The kernels launched meanwhile
//! from that thread are the op's. On CubeCL backends the launches happen on the device thread:
//! run steps there (`LaunchThread::run`), or an op's kernels are
//! launched under no op and stay unattributed. CUPTI hands its records over in buffers, off the
//! ops' threads; `probe::flush_device_time` collects them.
//! Device time goes to the innermost op, as CUPTI tags a launch with the innermost id.
//!
//! Ops outside steps queue their tags on the attached launch thread, in the FIFO their
//! launches go through. Ops of several threads (a data loader and the training loop, or a
//! fused backend's fusion thread) take turns there: one thread's op at a time between its
//! start and its end (reads only while their work is queued), so every kernel is tagged with
//! its own op. Steps run on the launch thread run whole.

mod clocks;
#[doc(hidden)]
pub mod correlate;
#[cfg(feature = "cupti")]
mod cupti;

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use std::time::Duration;

use crate::shape::Shape;

use self::clocks::{ClockMap, Reading};
use self::correlate::{Activity, Correlator, Kernel};
use crate::context::kernel::LaunchCall;
use crate::context::op::Op;
use crate::context::switches::{self, DEVICE};
use crate::context::{thread, warmup};

/// Why device time cannot be recorded; statistics go on with host times.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceTimeError {
    /// Built without the `cupti` cargo feature.
    #[error("device time per op needs burn-profiled's `cupti` cargo feature (CUDA)")]
    NotBuilt,
    /// No CUPTI library could be loaded.
    #[error("device time per op needs CUPTI (libcupti.so), which could not be loaded: {0}")]
    NoCupti(String),
    /// CUPTI refused: typically another CUPTI client (Nsight Systems, another profiler) owns it.
    #[error("CUPTI refused to record activity: {0}")]
    Refused(String),
    /// Device time is being recorded already.
    #[error("device time is being recorded already")]
    AlreadyStarted,
}

/// Where op ids go: the activity source tags the launches of the current thread with them.
#[doc(hidden)]
pub trait Source: Send + Sync {
    /// `id` is now the current thread's innermost op.
    fn push(&self, id: u64);
    /// The current thread's innermost op, `id`, returned.
    fn pop(&self, id: u64);
    /// Hands over every record held, those of work still running too, which come without an
    /// end (after a device sync there is none).
    fn flush(&self);
    /// Stops recording new activity, hands over every record still held, and lets go.
    fn stop(&self) -> SourceCounts;
    /// What the device CUPTI calls `device` is, with Kineto's `deviceProperties` keys.
    fn device_properties(
        &self,
        _device: u32,
    ) -> Option<serde_json::Map<String, serde_json::Value>> {
        None
    }
    /// The source's clock now, in ns: kernel timestamps are on it.
    fn timestamp_ns(&self) -> u64;
    /// What the source is, as the session's closing line names it.
    fn name(&self) -> &'static str {
        "CUPTI"
    }
}

/// What a source counted of its own failures over a recording.
#[derive(Debug, Clone, Copy, Default)]
#[doc(hidden)]
pub struct SourceCounts {
    pub dropped_records: u64,
    pub tag_errors: u64,
    /// Launches measured on the host instead (wgpu's fallback): never device time.
    pub host_timed_kernels: u64,
    pub host_timed_ns: u64,
    /// Launches whose measurement came back empty.
    pub unmeasured_kernels: u64,
}

/// What an op was when it started, kept until its kernels are matched.
#[derive(Debug, Clone)]
#[doc(hidden)]
pub struct Launch {
    pub op: &'static Op,
    pub phase: u32,
    pub shapes: Option<Box<[Shape]>>,
    /// The op's device (`context::device`), 0 when unknown.
    pub device: u32,
    /// The op's call stack (`call_sites::capture`), 0 when not taken.
    pub stack: u32,
    /// The forward op it works for (`context::lineage`), 0 for none.
    pub forward: u32,
    /// The OS thread the op ran on, and when it started (the shared clock).
    pub tid: u32,
    pub started: Duration,
    /// Started during the stopwatch's warm-up: its kernels stay out of the statistics, as its
    /// host time does.
    pub in_warmup: bool,
}

/// The ops that may have kernels to match; the ops' threads write here.
#[derive(Default)]
struct Launches {
    /// Ops by id, with the collection during whose interval each finished; an op is
    /// forgotten one full interval after it finished, when its kernels have been handed over.
    by_id: HashMap<u64, (Launch, Option<u64>)>,
    /// Collections so far.
    collections: u64,
}

/// The records matched so far; the source's buffers are ingested here, under a lock of its
/// own, so that a large buffer does not hold up the ops.
struct Matching {
    correlator: Correlator,
    /// Kernels launched under no op of this run.
    unattributed: Vec<Kernel>,
    /// The source's clock on the shared clock.
    clocks: ClockMap,
}

/// Locked in this order when both are.
static MATCHING: Mutex<Option<Matching>> = Mutex::new(None);
static LAUNCHES: Mutex<Option<Launches>> = Mutex::new(None);
static SOURCE: RwLock<Option<Arc<dyn Source>>> = RwLock::new(None);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// An open tag: the op id, and the source that took it (none when nothing was recording).
type Tag = (Option<Arc<dyn Source>>, u64);

thread_local! {
    /// This thread's open tags, innermost last: a tag is popped from the source that took it,
    /// even when recording stopped or restarted in between.
    static TAGS: RefCell<Vec<Tag>> = const { RefCell::new(Vec::new()) };
}

fn matching() -> MutexGuard<'static, Option<Matching>> {
    MATCHING.lock().unwrap_or_else(PoisonError::into_inner)
}

fn launches() -> MutexGuard<'static, Option<Launches>> {
    LAUNCHES.lock().unwrap_or_else(PoisonError::into_inner)
}

fn source() -> Option<Arc<dyn Source>> {
    SOURCE
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// Starts recording device time per op through CUPTI.
///
/// # Errors
/// When CUPTI cannot record: built without the `cupti` feature, no CUPTI library, or CUPTI
/// owned by another client. Nothing is switched on then; host statistics are unaffected.
pub fn start() -> Result<(), DeviceTimeError> {
    #[cfg(feature = "cupti")]
    {
        if is_recording() {
            return Err(DeviceTimeError::AlreadyStarted);
        }
        let source = cupti::Cupti::start()?;
        start_with(Arc::new(source));
        Ok(())
    }
    #[cfg(not(feature = "cupti"))]
    {
        Err(DeviceTimeError::NotBuilt)
    }
}

/// Starts recording with `source` tagging the launches.
#[cfg_attr(not(feature = "cupti"), allow(dead_code))]
#[doc(hidden)]
pub fn start_with(source: Arc<dyn Source>) {
    *matching() = Some(Matching {
        correlator: Correlator::default(),
        unattributed: Vec::new(),
        clocks: ClockMap::new(Reading::take(source.as_ref())),
    });
    *launches() = Some(Launches::default());
    *SOURCE.write().unwrap_or_else(PoisonError::into_inner) = Some(source);
    switches::set(DEVICE, true);
}

/// What a recording of device time ends with: the kernels no op launched, and what was lost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct DeviceTimeSummary {
    /// Kernels launched under no op (outside `Profiled`'s ops, or off the op's thread).
    pub unattributed_kernels: u64,
    /// Their device time, in ns.
    pub unattributed_ns: u64,
    /// Kernels handed over before they ended (collected without a device sync first); their
    /// time is unknown and left out.
    pub incomplete_kernels: u64,
    /// CUDA API calls tagged with an op's id (CUPTI's external-correlation records, one ahead
    /// of each call made while an op's id is pushed: kernel launches, but also copies, event
    /// records and stream queries): 0 with kernels recorded means no launch happened under an
    /// op on its launching thread.
    pub tagged_api_calls: u64,
    /// Records CUPTI could not store (its buffers were full): the figures miss them.
    pub dropped_records: u64,
    /// Tags CUPTI refused or popped out of order.
    pub tag_errors: u64,
    /// Launches the device measured with the host's clock instead of its own (CubeCL's
    /// `TimingMethod::System`: wgpu without timestamp queries), which is the submit and the
    /// wait around the kernel, not its device time: counted here, never in the op table.
    #[serde(skip_serializing_if = "is_zero")]
    pub host_timed_kernels: u64,
    /// Their host time, in ns.
    #[serde(skip_serializing_if = "is_zero")]
    pub host_timed_ns: u64,
    /// Launches whose measurement the device gave back empty.
    #[serde(skip_serializing_if = "is_zero")]
    pub unmeasured_kernels: u64,
    /// What recorded the kernels: `CUPTI`, or CubeCL's launch observer.
    #[serde(skip)]
    pub source: &'static str,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// Stops recording. Sync the device first: CUPTI then hands over every record it holds. The
/// kernels matched to ops are collected by the next
/// `probe::flush_device_time` (call it after `stop`); the
/// summary counts those no op launched.
pub fn stop() -> DeviceTimeSummary {
    switches::set(DEVICE, false);
    let source = SOURCE
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    let reading = source.as_ref().map(|source| Reading::take(source.as_ref()));
    let name = source.as_ref().map_or("", |source| source.name());
    let counts = source.map(|source| source.stop()).unwrap_or_default();
    let mut matching = matching();
    if let (Some(matching), Some(reading)) = (matching.as_mut(), reading) {
        matching.clocks.advance(reading);
    }
    let launches = launches();
    let (Some(matching), Some(launches)) = (matching.as_mut(), launches.as_ref()) else {
        return DeviceTimeSummary::default();
    };
    let (unattributed, incomplete) = matching.finish(launches);
    DeviceTimeSummary {
        unattributed_kernels: unattributed.len() as u64,
        unattributed_ns: unattributed.iter().map(Kernel::duration_ns).sum(),
        incomplete_kernels: incomplete,
        tagged_api_calls: matching.correlator.tagged_api_calls(),
        dropped_records: counts.dropped_records,
        tag_errors: counts.tag_errors,
        host_timed_kernels: counts.host_timed_kernels,
        host_timed_ns: counts.host_timed_ns,
        unmeasured_kernels: counts.unmeasured_kernels,
        source: name,
    }
}

/// Whether device time is being recorded.
pub fn is_recording() -> bool {
    switches::is_on(DEVICE)
}

/// A new op id, for [`op_started`] and [`tag_launches`].
#[doc(hidden)]
pub fn new_op_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// The op `id` started on this thread at `started`, on `device` (`context::device`), called
/// from `stack` (`call_sites::capture`, 0 for none).
#[doc(hidden)]
pub fn op_started(
    id: u64,
    op: &'static Op,
    (phase, device, stack, forward): (u32, u32, u32, u32),
    shapes: Option<&[Shape]>,
    started: Duration,
) {
    if let Some(launches) = launches().as_mut() {
        let launch = Launch {
            op,
            phase,
            shapes: shapes.map(Box::from),
            device,
            stack,
            forward,
            tid: thread::os_thread_id(),
            started,
            in_warmup: warmup::in_warmup(),
        };
        launches.by_id.insert(id, (launch, None));
    }
}

/// The OS thread id of each thread that tagged launches, by the ids CUPTI may give it in an API
/// record (its `pthread_self` cut to 32 bits, or the OS id itself).
static CALLING_THREADS: Mutex<Vec<(u32, u32)>> = Mutex::new(Vec::new());

thread_local! {
    static CALLING_THREAD_KNOWN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The OS thread id of the thread CUPTI names `thread` in an API record, if it tagged launches.
fn calling_thread(thread: u32) -> Option<u32> {
    let threads = CALLING_THREADS
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    threads
        .iter()
        .find(|(id, _)| *id == thread)
        .map(|(_, os)| *os)
}

/// Tags the kernel launches made on this thread with the op `id`, until
/// [`untag_launches`]: call it on the thread that launches the op's kernels.
#[doc(hidden)]
pub fn tag_launches(id: u64) {
    if !CALLING_THREAD_KNOWN.get() {
        CALLING_THREAD_KNOWN.set(true);
        let os = thread::os_thread_id();
        // SAFETY: pthread_self has no preconditions.
        let pthread = unsafe { libc::pthread_self() } as u32;
        let mut threads = CALLING_THREADS
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        threads.extend([(pthread, os), (os, os)]);
    }
    let source = source();
    if let Some(source) = &source {
        source.push(id);
    }
    TAGS.with(|tags| tags.borrow_mut().push((source, id)));
}

/// Ends the innermost [`tag_launches`] of this thread.
#[doc(hidden)]
pub fn untag_launches() {
    if let Some((Some(source), id)) = TAGS.with(|tags| tags.borrow_mut().pop()) {
        source.pop(id);
    }
}

/// The op `id` returned.
#[doc(hidden)]
pub fn op_finished(id: u64) {
    if let Some(launches) = launches().as_mut() {
        let collections = launches.collections;
        if let Some((_, finished)) = launches.by_id.get_mut(&id) {
            *finished = Some(collections);
        }
    }
}

/// Takes activity records, from the source's buffers (any thread, any order).
#[cfg_attr(not(feature = "cupti"), allow(dead_code))]
#[doc(hidden)]
pub fn ingest(records: impl IntoIterator<Item = Activity>) {
    if let Some(matching) = matching().as_mut() {
        for record in records {
            matching.correlator.ingest(record);
        }
    }
}

/// The devices described so far, by the source's device id.
static DESCRIBED: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// What the source says of `device`, the first time it is asked only (each device is described
/// once per process).
#[doc(hidden)]
pub fn describe_device(device: u32) -> Option<serde_json::Map<String, serde_json::Value>> {
    {
        let mut described = DESCRIBED.lock().unwrap_or_else(PoisonError::into_inner);
        if described.contains(&device) {
            return None;
        }
        described.push(device);
    }
    source()?.device_properties(device)
}

/// A kernel matched to the op that launched it, with its start and end on the shared clock.
#[doc(hidden)]
pub struct Matched {
    pub launch: Launch,
    pub kernel: Kernel,
    pub start: Duration,
    pub end: Duration,
    /// The call that launched it, where its record came.
    pub call: Option<LaunchCall>,
}

/// Has the source hand over every record it holds (call it right after a device sync), then
/// returns the kernels matched since the last call, with the op that launched each. Ops that
/// finished before the previous call are forgotten afterwards: their kernels have run and been
/// handed over by now.
///
/// CUPTI holds back a buffer while any kernel in it runs, unless it is forced, so an unforced
/// collection without a sync could leave an op's kernels out for many collections, and the op
/// would be forgotten first: there is none.
#[doc(hidden)]
pub fn collect() -> Vec<Matched> {
    let reading = source().map(|source| {
        source.flush();
        Reading::take(source.as_ref())
    });
    let mut matching = matching();
    let mut launches = launches();
    let (Some(matching), Some(launches)) = (matching.as_mut(), launches.as_mut()) else {
        return Vec::new();
    };
    if let Some(reading) = reading {
        matching.clocks.advance(reading);
    }
    let clocks = matching.clocks;
    let on_clock = |start_ns: u64, end_ns: u64| clocks.interval_on_shared_clock(start_ns, end_ns);
    let matched = matching
        .take_known(launches)
        .into_iter()
        .filter_map(|(id, kernel)| {
            let (launch, _) = launches.by_id.get(&id)?;
            let call = kernel.call.map(|call| {
                let (start, end) = on_clock(call.start_ns, call.end_ns);
                LaunchCall {
                    cbid: call.cbid,
                    tid: calling_thread(call.thread).unwrap_or(launch.tid),
                    start,
                    end,
                }
            });
            let (start, end) = on_clock(kernel.start_ns, kernel.end_ns);
            Some(Matched {
                launch: launch.clone(),
                start,
                end,
                kernel,
                call,
            })
        })
        .collect();
    let current = launches.collections;
    launches
        .by_id
        .retain(|_, (_, finished)| finished.is_none_or(|interval| interval == current));
    let by_id = &launches.by_id;
    matching
        .correlator
        .forget_ops(|id| !by_id.contains_key(&id));
    launches.collections += 1;
    matched
}

impl Matching {
    /// Takes the kernels matched so far to the ops of `launches`, with their op ids; those
    /// matched to an id this run does not know go to the unattributed ones.
    fn take_known(&mut self, launches: &Launches) -> Vec<(u64, Kernel)> {
        self.set_aside_unknown(launches);
        self.correlator.take_attributed()
    }

    /// Moves the kernels matched to an id `launches` does not know to the unattributed ones.
    fn set_aside_unknown(&mut self, launches: &Launches) {
        let unknown = self
            .correlator
            .take_unknown(|id| launches.by_id.contains_key(&id));
        self.unattributed.extend(unknown);
    }

    /// Ends matching, once the source handed over its last records: the kernels no op of
    /// this run launched, and how many kernels came without an end. The kernels matched to
    /// an op stay for the next [`collect`].
    fn finish(&mut self, launches: &Launches) -> (Vec<Kernel>, u64) {
        self.set_aside_unknown(launches);
        let mut unattributed = std::mem::take(&mut self.unattributed);
        unattributed.extend(self.correlator.finish());
        (unattributed, self.correlator.incomplete_kernels())
    }
}
