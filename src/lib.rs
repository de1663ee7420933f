//! burn-profiled: see where the time goes in a Burn training run.
#![warn(missing_docs)]

mod backend;
mod device_sync;
pub mod nvtx;
pub mod probe;

pub use backend::Profiled;
pub use device_sync::DeviceSync;
