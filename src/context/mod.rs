//! The bottom layer of the op path: the core's context (what an op is, what is known about
//! the thread it runs on), and what Burn 0.21 adds to it.
//!
//! | module | holds |
//! |---|---|
//! | [`device`] | Burn's devices as the core's device keys |
//! | [`launch`] | launch threads: where a backend launches its kernels, and running work there |
//! | [`attached`] | the launch threads that ops outside a step queue their ranges on |
//! | [`fallback`] | whether a fused block's fallback op runs, for the block or as an autotune trial |
//!
//! The rest is the core's (`burn_profiled_core::context`); what the probe reads of it (`op`,
//! `switches`, `clock`, `phase`, `memory`,
//! `live_allocations`) is re-exported here, so the op path reads
//! `crate::context::*` in both crates.

pub(crate) use burn_profiled_core::context::{
    clock, live_allocations, memory, op, phase, switches,
};

pub(crate) mod attached;
pub(crate) mod device;
pub(crate) mod fallback;
pub(crate) mod launch;
