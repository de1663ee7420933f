//! The top of the op path: every forwarded op goes through here, and so does every event of
//! the user-facing tools that a sink records.
//!
//! ```text
//!  Profiled<B> ops        nvtx ranges, stopwatch          (instrumentation)
//!        |                        |
//!  probe: one check of the switches; builds the op event, hands it to the sinks that are on
//!        |              |              |              |
//!  sinks: op_ranges (NVTX)   stats      trace (timeline)   observers
//!        |              |              |              |
//!  context: op identity, switches, clock, thread ids and names, phase, warm-up
//! ```
//!
//! Every import points down: the probe knows the sinks, the sinks know only the context, and the
//! tools above write into the context (phase, warm-up, thread names) or report through the
//! probe (`range_pushed`, `measured`). `tests/module_layers.rs` checks it.
//!
//! With everything off, an op pays one relaxed atomic load and a branch. With only op ranges on,
//! it pushes its NVTX range and pops it when it returns. With more on, it syncs the op's device
//! (if asked), pushes the op's NVTX range and tells the observers, and the returned guard undoes
//! the same in reverse order when the op returns.

use std::mem::ManuallyDrop;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::time::Duration;

use burn_backend::ops::{MaxPool1dWithIndices, MaxPool2dWithIndices};
use burn_backend::{Backend, TensorMetadata};
use burn_profiled_core::call_sites;
use burn_profiled_core::context::lineage::{self, ForwardOp, Link, Pass};
use burn_profiled_core::shape::Shape;
use burn_profiled_core::work::{TensorArg, Work};

use crate::context::device as context_device;
use crate::context::fallback::{self, FallbackRun};
use crate::context::launch::{LaunchThread, QueuedMemory, QueuedTask, QueuingHold};
use crate::context::memory::{self as context_memory, ThreadAllocations};
use crate::context::switches::{
    self, DEVICE, Flags, LINKS, OBSERVE, QUEUED, RANGES, SHAPES, STATS, SYNC, TRACE,
};
use crate::context::{attached, clock, live_allocations, phase};
use crate::sinks::observers::{self, Observers};
use crate::sinks::{device_time, op_ranges, stats, trace};
use crate::tensor_identity::Identities;
use burn_profiled_core::sinks::graph::{self, TensorSeen};

pub use crate::context::fallback::autotune_trials;
pub use crate::context::op::Op;
pub use crate::sinks::observers::{Observing, OpObserver, observe};
pub use burn_profiled_core::probe::{
    flush_device_time, op_ranges, op_sync, set_op_ranges, set_op_sync,
};

use burn_profiled_core::probe as core_probe;

