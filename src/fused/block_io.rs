//! What a fused block is made of: the ops a fuser took, and the block's reads and first and
//! last writes in the fuser's relative ids; its work from the tensors these ids stand for in a
//! run.

use burn_fusion::stream::Context;
use burn_ir::TensorId;
use burn_profiled_core::shape::Shape;
use burn_profiled_core::work::{self, BlockOp, TensorArg, Work};
use serde::{Deserialize, Serialize};

/// At most this many input shapes key a block's statistics by shapes.
const SHAPES: usize = 4;

/// One op the fuser took.
#[derive(Clone, Debug)]
pub(super) struct Fused {
    pub(super) name: String,
    /// The backend op it stands for, as the op table names it (`float_add`).
    pub(super) table_name: String,
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
    /// Each op's inputs and outputs, for the block's work (none in the states of older
    /// versions: their work is unknown).
    #[serde(default)]
    tensors: Vec<OpTensors>,
}

/// One fused op's tensors, in relative ids.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct OpTensors {
    /// The backend op, as the op table names it (empty in the states of older versions).
    #[serde(default)]
    pub(super) table_name: String,
    pub(super) inputs: Vec<TensorId>,
    pub(super) outputs: Vec<TensorId>,
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
            tensors: fused
                .iter()
                .map(|op| OpTensors {
                    table_name: op.table_name.clone(),
                    inputs: op.inputs.clone(),
                    outputs: op.outputs.clone(),
                })
                .collect(),
        }
    }

    /// The block's work in the run whose tensors `context` holds: the sum of its ops' FLOPs and
    /// the bytes it moves ([`work::of_block`]); unknown where a tensor is not in the context or
    /// has no byte size. CubeCL's fusers take no pooling op, so no op has a window.
    pub(super) fn work<H>(&self, context: &Context<H>) -> Work {
        if self.tensors.len() != self.ops.len() {
            return Work::default();
        }
        let args = |ids: &[TensorId]| -> Option<Vec<(u64, TensorArg)>> {
            ids.iter()
                .map(|id| {
                    let tensor = context.tensors.get(id)?;
                    Some((
                        id.value(),
                        TensorArg {
                            shape: Shape::from(tensor.shape.as_slice()),
                            elem_bytes: u32::try_from(tensor.dtype.size()).ok()?,
                        },
                    ))
                })
                .collect()
        };
        let mut block = Vec::with_capacity(self.ops.len());
        for (name, op) in self.ops.iter().zip(&self.tensors) {
            let (Some(inputs), Some(outputs)) = (args(&op.inputs), args(&op.outputs)) else {
                return Work::default();
            };
            block.push(BlockOp {
                name,
                inputs,
                outputs,
                window: None,
            });
        }
        work::of_block(&block)
    }

    /// Every tensor the block reads that none of its ops wrote before, and every tensor it
    /// writes, in relative ids; `None` for the states of older versions (no op's tensors).
    pub(super) fn reads_and_writes(&self) -> Option<(Vec<TensorId>, Vec<TensorId>)> {
        if self.tensors.len() != self.ops.len() {
            return None;
        }
        let (mut reads, mut writes): (Vec<TensorId>, Vec<TensorId>) = (Vec::new(), Vec::new());
        for op in &self.tensors {
            for input in &op.inputs {
                if !writes.contains(input) && !reads.contains(input) {
                    reads.push(*input);
                }
            }
            for output in &op.outputs {
                if !writes.contains(output) {
                    writes.push(*output);
                }
            }
        }
        Some((reads, writes))
    }

    /// Each fused op's tensors, in the order the block runs them.
    pub(super) fn op_tensors(&self) -> &[OpTensors] {
        &self.tensors
    }

    pub(super) fn shapes<H>(&self, context: &Context<H>) -> Vec<Shape> {
        self.reads
            .iter()
            .filter_map(|id| context.tensors.get(id))
            .map(|tensor| Shape::from(tensor.shape.as_slice()))
            .collect()
    }
}
