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

pub use burn_profiled_core::nvtx::*;

mod stage;

pub use stage::{Forward, Ranged, Signpost, signpost};
