//! The core of [burn-profiled](https://crates.io/crates/burn-profiled): what does not depend on
//! a Burn version, shared by its editions.
//!
//! Use it through an edition, which re-exports these modules in its own namespace: for Burn
//! 0.21, `burn-profiled` (`burn_profiled::config`, `burn_profiled::runs`, ...). This crate
//! depends on no burn crate, at any version.
//!
//! It also holds the command-line tools (feature `cli`, on by default), which read what either
//! edition writes and build without any Burn: `burn-profiled report RUN_DIR`, `burn-profiled
//! diff BEFORE AFTER`, and `burn-dump-diff REFERENCE CURRENT` (`cargo install
//! burn-profiled-core`, or `cargo run -p burn-profiled-core --bin burn-profiled -- ...` in this
//! workspace).
//!
//! | module | what it does |
//! |---|---|
//! | [`config`] | a `RuntimeConfig` from a preset, a file or `BURN_PROFILED` |
//! | [`stats`] | per-op statistics, by op, phase or input shapes, as a `torch.profiler`-like table or JSON |
//! | [`device_time`] | each op's kernels and their device time, in the op table |
//! | [`trace`] | a Chrome trace-event timeline of ops, ranges and measurements, in Kineto's conventions |
//! | [`nvtx`] | user ranges (with sync and order checks), marks, domains, registered handles, capture control, thread names |
//! | [`stopwatch`] | runtime per code section with warm-up, one-time measurements and CPU usage, in the original tool's report layout |
//! | [`memory`] | where the memory goes: per step, per op and per phase, the growth warning, out-of-memory context |
//! | [`host`] | CPU usage, resident memory and a memory guard |
//! | [`DeviceSync`] | the device a tool syncs before a timestamp |
//! | [`recorder`] | what every edition's session writes: `run.json` ([`RunSummary`](recorder::RunSummary)), the op tables, `trace.json`, the report |
//! | [`call_sites`] | where in the user's code each op was called from, and the phase Burn's frames give it |
//! | [`work`] | the FLOPs and bytes of an op from its shapes and dtypes, for a roofline per op |
//! | [`roofline`] | an op placed on its device's roofline: the bound at its intensity, its share of it, the limit that binds |
//! | [`numerics`] | per-op fingerprints of output tensors (`numerics.jsonl`), two runs compared op by op: the culprit op and the NaN producer |
//! | [`runs`] | a run directory read back, its HTML report, and two runs compared (`burn-profiled diff`) |
//!
//! The op path's layers, for the editions: [`context`] at the bottom (what an op is, what is
//! known about the thread it runs on), the [`sinks`] above it (where an op event goes), the
//! [`probe`] on top (the events every edition reports alike). An edition's own probe turns
//! Burn's ops into op events for the sinks.
#![warn(missing_docs)]

// The op path, in layers; every import points down: context <- sinks <- probe <- the tools.
#[doc(hidden)]
pub mod context;
pub mod probe;
#[doc(hidden)]
pub mod sinks;

pub mod call_sites;
pub mod config;
mod device_sync;
pub mod dump;
mod edition;
pub mod formats;
pub mod host;
pub mod memory;
pub mod numerics;
pub mod nvtx;
pub mod recorder;
pub mod roofline;
pub mod runs;
pub mod shape;
pub mod stopwatch;
#[doc(hidden)]
pub mod train_metrics;
#[doc(hidden)]
pub mod train_progress;
pub mod train_steps;
pub mod work;

pub use device_sync::DeviceSync;
pub use sinks::{device_time, stats, trace};

#[doc(hidden)]
pub mod cli_output;
#[doc(hidden)]
pub mod files;
#[doc(hidden)]
pub mod op_names;
#[doc(hidden)]
pub mod python;
#[doc(hidden)]
pub mod units;
