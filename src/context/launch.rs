//! Launch threads: where a backend launches its kernels, when that is not the thread that
//! calls the op.
//!
//! CubeCL backends (burn's `Cuda`, `Wgpu`, ...) launch every kernel on one device thread per
//! device. Nsight Systems ties a kernel to the NVTX range open on the thread that launched it,
//! so an op range on the caller's thread contains none of its kernels. Ops that run on the
//! launch thread, inside their range, fix that: [`LaunchThread::run`] runs a whole step there.
//! Ops outside such a step queue their range's start and end on an attached launch thread
//! ([`LaunchThread::attach`]), in the same queue as their kernel launches (`attached.rs`).

use std::any::TypeId;
use std::cell::Cell;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::thread::ThreadId;

use burn_backend::{Backend, DeviceId, DeviceOps};

use super::memory::{DeviceMemory, MemoryReader};
use super::op::Op;
use super::phase;
use super::switches::Flags;

/// Runs a task on the launch thread and blocks until it has run; `Err` says why it could not.
type Runner = dyn Fn(&mut (dyn FnMut() + Send)) -> Result<(), String> + Send + Sync;

/// Queues a task on the launch thread, behind the work queued before it, without waiting.
type Queue = dyn Fn(QueuedTask) + Send + Sync;

/// The thread a backend launches its kernels on, for one device.
///
/// Made with [`LaunchThread::new`] from a function that runs a task there, or, with the
/// `cuda` or `wgpu` cargo feature, with `LaunchThread::cubecl` for burn's CubeCL backends.
/// [`run`](LaunchThread::run) a training step there: its ops run where their kernels are
/// launched, inside their op ranges.
///
/// The runner must behave like CubeCL's device thread: tasks run one at a time in the order
/// they were sent, the sender blocks until its task has run, and a task sent from the launch
/// thread itself runs at once, inline.
///
/// ```
/// use burn::backend::NdArray;
/// use burn_profiled::LaunchThread;
///
/// // NdArray launches nothing: its "launch thread" is the caller's, which runs tasks inline.
/// let launch = LaunchThread::new::<NdArray>(Default::default(), "cpu", |task| {
///     task();
///     Ok(())
/// });
/// assert_eq!(launch.run(|| 1 + 1), 2);
/// ```
#[derive(Clone)]
pub struct LaunchThread {
    inner: Arc<Inner>,
}

struct Inner {
    /// `Debug` of the device, for messages.
    device_name: String,
    /// Which device: ops find their attached launch thread by these two.
    device_type: TypeId,
    device_id: DeviceId,
    /// The name the thread gets in NVTX and on the timeline.
    thread_name: String,
    runner: Box<Runner>,
    queue: OnceLock<Box<Queue>>,
    /// Why steps cannot run there, when they cannot (a fused backend's).
    steps_refused: OnceLock<String>,
    /// Held by the thread queuing an op's range there, from the op's start to its end.
    queuing: QueuingLock,
    /// Reads the device's memory, when its backend reports it.
    memory: OnceLock<MemorySource>,
    /// The streams whose memory a step's reading adds up: of the threads that ran the run's
    /// steps (CubeCL keeps a memory pool per stream).
    streams: Mutex<Vec<u64>>,
}

/// How a launch thread reads its device's memory.
struct MemorySource {
    /// The calling thread's stream.
    current_stream: fn() -> u64,
    read: Box<MemoryReader>,
}

/// Lets one thread at a time queue an op's work on the launch thread: the launch thread's NVTX
/// stack and CUPTI tags are one stack, so the start and end of one thread's op must not have
/// another thread's op begin between them. Re-entrant (an op inside an op, on one thread), and
/// released by whichever thread drops the hold (a read's future may move).
#[derive(Default)]
struct QueuingLock {
    /// The holding thread and how many holds it has.
    holder: Mutex<(Option<ThreadId>, usize)>,
    released: Condvar,
}

/// A thread's hold of a launch thread's queuing lock; dropping it releases one level.
pub(crate) struct QueuingHold {
    launch: LaunchThread,
}

impl Drop for QueuingHold {
    fn drop(&mut self) {
        let lock = &self.launch.inner.queuing;
        let mut holder = lock.holder.lock().unwrap_or_else(PoisonError::into_inner);
        holder.1 = holder.1.saturating_sub(1);
        if holder.1 == 0 {
            holder.0 = None;
            lock.released.notify_one();
        }
    }
}

