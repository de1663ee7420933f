//! The top of the core's op path: the events every edition reports the same way, whatever
//! turns Burn's ops into op events (Burn 0.21's `Profiled<B>`, a Burn 0.22 session): a user
//! range opened or closed, a stopwatch measurement, the op running on a thread for an
//! out-of-memory message, and the device time collected into the statistics and the timeline.
//!
//! Every import points down: this module knows the sinks and the context, the tools above it
//! (NVTX user ranges, the stopwatch, memory) report through it.

use std::cell::RefCell;
use std::time::Duration;

use crate::context::op::Op;
use crate::context::phase;
use crate::context::switches::{self, RANGES, SYNC};
use crate::shape::Shape;
use crate::sinks::{device_time, op_ranges, stats, trace};
use crate::work::{TensorArg, Work};

/// Switches NVTX op ranges on or off, at any time (for example after warm-up).
///
/// While on, every op the edition reports (every op of a `Profiled` backend on Burn 0.21, every
/// block of a Burn 0.22 session) pushes a range in the NVTX domain `burn` whose message is the
/// op's name, registered once per op. An op that is running when the switch flips still pops
/// the range it pushed.
///
/// Ranges need an NVTX tool to go to (Nsight Systems, the NVTX recorder): without one attached
/// to the process, or without the `nvtx` cargo feature, this only records the setting and ops
/// do nothing for it, so the `profile` preset left on outside `nsys` costs no more than its
/// other parts. In particular ops queue nothing on an attached launch thread for their ranges.
pub fn set_op_ranges(on: bool) {
    if on {
        switches::set_nvtx_tool(op_ranges::reach_a_tool());
    }
    switches::set(RANGES, on);
}

/// Whether NVTX op ranges are on (switched on, whether or not an NVTX tool takes them).
pub fn op_ranges() -> bool {
    switches::requested(RANGES)
}

/// Switches per-op device sync on or off.
///
/// While on, each op syncs its device (`B::sync`) before its range is pushed and again before
/// it is popped, so asynchronous GPU work lands inside the op's own range and an observer's
/// timing of the op covers its device time. This serialises the device and costs a full sync
/// per op: use it to attribute time, not to measure throughput. Ops whose device cannot be
/// known from their arguments (transactions) are not synced; reads are, on their tensor's
/// device.
pub fn set_op_sync(on: bool) {
    switches::set(SYNC, on);
}

/// Whether per-op device sync is on.
pub fn op_sync() -> bool {
    switches::is_on(SYNC)
}

/// An op running on this thread, recorded for an out-of-memory message ([`running_op`]).
struct Running {
    op: &'static Op,
    phase: u32,
    shapes: Option<Vec<Shape>>,
    device: u32,
}

thread_local! {
    /// The ops running on this thread with per-op memory on, innermost last.
    static RUNNING: RefCell<Vec<Running>> = const { RefCell::new(Vec::new()) };
}

/// `op` started on this thread in `phase` on `device` (per-op memory is on): until
/// [`running_finished`], an out-of-memory message names it.
#[doc(hidden)]
pub fn running_started(op: &'static Op, phase: u32, shapes: Option<Vec<Shape>>, device: u32) {
    RUNNING.with_borrow_mut(|running| {
        running.push(Running {
            op,
            phase,
            shapes,
            device,
        })
    });
}

/// The innermost op [`running_started`] on this thread finished.
#[doc(hidden)]
pub fn running_finished() {
    RUNNING.with_borrow_mut(Vec::pop);
}

/// The innermost op running on this thread, recorded while per-op memory is on: its name,
/// phase, input shapes (as text) and device id.
#[doc(hidden)]
pub fn running_op() -> Option<(&'static str, String, Option<String>, u32)> {
    RUNNING
        .try_with(|running| {
            running.borrow().last().map(|r| {
                (
                    r.op.name(),
                    phase::name(r.phase),
                    r.shapes.as_deref().map(stats::shapes_text),
                    r.device,
                )
            })
        })
        .ok()
        .flatten()
}

