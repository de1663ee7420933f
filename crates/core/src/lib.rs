//! The core of [burn-profiled](https://crates.io/crates/burn-profiled): what does not depend on
//! a Burn version, shared by its editions.
//!
//! Use it through an edition, which re-exports these modules in its own namespace: for Burn
//! 0.21, `burn-profiled` (`burn_profiled::config`, `burn_profiled::runs`, ...). This crate
//! depends on no burn crate, at any version.
//!
//! | module | what it does |
//! |---|---|
//! | [`config`] | a `RuntimeConfig` from a preset, a file or `BURN_PROFILED` |
//! | [`stats`] | per-op statistics, by op, phase or input shapes, as a `torch.profiler`-like table or JSON |
//! | [`device_time`] | each op's kernels and their device time, in the op table |
//! | [`trace`] | a Chrome trace-event timeline of ops, ranges and measurements, in Kineto's conventions |
//! | [`host`] | CPU usage, resident memory and a memory guard |
//! | [`runs`] | a run directory read back, its HTML report, and two runs compared (`burn-profiled diff`) |
//!
//! The op path's layers, for the editions: [`context`] at the bottom (what an op is, what is
//! known about the thread it runs on), the [`sinks`] above it (where an op event goes). An
//! edition's probe turns Burn's ops into events for the sinks.
#![warn(missing_docs)]

// The op path, in layers; every import points down: context <- sinks.
#[doc(hidden)]
pub mod context;
#[doc(hidden)]
pub mod sinks;

pub mod config;
pub mod formats;
pub mod host;
pub mod runs;
pub mod shape;

pub use sinks::{device_time, stats, trace};

#[doc(hidden)]
pub mod cli_output;
#[doc(hidden)]
pub mod files;
#[doc(hidden)]
pub mod python;
#[doc(hidden)]
pub mod units;
