//! The bottom layer of the op path: what an op is and what is known about the thread it runs
//! on. The sinks above read it; the user-facing tools write into it; it imports nothing of the
//! crate.
//!
//! | module | holds |
//! |---|---|
//! | [`op`] | [`Op`](op::Op): an op's identity (name, NVTX registration slot) |
//! | [`switches`] | the one flag word the probe checks per op |
//! | [`device`] | the devices ops run on, each with a small id |
//! | [`clock`] | the monotonic clock every tool shares |
//! | [`thread`] | thread ids and the names given to threads |
//! | [`phase`] | each thread's open user ranges; the innermost is the phase of its ops |
//! | [`warmup`] | whether the run is still warming up |
//! | [`kernel`] | a kernel's launch configuration and launch call, for device time and the timeline |
//! | [`launch`] | launch threads: where a backend launches its kernels, and running work there |
//! | [`attached`] | the launch threads that ops outside a step queue their ranges on |
//! | [`memory`] | device memory readings, the tracking allocator's host counts, the step |

pub(crate) mod attached;
pub(crate) mod clock;
pub(crate) mod device;
pub(crate) mod kernel;
pub(crate) mod launch;
pub(crate) mod memory;
pub(crate) mod op;
pub(crate) mod phase;
pub(crate) mod switches;
pub(crate) mod thread;
pub(crate) mod warmup;