/// The start or the end of an op's range, queued on its launch thread by an op that runs
/// elsewhere. A [queue](LaunchThread::with_queue) runs it there with [`run`](QueuedTask::run).
pub struct QueuedTask {
    pub(crate) run: fn(QueuedTask),
    pub(crate) flags: Flags,
    pub(crate) op: &'static Op,
    pub(crate) id: u64,
    /// Which run of the op: its start and end carry the same.
    pub(crate) instance: u64,
    /// What the op's memory is read for, with per-op memory on.
    pub(crate) memory: Option<Box<QueuedMemory>>,
    /// Its range's payload: the forward call it is or works for, 0 for none.
    pub(crate) payload: u64,
}

/// Per-op memory of a queued op: read on the launch thread, in the op's stream, at its start
/// and its end, and recorded under the op's row.
#[derive(Clone)]
pub(crate) struct QueuedMemory {
    pub(crate) launch: LaunchThread,
    pub(crate) stream: u64,
    /// Which start of per-op memory it was read in: readings of an earlier one are stale.
    pub(crate) generation: u64,
    pub(crate) phase: u32,
    pub(crate) shapes: Option<Box<[burn_profiled_core::shape::Shape]>>,
    pub(crate) device: u32,
    /// The op's call stack (`call_sites::capture`), 0 when not taken.
    pub(crate) stack: u32,
    /// The forward op it works for (`context::lineage`), 0 for none.
    pub(crate) forward: u32,
}

impl QueuedTask {
    /// Runs the task: call it on the launch thread, after the tasks queued before it.
    pub fn run(self) {
        (self.run)(self);
    }
}

impl fmt::Debug for QueuedTask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueuedTask").field("op", &self.op).finish()
    }
}

impl fmt::Debug for LaunchThread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LaunchThread")
            .field("device", &self.inner.device_name)
            .field("thread", &self.inner.thread_name)
            .finish()
    }
}

