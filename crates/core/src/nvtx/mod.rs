//! NVTX for users: ranges, marks, domains, registered handles, capture control and thread
//! names, beside the per-op ranges of the editions. An edition re-exports this module and adds
//! what needs Burn (Burn 0.21's `Ranged` sub-modules and signposts).
//!
//! User ranges are the port of the original `NVTXRangeWrapper`: off until [`enable`]d once per
//! process, then pushed in NVTX's default domain, optionally syncing a device before each
//! push and pop, optionally checking that pops match pushes.
//!
//! ```
//! # use burn_profiled_core as burn_profiled;
//! use burn_profiled::nvtx::{self, RangeConfig};
//!
//! nvtx::enable(RangeConfig::new().keep_track_of_range_order(true));
//! let out = nvtx::scope("forward", || {
//!     let _loss = nvtx::range("loss");
//!     1 + 1
//! });
//! nvtx::range_push("optimizer");
//! nvtx::range_pop(Some("optimizer"));
//! ```

mod capture;
mod domain;
mod ffi;
mod handles;
mod label;
mod ranges;

pub use capture::{CAPTURE_RANGE, is_capturing, start_capture, stop_capture};
pub use domain::{Domain, DomainRange, category};
pub use handles::{Handle, HandleRange, register_string};
pub use label::{Category, Color, Label};
pub use ranges::{
    RangeConfig, RangeGuard, enable, is_enabled, mark, mark_with, range, range_pop, range_push,
    range_push_with, range_with, scope,
};

/// The NVTX domain of the op ranges (`Profiled`'s ops, fused blocks).
pub const OP_DOMAIN: &str = crate::sinks::op_ranges::DOMAIN;

/// Names the calling OS thread in NVTX, so Nsight Systems shows e.g. `data loader` instead of a
/// thread id. Not gated by [`enable`]: naming is free without a tool.
pub fn name_current_thread(name: &str) {
    ffi::name_os_thread(crate::context::thread::os_thread_id(), name);
    crate::context::thread::set_current_name(name);
}
