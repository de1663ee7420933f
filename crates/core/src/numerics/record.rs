//! [`OpRecord`]: one op call of a run, with the fingerprints of its outputs.

use serde::{Deserialize, Serialize};

use super::Fingerprint;

/// The name of a record of the step's loss, as the program handed it over (the sessions'
/// `record_loss`): a value, not an op ([`OpRecord::is_value`]).
pub const LOSS_RECORD: &str = "loss";

pub use crate::dump::value_sink::{DUMPED_PREFIX, GRADIENT_PREFIX};

/// One op call: where it ran and what it produced. A run's records, in the order the ops were
/// called, are its `numerics.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpRecord {
    /// The call's number in the run, increasing from record to record: what
    /// [`producers`](Self::producers) refer to.
    pub seq: u64,
    /// The training step (warm-up steps included, from 0).
    pub step: u64,
    /// The thread the op ran on, as the session names it.
    pub thread: String,
    /// The op, as the op tables name it (`float_exp`, `conv2d`, a fused block's name).
    pub op: String,
    /// The innermost user range around it (`-` outside any).
    pub phase: String,
    /// Where in the user's code the op was called from, when call sites are on.
    pub call_site: Option<String>,
    /// The shapes of the op's tensor inputs, in argument order.
    pub input_shapes: Vec<Vec<usize>>,
    /// For each tensor input, the `seq` of the op call that produced it, or `None` for an
    /// input no recorded op produced (a parameter, the data). `None` as a whole when the
    /// writer does not link inputs to producers: the comparison then takes every earlier op of
    /// the step as a possible producer.
    pub producers: Option<Vec<Option<u64>>>,
    /// The fingerprints of the op's output tensors, in order; none when they were not
    /// observed (an op inside a fused block, whose outputs stay in its registers: the
    /// comparison aligns it, and compares nothing).
    pub outputs: Vec<Fingerprint>,
}

impl OpRecord {
    /// Whether every output is finite.
    pub fn is_finite(&self) -> bool {
        self.outputs.iter().all(Fingerprint::is_finite)
    }

    /// Whether the record is of a value the program handed over (the loss, a tensor or a
    /// gradient the dumper read), not of an op's outputs: it has no inputs, and the op that
    /// made it may not be recorded (Burn 0.22 records only values).
    pub fn is_value(&self) -> bool {
        self.op == LOSS_RECORD
            || self.op.starts_with(DUMPED_PREFIX)
            || self.op.starts_with(GRADIENT_PREFIX)
    }

    /// The elements of all outputs.
    pub fn elements(&self) -> u64 {
        self.outputs.iter().map(|output| output.elements).sum()
    }
}