thread_local! {
    /// Whether this thread is running a task of a launch thread, i.e. is that launch thread.
    static ON_LAUNCH_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is running work given to [`LaunchThread::run`].
pub(crate) fn on_launch_thread() -> bool {
    ON_LAUNCH_THREAD.get()
}

impl LaunchThread {
    /// The launch thread of `device` (of backend `B`), named `thread_name` in NVTX, reached
    /// through `runner`: a function that runs the task it is given on that thread, blocks until
    /// the task returns, and says why when it could not run it.
    pub fn new<B: Backend>(
        device: B::Device,
        thread_name: impl Into<String>,
        runner: impl Fn(&mut (dyn FnMut() + Send)) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        LaunchThread {
            inner: Arc::new(Inner {
                device_name: format!("{device:?}"),
                device_type: TypeId::of::<B::Device>(),
                device_id: device.id(),
                thread_name: thread_name.into(),
                runner: Box::new(runner),
                queue: OnceLock::new(),
                steps_refused: OnceLock::new(),
                queuing: QueuingLock::default(),
                memory: OnceLock::new(),
                streams: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Gives the launch thread a queue: a function that queues a task there, behind the work
    /// (kernel launches) queued before it, and returns at once. With a queue, the launch thread
    /// can be [attached](LaunchThread::attach). `LaunchThread::cubecl` has one.
    ///
    /// # Panics
    /// If the launch thread (or a clone of it) already has a queue.
    pub fn with_queue(self, queue: impl Fn(QueuedTask) + Send + Sync + 'static) -> Self {
        if self.inner.queue.set(Box::new(queue)).is_err() {
            panic!(
                "the launch thread `{}` already has a queue: give it one queue, once",
                self.inner.thread_name
            );
        }
        self
    }

    /// Gives the launch thread a way to read its device's memory (`LaunchThread::cubecl` has
    /// one: CubeCL's `memory_usage`): the session's per-step memory and per-op device memory
    /// read it. `read` is called on the thread that reads: at a step's end on the thread that
    /// ends it, and for per-op memory on the launch thread, behind the op's work.
    ///
    /// ```
    /// use burn::backend::NdArray;
    /// use burn_profiled::LaunchThread;
    /// use burn_profiled::memory::DeviceMemory;
    ///
    /// let launch = LaunchThread::new::<NdArray>(Default::default(), "cpu", |task| {
    ///     task();
    ///     Ok(())
    /// })
    /// .with_memory(|| Some(DeviceMemory { allocations: 1, in_use_bytes: 64, reserved_bytes: 1024 }));
    /// assert_eq!(launch.memory().map(|memory| memory.in_use_bytes), Some(64));
    /// ```
    ///
    /// # Panics
    /// If the launch thread (or a clone of it) can already read its memory.
    pub fn with_memory(
        self,
        read: impl Fn() -> Option<DeviceMemory> + Send + Sync + 'static,
    ) -> Self {
        self.with_stream_memory(|| 0, move |_stream| read())
    }

    /// [`with_memory`](LaunchThread::with_memory) for a device whose memory is kept per stream:
    /// `read` reads the stream given, or the calling thread's (`None`), and `current_stream`
    /// says which stream the calling thread's is.
    pub(crate) fn with_stream_memory(
        self,
        current_stream: fn() -> u64,
        read: impl Fn(Option<u64>) -> Option<DeviceMemory> + Send + Sync + 'static,
    ) -> Self {
        let source = MemorySource {
            current_stream,
            read: Box::new(read),
        };
        if self.inner.memory.set(source).is_err() {
            panic!(
                "the launch thread `{}` can already read its memory: give it one reader, once",
                self.inner.thread_name
            );
        }
        self
    }

    /// Whether the launch thread can read its device's memory.
    pub fn reads_memory(&self) -> bool {
        self.inner.memory.get().is_some()
    }

    /// The device's memory now, over the streams of the threads that run the steps (the one
    /// that gave the launch thread to a session, and the launch thread itself once a step ran
    /// there); `None` when it cannot be read.
    pub fn memory(&self) -> Option<DeviceMemory> {
        let source = self.inner.memory.get()?;
        let streams = self
            .inner
            .streams
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if streams.is_empty() {
            return (source.read)(None);
        }
        streams
            .into_iter()
            .map(|stream| (source.read)(Some(stream)))
            .try_fold(DeviceMemory::default(), |sum, memory| Some(sum + memory?))
    }

    /// The memory of the calling thread's stream, or of `stream`.
    pub(crate) fn memory_of(&self, stream: Option<u64>) -> Option<DeviceMemory> {
        (self.inner.memory.get()?.read)(stream)
    }

    /// The calling thread's stream, for reading its memory elsewhere (0 without a reader).
    pub(crate) fn current_stream(&self) -> u64 {
        self.inner
            .memory
            .get()
            .map_or(0, |source| (source.current_stream)())
    }

    /// Adds the calling thread's stream to those [`memory`](LaunchThread::memory) reads: a
    /// thread that runs steps.
    pub(crate) fn note_stream(&self) {
        let stream = self.current_stream();
        let mut streams = self
            .inner
            .streams
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if self.inner.memory.get().is_some() && !streams.contains(&stream) {
            streams.push(stream);
        }
    }

    /// Makes [`run`](LaunchThread::run) refuse work, saying `why`: a launch thread that only
    /// takes queued ranges (a fused backend's device thread, which work there would deadlock).
    #[cfg_attr(not(feature = "fusion"), allow(dead_code))]
    pub(crate) fn refusing_steps(self, why: String) -> Self {
        let _ = self.inner.steps_refused.set(why);
        self
    }

    /// Whether [`run`](LaunchThread::run) takes work: not on the launch thread of a fused
    /// backend (`burn_profiled::fused`), whose ops already run elsewhere and queue their ranges
    /// there. [`Session::run_step`](crate::Session::run_step) runs steps where it is called then.
    pub fn runs_steps(&self) -> bool {
        self.inner.steps_refused.get().is_none()
    }

    /// Whether the launch thread has a [queue](LaunchThread::with_queue).
    pub fn has_queue(&self) -> bool {
        self.inner.queue.get().is_some()
    }

    pub(crate) fn is_for<D: DeviceOps>(&self, device: Option<&D>) -> bool {
        self.inner.device_type == TypeId::of::<D>()
            && device.is_none_or(|device| device.id() == self.inner.device_id)
    }

    pub(crate) fn same_device(&self, other: &LaunchThread) -> bool {
        self.inner.device_type == other.inner.device_type
            && self.inner.device_id == other.inner.device_id
    }

    /// An id of the launch thread (its clones share it) for the process's lifetime.
    pub(crate) fn id(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
    }

    pub(crate) fn same_as(&self, other: &LaunchThread) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Waits until no other thread is queuing an op there, then holds the launch thread for this
    /// one until the hold is dropped: an op holds it from queuing its start to queuing its end.
    pub(crate) fn hold_queuing(&self) -> QueuingHold {
        let this = Some(std::thread::current().id());
        let lock = &self.inner.queuing;
        let mut holder = lock.holder.lock().unwrap_or_else(PoisonError::into_inner);
        while holder.1 > 0 && holder.0 != this {
            holder = lock
                .released
                .wait(holder)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *holder = (this, holder.1 + 1);
        QueuingHold {
            launch: self.clone(),
        }
    }

    /// Queues `task` there; runs it here without a queue (only attached launch threads, which
    /// have one, are given tasks).
    pub(crate) fn queue(&self, task: QueuedTask) {
        match self.inner.queue.get() {
            Some(queue) => queue(task),
            None => task.run(),
        }
    }

    /// Blocks until the tasks queued so far have run: a queue may hold them until the launch
    /// thread next takes blocking work (CubeCL's does, until 32 tasks or a flush). Nothing to
    /// wait for on the launch thread itself, and nothing is reported if the runner fails.
    pub(crate) fn drain(&self) {
        if ON_LAUNCH_THREAD.get() || self.inner.queue.get().is_none() {
            return;
        }
        let _ = (self.inner.runner)(&mut || {});
    }

    /// Its device, as `Debug` prints it.
    pub(crate) fn device_name(&self) -> &str {
        &self.inner.device_name
    }

    /// The name the launch thread gets in NVTX and on the timeline.
    pub fn thread_name(&self) -> &str {
        &self.inner.thread_name
    }

    /// Runs `work` on the launch thread and returns its result, blocking until then.
    ///
    /// The ops `work` runs are on the launch thread: their ranges contain their kernel
    /// launches, onto which Nsight Systems projects the kernels. The caller's phase (its
    /// innermost user range) is the phase of those ops until `work` opens ranges of its own.
    /// On the launch thread itself, `work` runs at once.
    ///
    /// `work` holds the device thread until it returns, so it must not wait for work that
    /// thread would run later, nor for another device's thread: one device per step, no copy
    /// to another device, no collective (all-reduce) inside. With several devices, run steps
    /// where they are called and let the ops queue their ranges
    /// ([`attach`](LaunchThread::attach)). A launch thread runs work for one device: `run` on
    /// another device's launch thread from inside `work` runs there too, on this thread.
    /// Autotuning inside `work` runs there as well, so the first steps of a new shape include
    /// its benchmark kernels.
    ///
    /// # Panics
    /// If `work` panics: the panic reaches the caller, after every range `work` opened has
    /// been closed. If the runner could not run `work` (for example, the device thread is
    /// gone), with the runner's reason. On a launch thread that does not [run
    /// steps](LaunchThread::runs_steps) (a fused backend's), saying why.
    pub fn run<T: Send>(&self, work: impl FnOnce() -> T + Send) -> T {
        if ON_LAUNCH_THREAD.get() {
            return work();
        }
        if let Some(why) = self.inner.steps_refused.get() {
            panic!("{why}");
        }
        let caller_phase = phase::current();
        let mut work = Some(work);
        let mut outcome = None;
        let mut task = || {
            if let Some(work) = work.take() {
                self.note_stream();
                let was_on = ON_LAUNCH_THREAD.replace(true);
                let result =
                    catch_unwind(AssertUnwindSafe(|| phase::inheriting(caller_phase, work)));
                ON_LAUNCH_THREAD.set(was_on);
                outcome = Some(result);
            }
        };
        let ran = (self.inner.runner)(&mut task);
        match (outcome, ran) {
            (Some(Ok(value)), _) => value,
            (Some(Err(panic)), _) => resume_unwind(panic),
            (None, Err(reason)) => panic!(
                "the launch thread `{}` of device {} did not run the task: {reason}",
                self.inner.thread_name, self.inner.device_name
            ),
            (None, Ok(())) => panic!(
                "the runner of launch thread `{}` (device {}) returned without running the task: a runner must run it before it returns",
                self.inner.thread_name, self.inner.device_name
            ),
        }
    }
}