thread_local! {
    /// Whether this thread is evaluating an op's device for the probe.
    static LOOKING_UP_DEVICE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The switches, for the one check per op: `0` means everything is off.
#[inline(always)]
pub(crate) fn flags() -> Flags {
    switches::all()
}

/// Whether an op under `flags` needs its device: for per-op sync, statistics, the timeline, or
/// to find its attached launch thread (not for op ranges alone).
#[inline(always)]
pub(crate) fn wants_device(flags: Flags) -> bool {
    flags & (SYNC | QUEUED | STATS | TRACE) != 0
}

/// A read, a transaction or a sync was called on this thread with `flags` (from [`flags`]):
/// on a fused backend's fusion thread, its stream has just run everything registered before
/// it. Called before the op's guard starts (a read's starts where it is awaited, on the
/// reader's thread).
#[inline(always)]
pub(crate) fn caller_waits(flags: Flags) {
    if flags != 0 {
        phase::ran_dry();
    }
}

/// The guard of an op that returns a future (a read): `flags` were read once at the call, and
/// `device` taken then (before the call consumed its tensor) when they [want it](wants_device).
#[inline(always)]
pub(crate) fn read_op<B: Backend>(
    op: &'static Op,
    flags: Flags,
    device: Option<B::Device>,
) -> OpGuard<B> {
    match flags {
        0 => OpGuard::off(),
        flags => {
            let mut guard = self::op::<B>(op, flags, move || device, Vec::new, Identities::unknown);
            guard.release_queuing();
            guard
        }
    }
}

/// Starts `op` under `flags` (non-zero, from [`flags`]); the returned guard finishes it when
/// dropped. `device` is called only when per-op sync, statistics or the timeline are on or a
/// launch thread is attached, `args` only when statistics are keyed by input shapes or count
/// the ops' work, `inputs` (the identities of its input tensors) only when backward ops are
/// linked to forward ops (then pass the outputs' to [`OpGuard::made`]).
///
/// Callers check [`flags`] first and build these closures only when it is non-zero: a closure
/// that borrows the op's arguments makes the compiler keep them in memory, which the disabled
/// path must not pay for.
#[inline(always)]
pub(crate) fn op<B: Backend>(
    op: &'static Op,
    flags: Flags,
    device: impl FnOnce() -> Option<B::Device>,
    args: impl FnOnce() -> Vec<Arg>,
    inputs: impl FnOnce(&mut Identities),
) -> OpGuard<B> {
    if fallback::running() == FallbackRun::Trial {
        // Autotune trying a candidate kernel on a fork of a fused block's inputs: not the
        // program's op.
        return OpGuard::off();
    }
    if flags == RANGES {
        // The usual profiling setup, kept to the range's push and pop.
        op_ranges::push_op(op);
        return OpGuard {
            active: ManuallyDrop::new(None),
            range_only: true,
        };
    }
    if LOOKING_UP_DEVICE.get() {
        // A `Profiled` backend inside another's (`Profiled<Autodiff<Profiled<B>>>`) answering
        // the outer probe's device lookup: the lookup is the profiler's, not the user's op.
        return OpGuard::off();
    }
    let device = if wants_device(flags) {
        /// Ends the lookup, also if it panics.
        struct LookedUp;
        impl Drop for LookedUp {
            fn drop(&mut self) {
                LOOKING_UP_DEVICE.set(false);
            }
        }
        LOOKING_UP_DEVICE.set(true);
        let _looked_up = LookedUp;
        device()
    } else {
        None
    };
    let args = (flags & SHAPES != 0).then(args);
    let shapes = args
        .as_deref()
        .filter(|_| stats::keyed_by_shapes())
        .map(shapes_of);
    let work_args = args.filter(|_| stats::counts_work());
    let inputs = (flags & LINKS != 0).then(|| {
        let mut ids = Identities::default();
        inputs(&mut ids);
        ids
    });
    OpGuard {
        active: ManuallyDrop::new(Some(start::<B>(
            op, flags, device, shapes, work_args, inputs,
        ))),
        range_only: false,
    }
}

impl<B: Backend> OpGuard<B> {
    /// Hands the op's outputs to `collect`, when its work is counted.
    #[inline(always)]
    pub(crate) fn outputs(&mut self, collect: impl FnOnce(&mut Vec<Arg>)) {
        if let Some(active) = self.active.as_mut()
            && active.work_args.is_some()
        {
            collect(&mut active.outputs);
        }
    }

    /// Hands the op's outputs to `collect` for their identities, when backward ops are linked
    /// to forward ops: they are known from now on as made for the forward op this one works for.
    #[inline(always)]
    pub(crate) fn made(&mut self, collect: impl FnOnce(&mut Identities)) {
        if let Some(active) = self.active.as_mut()
            && let Some((link, pass)) = active.link
        {
            let mut ids = Identities::default();
            collect(&mut ids);
            lineage::made(link, pass, &ids.ids);
            if let Some(inputs) = &mut active.graph_inputs {
                inputs.outputs = Some(ids);
            }
        }
    }

    /// Gives the op's work as `count` says, in place of counting it from its arguments, when its
    /// work is counted: a fused block's, from the ops it fused.
    #[cfg(feature = "fusion")]
    pub(crate) fn counted_work(&mut self, count: impl FnOnce() -> Work) {
        if let Some(active) = self.active.as_mut()
            && active.work_args.is_some()
        {
            active.counted = Some(count());
        }
    }

    /// The guard of an op that ran with everything off.
    #[inline(always)]
    pub(crate) fn off() -> Self {
        OpGuard {
            active: ManuallyDrop::new(None),
            range_only: false,
        }
    }

    /// Lets other threads queue ops on this op's launch thread until it ends: a read, whose
    /// await must not hold them up (a future may wait for long, or never be polled again).
    /// Its end queues under the hold again; ranges of reads that overlap are kept nested on
    /// the launch thread ([`queued_end`]).
    fn release_queuing(&mut self) {
        if let Some(active) = self.active.as_mut() {
            active.queuing = None;
        }
    }
}

/// Guards an op: `probe!(OP, B, device closure, shapes closure)`, checking the switches before
/// any closure is built.
macro_rules! probe {
    ($op:expr, $backend:ty, $device:expr, $shapes:expr $(,)?) => {
        match $crate::probe::flags() {
            0 => $crate::probe::OpGuard::<$backend>::off(),
            flags => $crate::probe::op::<$backend>(
                $op,
                flags,
                $device,
                $shapes,
                $crate::tensor_identity::Identities::unknown,
            ),
        }
    };
}

pub(crate) use probe;

/// One argument of an op that statistics key by or its work depends on: a tensor (its shape,
/// and its element size where known) or a pooling window (the first `[usize; N]` argument).
pub(crate) enum Arg {
    Tensor(Shape, Option<u32>),
    Window(Shape),
}

impl Arg {
    /// A tensor argument, read from its metadata.
    pub(crate) fn tensor(tensor: &impl TensorMetadata) -> Self {
        Arg::Tensor(
            Shape::from(tensor.shape().as_slice()),
            u32::try_from(tensor.dtype().size()).ok(),
        )
    }
}

/// The shapes of the tensors among `args`, for statistics by shapes and the timeline.
fn shapes_of(args: &[Arg]) -> Vec<Shape> {
    args.iter()
        .filter_map(|arg| match arg {
            Arg::Tensor(shape, _) => Some(shape.clone()),
            Arg::Window(_) => None,
        })
        .collect()
}

/// The tensors among `args` for [`work`](burn_profiled_core::work), and the first window;
/// `None` where a tensor's element size is not known.
fn work_tensors(args: Vec<Arg>) -> Option<(Vec<TensorArg>, Option<Shape>)> {
    let mut tensors = Vec::with_capacity(args.len());
    let mut window = None;
    for arg in args {
        match arg {
            Arg::Tensor(shape, elem_bytes) => tensors.push(TensorArg {
                shape,
                elem_bytes: elem_bytes?,
            }),
            Arg::Window(dims) => {
                window.get_or_insert(dims);
            }
        }
    }
    Some((tensors, window))
}

/// Collects an op's arguments: `(&&&ArgOf(&arg)).collect_arg(&mut v)` finds [`TensorArgOf`] for
/// tensors, [`WindowArgOf`] for `[usize; N]` and pooling's outputs with indices, and falls back
/// to [`NoArg`] for everything else.
pub(crate) struct ArgOf<'a, T>(pub(crate) &'a T);

