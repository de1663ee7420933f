//! NVTX for users: ranges, marks, domains, registered handles, capture control, stage markers
//! and thread names, beside the per-op ranges of [`Profiled`](crate::Profiled).
//!
//! User ranges are the port of the original `NVTXRangeWrapper`: off until [`enable`]d once per
//! process, then pushed in NVTX's default domain, optionally syncing a Burn device before each
//! push and pop, optionally checking that pops match pushes.
//!
//! ```
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
//!
//! | what | port of | enabled by |
//! |---|---|---|
//! | [`range_push`], [`range_pop`], [`range`], [`scope`], [`mark`], [`Domain`] | `NVTXRangeWrapper` | [`enable`] |
//! | [`register_string`], [`Handle`] | `numba_nvtx` | an attached NVTX tool |
//! | [`start_capture`], [`stop_capture`] | new | always |
//! | [`Ranged`], [`signpost`] | new | [`enable`] |
//! | op ranges of `Profiled` | new | [`probe::set_op_ranges`](crate::probe::set_op_ranges) |

mod capture;
mod domain;
mod ffi;
mod handles;
mod label;
mod ranges;
mod stage;

pub use capture::{CAPTURE_RANGE, is_capturing, start_capture, stop_capture};
pub use domain::{Domain, DomainRange, category};
pub use handles::{Handle, HandleRange, register_string};
pub use label::{Category, Color, Label};
pub use ranges::{
    RangeConfig, RangeGuard, enable, is_enabled, mark, mark_with, range, range_pop, range_push,
    range_push_with, range_with, scope,
};
pub use stage::{Forward, Ranged, Signpost, signpost};

/// The NVTX domain of `Profiled`'s op ranges.
pub const OP_DOMAIN: &str = crate::sinks::op_ranges::DOMAIN;

/// Names the calling OS thread in NVTX, so Nsight Systems shows e.g. `data loader` instead of a
/// thread id. Not gated by [`enable`]: naming is free without a tool.
pub fn name_current_thread(name: &str) {
    ffi::name_os_thread(crate::context::thread::os_thread_id(), name);
    crate::context::thread::set_current_name(name);
}
