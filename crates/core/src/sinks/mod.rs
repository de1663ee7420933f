//! The middle layer of the op path: where an op event goes. Each sink is a leaf: it reads the
//! [context](crate::context) below it, sets its own switch, and never calls the probe above it
//! or another sink.
//!
//! | sink | records | switched by |
//! |---|---|---|
//! | [`op_ranges`] | one NVTX range per op, domain `burn` | `probe::set_op_ranges` |
//! | [`stats`] | per-op statistics, by op, phase or shapes | [`stats::start`] |
//! | [`trace`] | the timeline: ops, user ranges, measurements | [`trace::start`] |
//! | [`observers`] | the user's [`OpObserver`](observers::OpObserver)s | [`observers::observe`] |
//! | [`device_time`] | each op's kernels and their device time (CUPTI) | [`device_time::start`] |
//! | [`numerics`] | each op's output fingerprints, the first NaN or Inf | [`numerics::start`] |
//! | [`graph`] | one step's ops and tensors, `graph.json` | [`graph::start`] |

pub mod device_time;
pub mod graph;
pub mod numerics;
#[doc(hidden)]
pub mod observers;
#[doc(hidden)]
pub mod op_ranges;
pub mod stats;
pub mod trace;

/// The sinks' state is process-wide: the in-crate tests that record into it run one at a time.
#[cfg(test)]
#[doc(hidden)]
pub static TEST_SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