pub(crate) trait TensorArgOf {
    fn collect_arg(&self, args: &mut Vec<Arg>);
}

impl<T: TensorMetadata> TensorArgOf for &&ArgOf<'_, T> {
    fn collect_arg(&self, args: &mut Vec<Arg>) {
        args.push(Arg::tensor(self.0));
    }
}

/// The second level: windows, and the ops' outputs that hold a tensor in a struct.
pub(crate) trait WindowArgOf {
    fn collect_arg(&self, args: &mut Vec<Arg>);
}

impl<const N: usize> WindowArgOf for &ArgOf<'_, [usize; N]> {
    fn collect_arg(&self, args: &mut Vec<Arg>) {
        args.push(Arg::Window(Shape::from(self.0.as_slice())));
    }
}

impl<B: Backend> WindowArgOf for &ArgOf<'_, MaxPool2dWithIndices<B>> {
    fn collect_arg(&self, args: &mut Vec<Arg>) {
        args.push(Arg::tensor(&self.0.output));
    }
}

impl<B: Backend> WindowArgOf for &ArgOf<'_, MaxPool1dWithIndices<B>> {
    fn collect_arg(&self, args: &mut Vec<Arg>) {
        args.push(Arg::tensor(&self.0.output));
    }
}

pub(crate) trait NoArg {
    fn collect_arg(&self, _args: &mut Vec<Arg>) {}
}

