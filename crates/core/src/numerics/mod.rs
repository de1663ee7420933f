//! Which op changed the numbers: per-op [`Fingerprint`]s of output tensors, a run's
//! [`OpRecord`]s in `numerics.jsonl` ([`file`](mod@file)), and two runs compared op by op ([`compare()`]):
//! the **culprit** (the first op whose inputs agreed and whose outputs did not) and the ops
//! that only carried the difference on; and [`first_non_finite`], the op that made a NaN.
//!
//! ```
//! # use burn_profiled_core as burn_profiled;
//! use burn_profiled::numerics::{Fingerprint, OpRecord, Tolerance, compare};
//!
//! let record = |seq, value: f32| OpRecord {
//!     seq,
//!     step: 0,
//!     thread: "main".into(),
//!     op: "float_exp".into(),
//!     phase: "forward".into(),
//!     call_site: None,
//!     input_shapes: vec![vec![2]],
//!     producers: None,
//!     outputs: vec![Fingerprint::of(&[value, 1.0], &[2])],
//! };
//! let comparison = compare(&[record(0, 1.0)], &[record(0, 1.01)], Tolerance::default());
//! assert!(!comparison.agrees());
//! ```
//!
//! Burn 0.21's `Profiled<B>` writes `numerics.jsonl` with `[numerics] fingerprints`, and
//! reports the first op that made a NaN or an Inf ([`NonFinite`]) with `check_finite`.

mod align;
mod alignment;
mod compare;
mod dataflow;
pub mod file;
mod fingerprint;
mod json_float;
mod non_finite;
mod record;
mod text;

pub use align::{align, align_with};
pub use alignment::{Alignment, Region};
pub use compare::{
    Agreement, Comparison, Culprit, CulpritInput, InputsAgree, Pair, StatDiff, StatValue,
    Tolerance, compare, compare_outputs, compare_with, first_non_finite,
};
pub use file::{NUMERICS_FILE, NumericsError};
pub use fingerprint::{Element, Fingerprint, WEIGHT_PERIOD, all_finite};
pub use non_finite::{CapturedOp, NonFinite, Rerun};
pub use record::{DUMPED_PREFIX, GRADIENT_PREFIX, LOSS_RECORD, OpRecord};
pub use text::render;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod dataflow_tests;
