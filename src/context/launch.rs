//! Launch threads: where a backend launches its kernels, when that is not the thread that
//! calls the op.
//!
//! CubeCL backends (burn's `Cuda`, `Wgpu`, ...) launch every kernel on one device thread per
//! device. Nsight Systems ties a kernel to the NVTX range open on the thread that launched it,
//! so an op range on the caller's thread contains none of its kernels. Ops that run on the
//! launch thread, inside their range, fix that: [`LaunchThread::run`] runs a whole step there.

use std::cell::Cell;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;

use burn_backend::Backend;

use super::phase;

/// Runs a task on the launch thread and blocks until it has run; `Err` says why it could not.
type Runner = dyn Fn(&mut (dyn FnMut() + Send)) -> Result<(), String> + Send + Sync;

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
    /// The name the thread gets in NVTX and on the timeline.
    thread_name: String,
    runner: Box<Runner>,
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
                thread_name: thread_name.into(),
                runner: Box::new(runner),
            }),
        }
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
    /// # Panics
    /// If `work` panics: the panic reaches the caller, after every range `work` opened has
    /// been closed. If the runner could not run `work` (for example, the device thread is
    /// gone), with the runner's reason.
    pub fn run<T: Send>(&self, work: impl FnOnce() -> T + Send) -> T {
        if ON_LAUNCH_THREAD.get() {
            return work();
        }
        let caller_phase = phase::current();
        let mut work = Some(work);
        let mut outcome = None;
        let mut task = || {
            if let Some(work) = work.take() {
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