impl<T> NoArg for ArgOf<'_, T> {}

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
    flags: Flags,
    /// The device to sync, when per-op sync was on.
    device: Option<B::Device>,
    observers: Option<Observers>,
    /// When the op started, if statistics or the timeline want it.
    started: Option<Duration>,
    shapes: Option<Vec<Shape>>,
    /// Its tensor arguments and window, when its work is counted, and its outputs once it
    /// returned.
    work_args: Option<Vec<Arg>>,
    outputs: Vec<Arg>,
    /// Its work counted by the caller (a fused block's, from its ops), in place of
    /// `work_args`'.
    counted: Option<Work>,
    /// Its call stack (`call_sites::capture`), 0 when not taken.
    stack: u32,
    /// The forward op it works for and its pass, when backward ops are linked
    /// (`context::lineage`).
    link: Option<(Link, Pass)>,
    /// The op's id for device time, when that was on.
    device_op: Option<u64>,
    /// The launch thread the op's range (and device-time tag) went to, when the op ran
    /// outside it.
    queued_on: Option<LaunchThread>,
    /// This thread's hold of `queued_on`, from queuing the start to queuing the end.
    queuing: Option<QueuingHold>,
    /// Which run of the op, on `queued_on`.
    instance: u64,
    /// The op's device (`context::device`), 0 when unknown or not asked for.
    device_id: u32,
    /// How the op's memory is read, with per-op memory on.
    memory: Option<MemoryAtStart>,
    /// The maker of this thread's host blocks before the op's, when the op set its own
    /// (`live_allocations`).
    maker_before: Option<u32>,
    /// Its inputs, while the graph of a step records (`sinks::graph`).
    graph_inputs: Option<GraphInputs>,
}

/// An op's inputs for the graph of a step.
struct GraphInputs {
    phase: u32,
    seen: Vec<(TensorSeen, Option<usize>)>,
    /// Whether every input had an identity.
    complete: bool,
    /// Its outputs, once it returned.
    outputs: Option<Identities>,
}

/// An op's memory at its start, read where its allocations are made.
enum MemoryAtStart {
    /// Its device's memory in use in `stream`, read here (on its launch thread) through
    /// `launch`.
    Device {
        launch: LaunchThread,
        stream: u64,
        generation: u64,
        in_use: u64,
    },
    /// This thread's host allocations (a tracking allocator is installed).
    Host(ThreadAllocations),
    /// Read on its launch thread by its queued start and end.
    Queued(QueuedMemory),
}

/// What an op does where its kernels are launched, first: open its range (with `payload`, the
/// forward call it is or works for, when not 0), tag the launches with its device-time id. Run
/// here, or queued on its launch thread ([`queued_start`]).
fn launches_start(flags: Flags, op: &'static Op, device_op: u64, payload: u64) {
    if flags & RANGES != 0 {
        match payload {
            0 => op_ranges::push_op(op),
            payload => op_ranges::push_op_with_payload(op, payload),
        }
    }
    if flags & DEVICE != 0 {
        device_time::tag_launches(device_op);
    }
}

/// The reverse of [`launches_start`].
fn launches_end(flags: Flags, _op: &'static Op, _device_op: u64) {
    if flags & DEVICE != 0 {
        device_time::untag_launches();
    }
    if flags & RANGES != 0 {
        op_ranges::pop_op();
    }
}

/// An op whose start ran on this launch thread and whose end has not.
struct QueuedOpen {
    instance: u64,
    flags: Flags,
    op: &'static Op,
    device_op: u64,
    payload: u64,
    /// Its stream's memory in use at its start, with per-op memory on.
    in_use_at_start: Option<u64>,
}