/// Collects the device time recorded so far ([`device_time`]) into the statistics and the
/// timeline: each kernel, matched to the op that launched it, adds to that op's row. Sync the
/// device first: CUPTI hands over every record it holds, and a kernel still running would come
/// without its end (it is counted in [`DeviceTimeSummary::incomplete_kernels`]). After
/// [`device_time::stop`] it collects what CUPTI handed over while stopping. Returns the number
/// of kernels collected.
///
/// [`DeviceTimeSummary::incomplete_kernels`]: device_time::DeviceTimeSummary::incomplete_kernels
pub fn flush_device_time() -> usize {
    let matched = device_time::collect();
    let count = matched.len();
    for device_time::Matched {
        launch,
        kernel,
        start,
        end,
        call,
    } in matched
    {
        if let Some(properties) = device_time::describe_device(kernel.device) {
            trace::record_device(kernel.device, properties);
        }
        trace::record_kernel(trace::KernelRecord {
            device: kernel.device,
            stream: kernel.stream,
            name: &kernel.name,
            start,
            end,
            launched_by: (launch.tid, launch.started),
            correlation: kernel.correlation,
            launch: call,
            shape: kernel.shape,
        });
        if launch.in_warmup {
            continue;
        }
        let time = Duration::from_nanos(kernel.duration_ns());
        stats::record_kernel(
            launch.op,
            (launch.phase, launch.device, launch.stack, launch.forward),
            launch.shapes,
            time,
        );
    }
    count
}

/// A user range named `name` opened on this thread: it becomes the phase of the thread's ops,
/// and the timeline records it.
#[doc(hidden)]
pub fn range_pushed(name: String) {
    trace::range_pushed(&name);
    phase::push(name);
}

/// This thread's innermost user range closed; its name, `None` when none was open.
#[doc(hidden)]
pub fn range_popped() -> Option<String> {
    trace::range_popped();
    phase::pop()
}

/// A stopwatch measurement `name` ran on this thread from `start` to `end`.
#[doc(hidden)]
pub fn measured(name: &str, start: Duration, end: Duration) {
    trace::record_measurement(name, start, end);
}

/// An op's work, by its op and arguments, once per distinct set on each thread.
#[derive(PartialEq, Eq, Hash)]
struct WorkKey {
    op: usize,
    inputs: Vec<TensorArg>,
    outputs: Vec<TensorArg>,
    window: Option<Shape>,
}

/// Distinct (op, arguments) kept per thread at most; past it the cache starts over, so that a
/// run of ever-new shapes keeps its memory flat.
const WORK_CACHE_ENTRIES: usize = 4096;

thread_local! {
    static WORK_CACHE: RefCell<rustc_hash::FxHashMap<WorkKey, Work>> =
        RefCell::new(rustc_hash::FxHashMap::default());
}

/// The work of `op` on `inputs` into `outputs` (its `window`: a pooling op's kernel size),
/// counted once per distinct op and arguments on this thread ([`work::of`](crate::work::of)).
#[doc(hidden)]
pub fn work_of(
    op: &'static Op,
    inputs: Vec<TensorArg>,
    outputs: Vec<TensorArg>,
    window: Option<Shape>,
) -> Work {
    let key = WorkKey {
        op: op as *const Op as usize,
        inputs,
        outputs,
        window,
    };
    WORK_CACHE.with_borrow_mut(|cache| {
        if let Some(work) = cache.get(&key) {
            return *work;
        }
        let work = crate::work::of(
            op.name(),
            &key.inputs,
            &key.outputs,
            key.window.as_ref().map(Shape::as_slice),
        );
        if cache.len() >= WORK_CACHE_ENTRIES {
            cache.clear();
        }
        cache.insert(key, work);
        work
    })
}
