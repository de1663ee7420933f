//! What a fused block is made of: the ops a fuser took, and the block's reads and first and
//! last writes in the fuser's relative ids.

use burn_fusion::stream::Context;
use burn_ir::TensorId;
use burn_profiled_core::shape::Shape;
use serde::{Deserialize, Serialize};

/// At most this many input shapes key a block's statistics by shapes.
const SHAPES: usize = 4;

/// One op the fuser took.
#[derive(Clone, Debug)]
pub(super) struct Fused {
    pub(super) name: String,
    /// Relative ids, as the fuser saw them.
    pub(super) inputs: Vec<TensorId>,
    pub(super) outputs: Vec<TensorId>,
}

/// What a block fused, in the fuser's relative ids (the same in every run of its plan).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct BlockIo {
    pub(super) ops: Vec<String>,
    /// The tensors the block reads that none of its ops wrote, for its shapes.
    reads: Vec<TensorId>,
    /// The first tensor the block writes: when it was registered.
    pub(super) first_write: Option<TensorId>,
    /// The last tensor the block writes: when its last op was registered (none in the states
    /// of older versions).
    #[serde(default)]
    pub(super) last_write: Option<TensorId>,
}

impl BlockIo {
    pub(super) fn of(fused: &[Fused]) -> Self {
        let mut reads: Vec<TensorId> = Vec::new();
        for (at, op) in fused.iter().enumerate() {
            for input in &op.inputs {
                let written_before = fused[..at].iter().any(|op| op.outputs.contains(input));
                if !written_before && !reads.contains(input) && reads.len() < SHAPES {
                    reads.push(*input);
                }
            }
        }
        BlockIo {
            ops: fused.iter().map(|op| op.name.clone()).collect(),
            reads,
            first_write: fused.iter().find_map(|op| op.outputs.first().copied()),
            last_write: fused.iter().rev().find_map(|op| op.outputs.last().copied()),
        }
    }

    pub(super) fn shapes<H>(&self, context: &Context<H>) -> Vec<Shape> {
        self.reads
            .iter()
            .filter_map(|id| context.tensors.get(id))
            .map(|tensor| Shape::from(tensor.shape.as_slice()))
            .collect()
    }
}
