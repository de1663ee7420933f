//! The per-op hook every forwarded op goes through.
//!
//! With everything off, an op pays one relaxed atomic load and a branch. With only op ranges on,
//! it pushes its NVTX range and pops it when it returns. With more on, it syncs the op's device
//! (if asked), pushes the op's NVTX range and tells the observers, and the returned guard undoes
//! the same in reverse order when the op returns.

use std::ffi::CStr;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use std::time::Duration;

use burn_backend::{Backend, Shape, TensorMetadata};

/// NVTX op ranges in the `burn` domain.
const RANGES: u8 = 1;
/// `B::sync` of the op's device before the op starts and before it is reported finished.
const SYNC: u8 = 1 << 1;
/// At least one [`OpObserver`] is installed.
const OBSERVE: u8 = 1 << 2;
/// Op statistics are recorded.
const STATS: u8 = 1 << 3;
/// The timeline is recorded.
const TRACE: u8 = 1 << 4;
/// Statistics are keyed by input shapes.
const SHAPES: u8 = 1 << 5;

static FLAGS: AtomicU8 = AtomicU8::new(0);

/// One backend op: its static name and its NVTX registration.
///
/// Every forwarded method of [`Profiled`](crate::Profiled) owns one `Op`, so observers can key
/// statistics by its [`name`](Op::name) (or by its address, which is stable for the process).
#[cfg_attr(not(feature = "nvtx"), allow(dead_code))]
pub struct Op {
    name_nul: &'static str,
    c_name: &'static CStr,
    pub(crate) nvtx: crate::nvtx::op_ranges::OpName,
}

impl Op {
    /// `name_nul` is the op name followed by one NUL byte.
    pub(crate) const fn new(name_nul: &'static str) -> Self {
        let c_name = match CStr::from_bytes_with_nul(name_nul.as_bytes()) {
            Ok(c_name) => c_name,
            Err(_) => panic!("an op name must end with its only NUL byte"),
        };
        Op {
            name_nul,
            c_name,
            nvtx: crate::nvtx::op_ranges::OpName::new(),
        }
    }

    /// The op's name, as in Burn's backend traits: `float_matmul`, `conv2d_weight_backward`, ...
    pub fn name(&self) -> &'static str {
        &self.name_nul[..self.name_nul.len() - 1]
    }

    #[cfg_attr(not(feature = "nvtx"), allow(dead_code))]
    pub(crate) fn c_name(&self) -> &'static CStr {
        self.c_name
    }
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Op").field(&self.name()).finish()
    }
}

