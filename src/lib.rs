//! See where the time goes in a [Burn](https://burn.dev) training run, and check that a faster
//! implementation still computes the same thing, without touching the model.
//!
//! | tool | what it does |
//! |---|---|
//! | [`Profiled<B>`] | a backend that runs `B` and reports every op: NVTX ranges for Nsight Systems, optional per-op device sync, [observers](probe::OpObserver) |
//! | [`Session`], [`config`] | a `RuntimeConfig` (preset, file or `BURN_PROFILED`) applied to a training loop: tools at the start, per-op tools after warm-up, the report, the op table and `ops.json`/`trace.json`/`run.json` at the end |
//! | `train` | the same for a burn-train `Learner` run (feature `train`) |
//! | [`DeviceSync`] | the device(s) a tool syncs before a timestamp |
//! | [`probe`] | the switches: op ranges, per-op sync, observers |
//! | `fused` | burn's fused `Cuda` and `Wgpu` profiled from inside fusion: every fused block an op (feature `fusion`) |
//! | [`LaunchThread`] | where a backend launches its kernels (CubeCL's device thread): steps run there, so each op range contains its kernels |
//! | [`nvtx`] | user ranges (with sync and order checks), marks, domains, registered handles, capture control, [`nvtx::Ranged`] sub-modules, thread names |
//! | [`stopwatch`] | runtime per code section with warm-up, one-time measurements and CPU usage, in the original tool's report layout |
//! | [`stats`] | per-op statistics, by op, phase, input shapes or call site, as a `torch.profiler`-like table or JSON |
//! | [`call_sites`] | where in your code each op was called from (`[stats] call_sites`), for the op table by call site and the flame graph |
//! | [`device_time`] | each op's kernels and their device time through CUPTI (feature `cupti`), in the op table |
//! | [`trace`] | a Chrome trace-event timeline (Perfetto, `chrome://tracing`) of ops, ranges and measurements, in Kineto's conventions (PyTorch's trace tools, HTA, read it) |
//! | [`host`] | CPU usage, resident memory and a memory guard |
//! | [`runs`] | a run read back from disk, and two runs compared with a noise-aware verdict (the `burn-profiled diff` command) |
//! | [`memory`] | where the memory goes: per step, per op and per phase, the leak warning, out-of-memory context, the [tracking allocator](memory::TrackingAllocator) |
//! | [`dump`] | tensor dumps compatible with the Python `TensorDumper`, and their comparison (offline: the `burn-dump-diff` binary) |
//! | [`numerics`] | which op changed the numbers: every op's outputs fingerprinted (`[numerics]`, into `numerics.jsonl`), two runs compared op by op to name the culprit (the `burn-profiled numerics` command), the first op that made a NaN ([`RunStopped`]) |
//!
//! ```
//! use burn::backend::{Autodiff, NdArray};
//! use burn::tensor::Tensor;
//! use burn_profiled::{Profiled, probe, stats};
//!
//! type B = Autodiff<Profiled<NdArray>>; // was: Autodiff<NdArray>
//! probe::set_op_ranges(true);           // one NVTX range per op, domain `burn` (under an NVTX tool)
//! stats::start(stats::StatsConfig::default());
//!
//! let x = Tensor::<B, 2>::ones([2, 3], &Default::default()).require_grad();
//! let grads = x.clone().exp().sum().backward();
//! let _dx = x.grad(&grads);
//!
//! stats::stop();
//! println!("{}", stats::snapshot().table(stats::GroupBy::Op));
//! ```
//!
//! Everything is process-wide and off until switched on: with everything off, an op of
//! `Profiled<B>` costs one relaxed atomic load and a branch more than `B`'s. Op ranges count as
//! off in a process without an NVTX tool (Nsight Systems, the NVTX recorder) to take them.
#![warn(missing_docs)]

// The op path, in layers; every import points down (tests/module_layers.rs checks it):
// context <- sinks <- probe <- backend and the user-facing tools.
mod context;
pub mod probe;
use burn_profiled_core::sinks;

mod backend;
mod calibration;
mod device_prints;
mod device_sync;
pub mod dump;
#[cfg(feature = "fusion")]
mod fingerprint_kernel;
#[cfg(feature = "fusion")]
pub mod fused;
mod launch_thread;
mod numerics_batch;
mod numerics_path;
pub mod nvtx;
mod op_numerics;
mod rerun;
mod session;
mod tensor_data;
mod tensor_identity;
#[cfg(feature = "train")]
pub mod train;

/// ```no_run
/// use burn_profiled::{device_time, probe, stats};
///
/// stats::start(stats::StatsConfig::default());
/// if let Err(why) = device_time::start() {
///     eprintln!("{why}; host times only"); // no CUPTI, or another CUPTI client owns it
/// }
/// // ... the steps to look at, each op run where its kernels are launched
/// //     (`LaunchThread::run`), then a device sync
/// let summary = device_time::stop();
/// probe::flush_device_time();
/// println!("{}", stats::snapshot().table(stats::GroupBy::Op)); // + Kernels, Device Total, ...
/// println!("{} kernels launched under no op", summary.unattributed_kernels);
/// ```
pub use burn_profiled_core::device_time;
/// ```
/// use burn::backend::NdArray;
/// use burn::tensor::Tensor;
/// use burn_profiled::{Profiled, stats};
///
/// stats::start(stats::StatsConfig::default());
/// let x = Tensor::<Profiled<NdArray>, 2>::ones([4, 4], &Default::default());
/// let _y = x.clone().matmul(x).exp();
/// stats::stop();
/// let table = stats::snapshot().table(stats::GroupBy::Op);
/// assert!(table.contains("float_matmul"));
/// ```
pub use burn_profiled_core::stats;
pub use burn_profiled_core::trace;

// What no Burn version changes lives in the core, shared with the other editions.
#[doc(hidden)]
pub use burn_profiled_core::cli_output;
pub use burn_profiled_core::{call_sites, config, host, memory, numerics, runs, stopwatch};

#[cfg(test)]
mod device_time_tests;

pub use backend::Profiled;
pub use context::launch::{LaunchThread, QueuedTask};
pub use device_sync::DeviceSync;
pub use launch_thread::AttachedLaunchThread;
#[cfg(any(feature = "cuda", feature = "wgpu"))]
pub use launch_thread::{CubeclBackend, DeviceThread};
pub use session::{
    BURN_VERSION, DeviceTimeRun, RUN_FORMAT_VERSION, RunStopped, RunSummary, Session,
};
