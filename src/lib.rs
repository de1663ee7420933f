//! burn-profiled: see where the time goes in a Burn training run.
#![warn(missing_docs)]

mod backend;
mod clock;
mod device_sync;
pub mod dump;
mod files;
pub mod host;
pub mod nvtx;
pub mod probe;
mod python_float;
pub mod stats;
pub mod stopwatch;
pub mod trace;

pub use backend::Profiled;
pub use device_sync::DeviceSync;
