//! [burn-profiled](https://crates.io/crates/burn-profiled) for Burn 0.22: where the time goes in
//! a training run whose model has no backend type.
//!
//! Burn 0.22 took the backend type out of user code, so no backend decorator can sit under the
//! model. This edition starts a [`Session`] on the user's [`Device`](burn::tensor::Device) and
//! installs burn-fusion's observer: every block the fusion server runs (a fused kernel's ops, or
//! one op run unfused) is an op of the op table, a span of the timeline and an NVTX range, named
//! as Burn 0.21's edition names fused blocks (`fused elementwise[add, mul, exp]`).
//!
//! ```no_run
//! use burn::tensor::{Device, DeviceKind};
//! use burn_profiled_022::Session;
//! use burn_profiled_022::config::{Preset, RuntimeConfig};
//!
//! let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
//! let config = RuntimeConfig::from_env_or(Preset::Profile).expect("a valid BURN_PROFILED");
//! let mut session = Session::start(config, &device, "target/run");
//! for _step in 0..100 {
//!     // ... forward, backward, optimizer: model, device and loop unchanged
//!     session.finish_iter().expect("within the memory limits");
//! }
//! session.finish().expect("artefacts written");
//! ```
//!
//! What this first version records, and what it does not yet (the guide's
//! `docs/guide/burn-0.22.md`): each block's time on the fusion thread (the time it took to
//! issue its kernels, not their device time), its input shapes, its phase (the user range its
//! first op was registered in, carried to the fusion thread in order), its NVTX range,
//! opened and closed on the thread that launches its kernels, around them, and with
//! `[stats] device_time` its kernels' device time, through CubeCL's launch observer.
//! The stopwatch, user ranges, memory per step and the run directory are as in the Burn 0.21
//! edition.
#![warn(missing_docs)]

#[doc(hidden)]
pub mod bench;
mod block_links;
mod block_work;
mod blocks;
mod calibration;
mod device_time;
pub mod dump;
mod launch_ranges;
mod logical_memory;
mod phases;
mod runners;
mod session;
#[cfg(feature = "train")]
pub mod train;

pub use burn_profiled_core::recorder::{RunStopped, RunSummary};
pub use burn_profiled_core::{
    DeviceSync, config, host, memory, numerics, nvtx, runs, stats, stopwatch, trace,
};
pub use session::{BURN_VERSION, Session};
