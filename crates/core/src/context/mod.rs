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
//! | [`lineage`] | which forward op each backward and optimizer op works for, from the tensors they share |
//! | [`kernel`] | a kernel's launch configuration and launch call, for device time and the timeline |
//! | [`memory`] | device memory readings, the tracking allocator's host counts, the step |
//! | [`live_allocations`] | the host blocks ops made that are still alive, by the op that made them |
//! | [`autotune`] | how many of autotune's trial runs were left off the op path |
//!
//! An edition adds what is its own (Burn 0.21's: launch threads, where a backend launches its
//! kernels).

pub mod autotune;
pub mod clock;
pub mod device;
pub mod kernel;
pub mod lineage;
pub mod live_allocations;
pub mod memory;
pub mod op;
pub mod phase;
pub mod switches;
pub mod thread;
pub mod warmup;
