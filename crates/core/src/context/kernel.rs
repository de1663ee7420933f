//! What device time and the timeline both say of a kernel: its launch configuration, as CUPTI's
//! record gives it, and the call that launched it, on the shared clock.

use std::time::Duration;

/// A kernel's launch configuration (what Kineto writes as a kernel's args).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelShape {
    pub context: u32,
    pub grid: [i32; 3],
    pub block: [i32; 3],
    pub registers_per_thread: u16,
    /// Static and dynamic shared memory, in bytes.
    pub shared_memory: i32,
}

/// The driver (or runtime) call that launched a kernel: CUPTI's callback id (`cuLaunchKernel`
/// is 307), the OS thread that made it, and when, on the shared clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchCall {
    pub cbid: u32,
    pub tid: u32,
    pub start: Duration,
    pub end: Duration,
}
