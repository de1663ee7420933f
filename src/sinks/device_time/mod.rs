//! Device time per op: which kernels each op launched and how long they ran on the device,
//! matched through CUPTI's external correlation (cargo feature `cupti`), without syncing the
//! device per op.
//!
//! ```no_run
//! use burn_profiled::{device_time, probe, stats};
//!
//! stats::start(stats::StatsConfig::default());
//! if let Err(why) = device_time::start() {
//!     eprintln!("{why}; host times only"); // no CUPTI, or another CUPTI client owns it
//! }
//! // ... the steps to look at, each op run where its kernels are launched
//! //     (`LaunchThread::run`), then a device sync
//! probe::flush_device_time();
//! println!("{}", stats::snapshot().table(stats::GroupBy::Op)); // + Kernels, Device Total, ...
//! ```
//!
//! Each op started while device time is on pushes its own id as CUPTI's external correlation
//! id, on the thread it runs on, and pops it when it returns. The kernels launched meanwhile
//! from that thread are the op's. On CubeCL backends the launches happen on the device thread:
//! run steps there ([`LaunchThread::run`](crate::LaunchThread::run)), or an op's kernels are
//! launched under no op and stay unattributed. CUPTI hands its records over in buffers, off the
//! ops' threads; [`probe::flush_device_time`](crate::probe::flush_device_time) collects them.
//! Device time goes to the innermost op, as CUPTI tags a launch with the innermost id.

pub(crate) mod correlate;
#[cfg(feature = "cupti")]
mod cupti;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use std::time::Duration;

use burn_std::Shape;

use self::correlate::{Activity, Correlator, Kernel};
use crate::context::op::Op;
use crate::context::switches::{self, DEVICE};
use crate::context::{clock, thread};

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
    #[error("CUPTI refused to record activity ({0}); is another profiler attached?")]
    Refused(String),
    /// Device time is being recorded already.
    #[error("device time is being recorded already")]
    AlreadyStarted,
}

/// Where op ids go: the activity source tags the launches of the current thread with them.
pub(crate) trait Source: Send + Sync {
    /// `id` is now the current thread's innermost op.
    fn push(&self, id: u64);
    /// The current thread's innermost op returned.
    fn pop(&self);
    /// Hands over every record of the work finished so far.
    fn flush(&self);
    /// Stops recording.
    fn stop(&self);
    /// The source's clock now, in ns: kernel timestamps are on it.
    fn timestamp_ns(&self) -> u64;
}

/// What an op was when it started, kept until its kernels are matched.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub(crate) op: &'static Op,
    pub(crate) phase: u32,
    pub(crate) shapes: Option<Box<[Shape]>>,
    /// The op's device (`context::device`), 0 when unknown.
    pub(crate) device: u32,
    /// The OS thread the op ran on, and when it started (the shared clock).
    pub(crate) tid: u32,
    pub(crate) started: Duration,
}

#[derive(Default)]
struct State {
    correlator: Correlator,
    /// Ops by id, with the collection during whose interval each finished; an op is
    /// forgotten one full interval after it finished, when its kernels have been handed over.
    launches: HashMap<u64, (Launch, Option<u64>)>,
    /// Collections so far.
    collections: u64,
    /// Kernels launched under no op of this run.
    unattributed: Vec<Kernel>,
    /// The source's clock minus the shared clock, in ns.
    offset_ns: i128,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);
static SOURCE: RwLock<Option<Arc<dyn Source>>> = RwLock::new(None);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn state() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
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
pub(crate) fn start_with(source: Arc<dyn Source>) {
    let offset_ns = i128::from(source.timestamp_ns()) - clock::now().as_nanos() as i128;
    *state() = Some(State {
        offset_ns,
        ..State::default()
    });
    *SOURCE.write().unwrap_or_else(PoisonError::into_inner) = Some(source);
    switches::set(DEVICE, true);
}

/// What a recording of device time ends with: the kernels no op launched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct DeviceTimeSummary {
    /// Kernels launched under no op (outside `Profiled`'s ops, or off the op's thread).
    pub unattributed_kernels: u64,
    /// Their device time, in ns.
    pub unattributed_ns: u64,
}