thread_local! {
    /// On a launch thread: the queued ops open there, innermost last.
    static QUEUED_OPEN: std::cell::RefCell<Vec<QueuedOpen>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// [`launches_start`] of an op queued from another thread.
fn queued_start(task: QueuedTask) {
    let QueuedTask {
        flags,
        op,
        id: device_op,
        instance,
        memory,
        payload,
        ..
    } = task;
    launches_start(flags, op, device_op, payload);
    let in_use_at_start =
        memory.and_then(|memory| in_use_at_start(&memory.launch, memory.stream, memory.generation));
    QUEUED_OPEN.with_borrow_mut(|open| {
        open.push(QueuedOpen {
            instance,
            flags,
            op,
            device_op,
            payload,
            in_use_at_start,
        })
    });
}

/// [`launches_end`] of an op queued from another thread. The launch thread's NVTX ranges and
/// CUPTI tags are stacks: when ops opened after this one are still open (reads of two threads
/// overlapping), they are closed, this one ends, and they are opened again, so every range
/// stays nested and ends where its op does. With per-op memory, the op's memory is read here,
/// where its allocations were made, and recorded under its row.
fn queued_end(task: QueuedTask) {
    let QueuedTask {
        flags,
        op,
        id: device_op,
        instance,
        memory,
        ..
    } = task;
    let (above, read_at_start) = QUEUED_OPEN.with_borrow_mut(|open| {
        match open.iter().rposition(|o| o.instance == instance) {
            Some(at) => {
                let above = open.split_off(at + 1);
                let this = open.pop().and_then(|o| o.in_use_at_start);
                (above, this)
            }
            None => (Vec::new(), None),
        }
    });
    // An op whose start was not queued (it had nothing else to do there) starts where the
    // op before it on its stream ended.
    let at_start = match (&memory, read_at_start) {
        (Some(memory), None) => in_use_at_start(&memory.launch, memory.stream, memory.generation),
        (_, at_start) => at_start,
    };
    if let (Some(memory), Some(at_start)) = (memory, at_start)
        && let Some(at_end) = in_use_at_end(&memory.launch, memory.stream, memory.generation)
    {
        stats::record_memory(
            op,
            (memory.phase, memory.device, memory.stack, memory.forward),
            memory.shapes,
            device_memory(at_start, at_end),
        );
    }
    for o in above.iter().rev() {
        launches_end(o.flags, o.op, o.device_op);
    }
    launches_end(flags, op, device_op);
    for o in &above {
        launches_start(o.flags, o.op, o.device_op, o.payload);
    }
    QUEUED_OPEN.with_borrow_mut(|open| open.extend(above));
}

thread_local! {
    /// On a launch thread: the memory in use each stream had at the end of its last op read
    /// there, with the statistics' memory generation it was read in.
    static LAST_IN_USE: std::cell::RefCell<Vec<(u64, u64, u64)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The memory in use of `stream` (of `launch`'s device) at an op's start: the end of the op
/// before it on that stream, read on this launch thread in this `generation` of per-op memory,
/// else read now. One read per op: on wgpu, every read submits the stream's queued work.
fn in_use_at_start(launch: &LaunchThread, stream: u64, generation: u64) -> Option<u64> {
    let last = LAST_IN_USE.with_borrow(|last| {
        last.iter()
            .find(|(s, g, _)| (*s, *g) == (stream, generation))
            .map(|(_, _, in_use)| *in_use)
    });
    match last {
        Some(in_use) => Some(in_use),
        None => Some(launch.memory_of(Some(stream))?.in_use_bytes),
    }
}

thread_local! {
    /// On a thread queuing ops with per-op memory: the (launch thread, stream, generation)
    /// whose chain of readings it started, by queuing a start that reads.
    static SEEDED: std::cell::RefCell<Vec<(usize, u64, u64)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Whether this thread already queued a reading start for `memory`'s stream (noting it now
/// when not: the start about to be queued is that one).
fn chain_seeded(memory: &QueuedMemory) -> bool {
    let key = (memory.launch.id(), memory.stream, memory.generation);
    SEEDED.with_borrow_mut(|seeded| {
        if seeded.contains(&key) {
            return true;
        }
        seeded.retain(|(launch, stream, _)| (*launch, *stream) != (key.0, key.1));
        seeded.push(key);
        false
    })
}

/// The memory in use of `stream` at an op's end, read now, and kept for the next op's start.
fn in_use_at_end(launch: &LaunchThread, stream: u64, generation: u64) -> Option<u64> {
    let in_use = launch.memory_of(Some(stream))?.in_use_bytes;
    LAST_IN_USE.with_borrow_mut(|last| {
        last.retain(|(s, _, _)| *s != stream);
        last.push((stream, generation, in_use));
    });
    Some(in_use)
}

/// An op's memory on a device that reports memory in use only: what it grew or shrank by.
fn device_memory(at_start: u64, at_end: u64) -> stats::OpMemory {
    stats::OpMemory {
        alloc_bytes: at_end.saturating_sub(at_start),
        freed_bytes: at_start.saturating_sub(at_end),
        in_use_bytes: at_end,
    }
}

#[inline(never)]
fn start<B: Backend>(
    op: &'static Op,
    flags: Flags,
    device: Option<B::Device>,
    shapes: Option<Vec<Shape>>,
    work_args: Option<Vec<Arg>>,
    inputs: Option<Identities>,
) -> ActiveOp<B> {
    // On only while ranges or device time are (`switches::set`).
    let queued_on = (flags & QUEUED != 0)
        .then(|| attached::launch_thread_of(device.as_ref()))
        .flatten();
    let device_id = device.as_ref().map_or(0, context_device::id);
    let memory_per_op = flags & STATS != 0 && stats::memory_per_op();
    let memory_launch = memory_per_op
        .then(|| attached::memory_launch_thread_of(device.as_ref()))
        .flatten();
    let device = device.filter(|_| flags & SYNC != 0);
    sync::<B>(device.as_ref());
    let device_op = (flags & DEVICE != 0).then(device_time::new_op_id);
    let phase = phase::current();
    // Taken before the op's range and clock start: the unwinding is the profiler's time, not
    // the op's. The link goes into the range's payload.
    let stack = match flags & STATS {
        0 => 0,
        _ => call_sites::capture(),
    };
    let mut graph_inputs = None;
    let link = inputs.map(|mut inputs| {
        let pass = pass_of(phase, stack);
        let path = match pass {
            Pass::Forward => phase::current_path(),
            _ => 0,
        };
        let forward = ForwardOp {
            op,
            phase,
            path,
            stack,
        };
        graph_inputs = inputs.seen.take().map(|seen| GraphInputs {
            phase,
            seen,
            complete: inputs.complete,
            outputs: None,
        });
        match pass == Pass::Forward || inputs.complete {
            true => (lineage::link(forward, pass, &inputs.ids), pass),
            // Linked by order alone, it would take the link of whatever ran before it.
            false => (Link::default(), pass),
        }
    });
    // One thread's op at a time between its start and its end on the launch thread.
    let queuing = queued_on.as_ref().map(LaunchThread::hold_queuing);
    let instance = match queued_on {
        Some(_) => next_instance(),
        None => 0,
    };
    let queued_memory = match (&queued_on, &memory_launch) {
        (Some(queued_on), Some(memory_launch)) if queued_on.same_as(memory_launch) => {
            Some(QueuedMemory {
                launch: memory_launch.clone(),
                stream: memory_launch.current_stream(),
                generation: stats::memory_generation(),
                phase,
                shapes: None,
                device: device_id,
                // Set when the op ends, with its shapes.
                stack: 0,
                forward: 0,
            })
        }
        _ => None,
    };
    if memory_per_op {
        core_probe::running_started(op, phase, shapes.clone(), device_id);
    }
    // With nothing but memory to do at the start, the start is queued only for the first op
    // of this thread's stream: the next ones start where the op before them ended.
    let start_needed = flags & (RANGES | DEVICE) != 0
        || queued_memory
            .as_ref()
            .is_some_and(|memory| !chain_seeded(memory));
    if queued_on.is_some() && start_needed || queued_on.is_none() {
        at_launches(
            Launches::Start,
            flags,
            op,
            (
                device_op,
                instance,
                link.map_or(0, |(link, pass)| link.nvtx_payload(pass)),
            ),
            queued_on.as_ref(),
            queued_memory.clone().map(Box::new),
        );
    }
    let observers = if flags & OBSERVE != 0 {
        observers::installed()
    } else {
        None
    };
    if let Some(observers) = &observers {
        // An observer's panic reaches the caller with the op's range closed.
        let result = catch_unwind(AssertUnwindSafe(|| observers::started(observers, op)));
        if let Err(panic) = result {
            at_launches(
                Launches::End,
                flags,
                op,
                (device_op, instance, 0),
                queued_on.as_ref(),
                None,
            );
            if memory_per_op {
                core_probe::running_finished();
            }
            resume_unwind(panic);
        }
    }
    let forward = link.map_or(0, |(link, _)| link.forward);
    let started = (flags & (STATS | TRACE | DEVICE) != 0).then(clock::now);
    if let (Some(id), Some(started)) = (device_op, started) {
        device_time::op_started(
            id,
            op,
            (phase::current(), device_id, stack, forward),
            shapes.as_deref(),
            started,
        );
    }
    let memory = match (queued_memory, memory_launch) {
        (Some(queued), _) => Some(MemoryAtStart::Queued(queued)),
        (None, Some(launch)) => {
            // On the launch thread: its own stream.
            let (stream, generation) = (launch.current_stream(), stats::memory_generation());
            in_use_at_start(&launch, stream, generation).map(|in_use| MemoryAtStart::Device {
                launch,
                stream,
                generation,
                in_use,
            })
        }
        (None, None) if memory_per_op => {
            let host = context_memory::thread_allocations().map(MemoryAtStart::Host);
            if host.is_none() {
                stats::host_untracked();
            }
            host
        }
        (None, None) => None,
    };
    if queued_on.is_none()
        && let Some(id) = device_op
    {
        // Here, the launches are tagged right around the inner op, inside its span (and
        // outside what its observers do).
        device_time::tag_launches(id);
    }
    // Last: the blocks made from here until the op returns are the op's.
    let maker_before = (memory_per_op && live_allocations::tracing())
        .then(|| live_allocations::set_maker(stats::maker(op, phase, stack, shapes.as_deref())));
    ActiveOp {
        op,
        flags,
        device,
        observers,
        started,
        shapes,
        work_args,
        outputs: Vec::new(),
        counted: None,
        stack,
        link,
        device_op,
        queued_on,
        queuing,
        instance,
        device_id,
        memory,
        maker_before,
        graph_inputs,
    }
}

/// An op of the step the graph records, with its inputs and outputs: into the graph, and its
/// outputs' host buffers watched for their frees.
fn to_graph(op: &'static Op, stack: u32, link: (Link, Pass), inputs: GraphInputs) {
    let outputs = inputs.outputs.unwrap_or_default();
    let input_tensors: Vec<TensorSeen> = inputs.seen.into_iter().map(|(t, _)| t).collect();
    let (output_tensors, buffers): (Vec<TensorSeen>, Vec<Option<usize>>) =
        outputs.seen.unwrap_or_default().into_iter().unzip();
    let made = graph::op(graph::OpSeen {
        op,
        phase: inputs.phase,
        stack,
        link,
        inputs: &input_tensors,
        outputs: &output_tensors,
        ended: &[],
        unknown_tensors: !inputs.complete || !outputs.complete,
        step: None,
    });
    for (tensor, buffer) in made.into_iter().zip(buffers) {
        if let Some(buffer) = buffer
            && context_memory::host_in_use().is_some()
        {
            graph::watch_host_buffer(buffer, tensor);
        }
    }
}

/// The pass of an op in `phase` called from `stack`, for its link: the phase's name, else
/// (outside any user range) Burn's frames on the stack.
fn pass_of(phase: u32, stack: u32) -> Pass {
    lineage::pass_of_phase(phase)
        .or_else(|| match phase {
            0 => call_sites::phase_of(stack).and_then(Pass::of_range),
            _ => None,
        })
        .unwrap_or(Pass::Forward)
}

/// A new run of an op queued on a launch thread.
fn next_instance() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
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
            op_ranges::pop_op();
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
fn finish<B: Backend>(mut active: ActiveOp<B>) {
    if let Some(before) = active.maker_before {
        live_allocations::set_maker(before);
    }
    sync::<B>(active.device.as_ref());
    let (queued_memory, memory) = match active.memory.take() {
        None => (None, None),
        Some(at_start) => {
            core_probe::running_finished();
            finish_memory(&active, at_start)
        }
    };
    if active.queued_on.is_none() && active.device_op.is_some() {
        device_time::untag_launches();
    }
    if let (Some(inputs), Some(link)) = (active.graph_inputs.take(), active.link) {
        // After the op's memory was read: the graph's own allocations are not the op's.
        to_graph(active.op, active.stack, link, inputs);
    }
    if let Some(started) = active.started {
        let ended = clock::now();
        if active.flags & TRACE != 0 {
            trace::record_op(
                active.op,
                (started, ended),
                active.device_id,
                active.shapes.as_deref(),
                active
                    .link
                    .map_or((0, 0), |(link, pass)| link.flow_calls(pass)),
            );
        }
        if active.flags & STATS != 0 {
            let counted = active.counted.take();
            let work = active.work_args.take().map(|inputs| {
                if let Some(counted) = counted {
                    return counted;
                }
                let outputs = std::mem::take(&mut active.outputs);
                match (work_tensors(inputs), work_tensors(outputs)) {
                    (Some((inputs, window)), Some((outputs, _))) => {
                        core_probe::work_of(active.op, inputs, outputs, window)
                    }
                    _ => Work::default(),
                }
            });
            stats::record(
                active.op,
                ended.saturating_sub(started),
                active.shapes,
                (
                    active.device_id,
                    active.stack,
                    active.link.map_or(0, |(link, _)| link.forward),
                ),
                memory,
                work,
            );
        }
    }
    if let Some(id) = active.device_op {
        device_time::op_finished(id);
    }
    let finished = active.observers.as_ref().map(|observers| {
        catch_unwind(AssertUnwindSafe(|| {
            observers::finished(observers, active.op)
        }))
    });
    // A read let go of its hold after its start: its end takes it again.
    let queuing = active
        .queuing
        .or_else(|| active.queued_on.as_ref().map(LaunchThread::hold_queuing));
    at_launches(
        Launches::End,
        active.flags,
        active.op,
        (active.device_op, active.instance, 0),
        active.queued_on.as_ref(),
        queued_memory,
    );
    drop(queuing);
    if let Some(launch) = &active.queued_on
        && !attached::is_attached(launch)
    {
        // Detached while the op ran (the session finished): nothing may run there again to
        // take the end out of the queue before the program ends.
        launch.drain();
    }
    if let Some(Err(panic)) = finished
        && !std::thread::panicking()
    {
        // An observer's panic reaches the caller with the op's range closed (while the op
        // itself unwinds, the op's panic does).
        resume_unwind(panic);
    }
}

/// The memory of an op that read it here, or what its queued end reads it for.
fn finish_memory<B: Backend>(
    active: &ActiveOp<B>,
    at_start: MemoryAtStart,
) -> (Option<Box<QueuedMemory>>, Option<stats::OpMemory>) {
    let call = match at_start {
        MemoryAtStart::Queued(queued) => {
            let queued = QueuedMemory {
                shapes: active.shapes.clone().map(Vec::into_boxed_slice),
                stack: active.stack,
                forward: active.link.map_or(0, |(link, _)| link.forward),
                ..queued
            };
            return (Some(Box::new(queued)), None);
        }
        MemoryAtStart::Device {
            launch,
            stream,
            generation,
            in_use,
        } => in_use_at_end(&launch, stream, generation).map(|end| device_memory(in_use, end)),
        MemoryAtStart::Host(at_start) => {
            context_memory::thread_allocations().map(|now| stats::OpMemory {
                alloc_bytes: now.allocated.saturating_sub(at_start.allocated),
                freed_bytes: now.freed.saturating_sub(at_start.freed),
                in_use_bytes: context_memory::host_in_use().unwrap_or(0),
            })
        }
    };
    (None, call)
}

/// The start or the end of what an op does where its kernels are launched.
enum Launches {
    Start,
    End,
}

/// Runs the op's start or end where its kernels are launched: queued on `queued_on` (run
/// `instance` there), or here.
fn at_launches(
    launches: Launches,
    flags: Flags,
    op: &'static Op,
    (device_op, instance, payload): (Option<u64>, u64, u64),
    queued_on: Option<&LaunchThread>,
    memory: Option<Box<QueuedMemory>>,
) {
    let id = device_op.unwrap_or(0);
    match (queued_on, launches) {
        // Here, the op tags its launches itself, inside its span (`start`, `finish`).
        (None, Launches::Start) => launches_start(flags & !DEVICE, op, id, payload),
        (None, Launches::End) => launches_end(flags & !DEVICE, op, id),
        (Some(launch), launches) => launch.queue(QueuedTask {
            run: match launches {
                Launches::Start => queued_start,
                Launches::End => queued_end,
            },
            flags,
            op,
            id,
            instance,
            memory,
            payload,
        }),
    }
}
