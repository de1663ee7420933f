//! The tool-level half of [`LaunchThread`]: naming the thread in NVTX, and the launch thread of
//! burn's CubeCL backends. The type itself, and running work there, are in the context layer.

#[cfg(any(feature = "cuda", feature = "wgpu"))]
mod cubecl;

#[cfg(any(feature = "cuda", feature = "wgpu"))]
pub use cubecl::{CubeclBackend, DeviceThread};

use crate::LaunchThread;
use crate::context::attached;

impl LaunchThread {
    /// Attaches the launch thread to its device: while the returned guard lives, every op of
    /// that device that runs outside [`run`](LaunchThread::run) (evaluation, moving data to
    /// the device, ...) queues the start and end of its range (and its device-time tag) on the
    /// launch thread, around the kernels it launches there. Its range then contains its
    /// kernels under Nsight Systems, and the op does not wait for the launch thread. It
    /// replaces the launch thread attached to the same device before.
    ///
    /// `None` when the launch thread has no [queue](LaunchThread::with_queue): ops outside
    /// `run` then keep their ranges on their own thread. [`Session::set_launch_thread`]
    /// attaches the launch thread it is given.
    ///
    /// [`Session::set_launch_thread`]: crate::Session::set_launch_thread
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use burn::backend::NdArray;
    /// use burn_profiled::LaunchThread;
    ///
    /// // A stand-in: this launch thread runs its tasks and queue inline, where they are sent.
    /// let launch = LaunchThread::new::<NdArray>(Default::default(), "cpu", |task| {
    ///     task();
    ///     Ok(())
    /// })
    /// .with_queue(|task| task.run());
    /// let attached = launch.attach().expect("it has a queue");
    /// // ... ops outside `launch.run` queue their ranges on it ...
    /// drop(attached);
    /// ```
    #[must_use = "the launch thread is detached when the guard is dropped"]
    pub fn attach(&self) -> Option<AttachedLaunchThread> {
        if !self.has_queue() {
            return None;
        }
        attached::attach(self);
        Some(AttachedLaunchThread {
            launch: self.clone(),
        })
    }

    /// Names the launch thread in NVTX and on the timeline with its
    /// [`thread_name`](LaunchThread::thread_name); the naming runs there. `LaunchThread::cubecl`
    /// does it when it makes the launch thread.
    pub fn name_thread(&self) {
        let name = self.thread_name().to_owned();
        self.run(move || crate::nvtx::name_current_thread(&name));
    }
}

/// An [attached](LaunchThread::attach) launch thread; dropping the guard detaches it, and
/// blocks until the ranges queued there so far have run.
#[must_use = "the launch thread is detached when the guard is dropped"]
#[derive(Debug)]
pub struct AttachedLaunchThread {
    launch: LaunchThread,
}

impl AttachedLaunchThread {
    pub(crate) fn launch_thread(&self) -> &LaunchThread {
        &self.launch
    }
}

impl Drop for AttachedLaunchThread {
    fn drop(&mut self) {
        attached::detach(&self.launch);
        // The ranges still queued run now, not whenever the launch thread next works (or
        // never, if the program ends first): none is left open.
        self.launch.drain();
    }
}