/// Stops recording. Collect first ([`probe::flush_device_time`](crate::probe::flush_device_time),
/// after a device sync): what was collected stays in the statistics, kernels still unmatched
/// are counted as unattributed.
pub fn stop() -> DeviceTimeSummary {
    switches::set(DEVICE, false);
    if let Some(source) = SOURCE
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
    {
        source.stop();
    }
    let unattributed = finish();
    DeviceTimeSummary {
        unattributed_kernels: unattributed.len() as u64,
        unattributed_ns: unattributed.iter().map(Kernel::duration_ns).sum(),
    }
}

/// Whether device time is being recorded.
pub fn is_recording() -> bool {
    switches::is_on(DEVICE)
}

/// A new op id, for [`op_started`] and [`tag_launches`].
pub(crate) fn new_op_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// The op `id` started on this thread at `started`, on `device` (`context::device`).
pub(crate) fn op_started(
    id: u64,
    op: &'static Op,
    (phase, device): (u32, u32),
    shapes: Option<&[Shape]>,
    started: Duration,
) {
    if let Some(state) = state().as_mut() {
        let launch = Launch {
            op,
            phase,
            shapes: shapes.map(Box::from),
            device,
            tid: thread::os_thread_id(),
            started,
        };
        state.launches.insert(id, (launch, None));
    }
}

/// Tags the kernel launches made on this thread with the op `id`, until
/// [`untag_launches`]: call it on the thread that launches the op's kernels.
pub(crate) fn tag_launches(id: u64) {
    if let Some(source) = source() {
        source.push(id);
    }
}

/// Ends the innermost [`tag_launches`] of this thread.
pub(crate) fn untag_launches() {
    if let Some(source) = source() {
        source.pop();
    }
}

/// The op `id` returned.
pub(crate) fn op_finished(id: u64) {
    if let Some(state) = state().as_mut() {
        let collections = state.collections;
        if let Some((_, finished)) = state.launches.get_mut(&id) {
            *finished = Some(collections);
        }
    }
}

/// Takes activity records, from the source's buffers (any thread, any order).
#[cfg_attr(not(feature = "cupti"), allow(dead_code))]
pub(crate) fn ingest(records: impl IntoIterator<Item = Activity>) {
    if let Some(state) = state().as_mut() {
        for record in records {
            state.correlator.ingest(record);
        }
    }
}

/// A kernel matched to the op that launched it, with its start and end on the shared clock.
pub(crate) struct Matched {
    pub(crate) launch: Launch,
    pub(crate) kernel: Kernel,
    pub(crate) start: Duration,
    pub(crate) end: Duration,
}

/// Has the source hand over its records, then returns the kernels matched since the last
/// call, with the op that launched each. Ops that finished before the previous call are
/// forgotten afterwards: their kernels have run and been handed over by now.
pub(crate) fn collect() -> Vec<Matched> {
    if let Some(source) = source() {
        source.flush();
    }
    let mut guard = state();
    let Some(state) = guard.as_mut() else {
        return Vec::new();
    };
    let offset = state.offset_ns;
    let on_clock = |ns: u64| {
        Duration::from_nanos((i128::from(ns) - offset).clamp(0, i128::from(u64::MAX)) as u64)
    };
    let mut matched = Vec::new();
    for (id, kernel) in state.correlator.take_attributed() {
        match state.launches.get(&id) {
            Some((launch, _)) => matched.push(Matched {
                launch: launch.clone(),
                start: on_clock(kernel.start_ns),
                end: on_clock(kernel.end_ns),
                kernel,
            }),
            None => state.unattributed.push(kernel),
        }
    }
    let current = state.collections;
    state
        .launches
        .retain(|_, (_, finished)| finished.is_none_or(|interval| interval == current));
    let launches = &state.launches;
    state
        .correlator
        .forget_ops(|id| !launches.contains_key(&id));
    state.collections += 1;
    matched
}

/// Ends matching, after the last [`collect`]: the kernels no op of this run launched.
pub(crate) fn finish() -> Vec<Kernel> {
    let mut guard = state();
    let Some(state) = guard.as_mut() else {
        return Vec::new();
    };
    let mut all = std::mem::take(&mut state.unattributed);
    all.extend(state.correlator.finish());
    all
}

#[cfg(test)]
mod tests;
