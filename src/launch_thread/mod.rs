//! The tool-level half of [`LaunchThread`]: naming the thread in NVTX, and the launch thread of
//! burn's CubeCL backends. The type itself, and running work there, are in the context layer.

#[cfg(any(feature = "cuda", feature = "wgpu"))]
mod cubecl;

#[cfg(any(feature = "cuda", feature = "wgpu"))]
pub use cubecl::{CubeclBackend, DeviceThread};

use crate::LaunchThread;

impl LaunchThread {
    /// Names the launch thread in NVTX and on the timeline with its
    /// [`thread_name`](LaunchThread::thread_name); the naming runs there. `LaunchThread::cubecl`
    /// does it when it makes the launch thread.
    pub fn name_thread(&self) {
        let name = self.thread_name().to_owned();
        self.run(move || crate::nvtx::name_current_thread(&name));
    }
}