/// Receives every op of every `Profiled` backend while installed with [`observe`].
///
/// Both calls happen on the thread that runs the op, `op_started` right before the inner
/// backend's op and `op_finished` right after it (after the device sync when
/// [`set_op_sync`] is on). Calls from different threads interleave; each thread's calls are
/// properly nested. Observers must be cheap and must not run backend ops themselves.
pub trait OpObserver: Send + Sync {
    /// `op` is about to run on the current thread.
    fn op_started(&self, op: &'static Op);
    /// `op`, the innermost op started on the current thread, has returned.
    fn op_finished(&self, op: &'static Op);
}

type Observers = Arc<[(u64, Arc<dyn OpObserver>)]>;

/// The installed observers; `None` when there are none. Ops clone the `Arc` and call the
/// observers outside the lock, so installing one never waits for a running op.
static OBSERVERS: RwLock<Option<Observers>> = RwLock::new(None);
static NEXT_OBSERVER_ID: AtomicU64 = AtomicU64::new(0);

/// Installs `observer` until the returned guard is dropped.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use burn_profiled::probe::{observe, Op, OpObserver};
///
/// #[derive(Default)]
/// struct CountOps(AtomicUsize);
/// impl OpObserver for CountOps {
///     fn op_started(&self, _op: &'static Op) {}
///     fn op_finished(&self, _op: &'static Op) { self.0.fetch_add(1, Ordering::Relaxed); }
/// }
///
/// let counter = Arc::new(CountOps::default());
/// let _observing = observe(counter.clone());
/// // ... run a model on a `Profiled<_>` backend: every op increments the counter.
/// ```
pub fn observe(observer: Arc<dyn OpObserver>) -> Observing {
    let id = NEXT_OBSERVER_ID.fetch_add(1, Ordering::Relaxed);
    let mut slot = OBSERVERS.write().unwrap_or_else(PoisonError::into_inner);
    let mut list: Vec<_> = slot.as_deref().unwrap_or_default().to_vec();
    list.push((id, observer));
    *slot = Some(list.into());
    FLAGS.fetch_or(OBSERVE, Ordering::Relaxed);
    Observing { id }
}

/// Keeps an observer installed; dropping it uninstalls the observer.
#[must_use = "the observer is uninstalled when this guard is dropped"]
#[derive(Debug)]
pub struct Observing {
    id: u64,
}

impl Drop for Observing {
    fn drop(&mut self) {
        let mut slot = OBSERVERS.write().unwrap_or_else(PoisonError::into_inner);
        let list: Vec<_> = slot
            .as_deref()
            .unwrap_or_default()
            .iter()
            .filter(|(id, _)| *id != self.id)
            .cloned()
            .collect();
        if list.is_empty() {
            FLAGS.fetch_and(!OBSERVE, Ordering::Relaxed);
            *slot = None;
        } else {
            *slot = Some(list.into());
        }
    }
}

fn observers() -> Option<Observers> {
    OBSERVERS
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

fn set_flag(flag: u8, on: bool) {
    if on {
        FLAGS.fetch_or(flag, Ordering::Relaxed);
    } else {
        FLAGS.fetch_and(!flag, Ordering::Relaxed);
    }
}

/// Switches NVTX op ranges on or off, at any time (for example after warm-up).
///
/// While on, every op of every `Profiled` backend pushes a range in the NVTX domain `burn` whose
/// message is the op's name, registered once per op. An op that is running when the switch
/// flips still pops the range it pushed. Without the `nvtx` cargo feature this only records the
/// setting.
pub fn set_op_ranges(on: bool) {
    set_flag(RANGES, on);
}

/// Whether NVTX op ranges are on.
pub fn op_ranges() -> bool {
    FLAGS.load(Ordering::Relaxed) & RANGES != 0
}

/// Switches per-op device sync on or off.
///
/// While on, each op syncs its device (`B::sync`) before its range is pushed and again before
/// it is popped, so asynchronous GPU work lands inside the op's own range and an observer's
/// timing of the op covers its device time. This serialises the device and costs a full sync
/// per op: use it to attribute time, not to measure throughput. Ops whose device cannot be
/// known from their arguments (reads, transactions) are not synced.
pub fn set_op_sync(on: bool) {
    set_flag(SYNC, on);
}

/// Whether per-op device sync is on.
pub fn op_sync() -> bool {
    FLAGS.load(Ordering::Relaxed) & SYNC != 0
}

pub(crate) fn set_stats(on: bool, by_shapes: bool) {
    set_flag(STATS, on);
    set_flag(SHAPES, on && by_shapes);
}

pub(crate) fn set_trace(on: bool) {
    set_flag(TRACE, on);
}

/// The switches, for the one check per op: `0` means everything is off.
#[inline(always)]
pub(crate) fn flags() -> u8 {
    FLAGS.load(Ordering::Relaxed)
}

/// Starts `op` under `flags` (non-zero, from [`flags`]); the returned guard finishes it when
/// dropped. `device` is called only when per-op sync is on, `shapes` only when statistics are
/// keyed by input shapes.
///
/// Callers check [`flags`] first and build these closures only when it is non-zero: a closure
/// that borrows the op's arguments makes the compiler keep them in memory, which the disabled
/// path must not pay for.
#[inline(always)]
pub(crate) fn op<B: Backend>(
    op: &'static Op,
    flags: u8,
    device: impl FnOnce() -> Option<B::Device>,
    shapes: impl FnOnce() -> Vec<Shape>,
) -> OpGuard<B> {
    if flags == RANGES {
        // The usual profiling setup, kept to the range's push and pop.
        crate::nvtx::op_ranges::push_op(op);
        return OpGuard {
            active: ManuallyDrop::new(None),
            range_only: true,
        };
    }
    let device = if flags & SYNC != 0 { device() } else { None };
    let shapes = (flags & SHAPES != 0).then(shapes);
    OpGuard {
        active: ManuallyDrop::new(Some(start::<B>(op, flags, device, shapes))),
        range_only: false,
    }
}

impl<B: Backend> OpGuard<B> {
    /// The guard of an op that ran with everything off.
    #[inline(always)]
    pub(crate) fn off() -> Self {
        OpGuard {
            active: ManuallyDrop::new(None),
            range_only: false,
        }
    }
}

/// Guards an op: `probe!(OP, B, device closure, shapes closure)`, checking the switches before
/// any closure is built.
macro_rules! probe {
    ($op:expr, $backend:ty, $device:expr, $shapes:expr $(,)?) => {
        match $crate::probe::flags() {
            0 => $crate::probe::OpGuard::<$backend>::off(),
            flags => $crate::probe::op::<$backend>($op, flags, $device, $shapes),
        }
    };
}

pub(crate) use probe;

/// Collects the shapes of an op's tensor arguments: `(&&ShapeOf(&arg)).collect_shape(&mut v)`
/// finds [`TensorShape`] for tensors and falls back to [`NoShape`] for everything else.
pub(crate) struct ShapeOf<'a, T>(pub(crate) &'a T);

pub(crate) trait TensorShape {
    fn collect_shape(&self, shapes: &mut Vec<Shape>);
}

impl<T: TensorMetadata> TensorShape for &ShapeOf<'_, T> {
    fn collect_shape(&self, shapes: &mut Vec<Shape>) {
        shapes.push(self.0.shape());
    }
}

pub(crate) trait NoShape {
    fn collect_shape(&self, _shapes: &mut Vec<Shape>) {}
}

impl<T> NoShape for ShapeOf<'_, T> {}

/// A running op, finished on drop. `active` is `None` when nothing, or only op ranges, were on
/// at the start.
///
/// `ManuallyDrop` spares the disabled path the drop glue of `ActiveOp` (an out-of-line call
/// per op); `Drop` below moves the value out instead.
pub(crate) struct OpGuard<B: Backend> {
    active: ManuallyDrop<Option<ActiveOp<B>>>,
    /// Only the op range was pushed: the drop pops it.
    range_only: bool,
}

struct ActiveOp<B: Backend> {
    op: &'static Op,
    /// The flags seen at the start: the end does exactly what the start did.
    flags: u8,
    device: Option<B::Device>,
    observers: Option<Observers>,
    /// When the op started, if statistics or the timeline want it.
    started: Option<Duration>,
    shapes: Option<Vec<Shape>>,
}

#[inline(never)]
fn start<B: Backend>(
    op: &'static Op,
    flags: u8,
    device: Option<B::Device>,
    shapes: Option<Vec<Shape>>,
) -> ActiveOp<B> {
    sync::<B>(device.as_ref());
    if flags & RANGES != 0 {
        crate::nvtx::op_ranges::push_op(op);
    }
    let observers = if flags & OBSERVE != 0 {
        observers()
    } else {
        None
    };
    for (_, observer) in observers.iter().flat_map(|list| list.iter()) {
        observer.op_started(op);
    }
    let started = (flags & (STATS | TRACE) != 0).then(crate::clock::now);
    ActiveOp {
        op,
        flags,
        device,
        observers,
        started,
        shapes,
    }
}

fn sync<B: Backend>(device: Option<&B::Device>) {
    if let Some(device) = device {
        // An op has no way to report a failed sync; the failure resurfaces at the next read.
        let _ = B::sync(device);
    }
}

impl<B: Backend> Drop for OpGuard<B> {
    #[inline(always)]
    fn drop(&mut self) {
        if self.range_only {
            crate::nvtx::op_ranges::pop_op();
        } else if self.active.is_some() {
            // SAFETY: `active` is taken once, here, and never touched again.
            let active = unsafe { ManuallyDrop::take(&mut self.active) };
            if let Some(active) = active {
                finish(active);
            }
        }
    }
}

#[inline(never)]
fn finish<B: Backend>(active: ActiveOp<B>) {
    sync::<B>(active.device.as_ref());
    if let Some(started) = active.started {
        let ended = crate::clock::now();
        if active.flags & STATS != 0 {
            crate::stats::record(active.op, ended.saturating_sub(started), active.shapes);
        }
        if active.flags & TRACE != 0 {
            crate::trace::record_op(active.op, started, ended);
        }
    }
    for (_, observer) in active.observers.iter().flat_map(|list| list.iter()) {
        observer.op_finished(active.op);
    }
    if active.flags & RANGES != 0 {
        crate::nvtx::op_ranges::pop_op();
    }
}
