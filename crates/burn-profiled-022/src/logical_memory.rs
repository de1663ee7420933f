//! Memory per block from the IR (`[memory] per_op`): the logical bytes of the tensors its ops
//! make and free, exact from shapes and dtypes, with no device query. A tensor is allocated at
//! the op that outputs it, and freed at its `Drop` op or at its last use, where an op reads it
//! as `ReadWrite` (burn-fusion frees it there without a `Drop`).
//!
//! What this does not see: tensors made before the session started (their frees are ignored),
//! tensors dropped on another thread than their stream's (burn-fusion's foreign drops, which
//! its observer never reports: they stay live here), the memory pools' padding and reserve,
//! and intermediates a fused kernel keeps in registers (here, every op's output counts).

use std::collections::HashMap;

use burn_ir::{OperationIr, TensorId, TensorIr, TensorStatus};
use burn_profiled_core::context::memory as context_memory;
use burn_profiled_core::memory::LiveBlock;
use burn_profiled_core::sinks::stats::OpMemory;

/// A live tensor: its bytes, and the maker (`stats::maker`) and step of the block that made
/// it, when blocks were named (statistics or a timeline on).
#[derive(Clone, Copy)]
struct Made {
    bytes: u64,
    by: Option<(u32, u32)>,
}

/// The tensors alive on one device, by id, with their bytes and the block that made them.
#[derive(Default)]
pub(crate) struct LiveTensors {
    bytes: HashMap<TensorId, Made>,
    live: u64,
    /// Tensors whose bytes the IR does not give (sub-byte quantized types): counted as 0.
    sizeless: u64,
}

fn bytes_of(tensor: &TensorIr) -> Option<u64> {
    let element = tensor.dtype.size() as u64;
    (element > 0).then(|| tensor.shape.num_elements() as u64 * element)
}

impl LiveTensors {
    /// Applies a block's ops in order: what they allocated, what they freed, and the live
    /// bytes after them. Its outputs are `made_by` its maker (`stats::maker`), when it has one,
    /// in the step its ops were registered in (else this one).
    pub(crate) fn apply<'a>(
        &mut self,
        ops: impl Iterator<Item = &'a OperationIr>,
        made_by: Option<(u32, Option<u32>)>,
    ) -> OpMemory {
        let by = made_by.map(|(maker, registered_in)| {
            (
                maker,
                registered_in.unwrap_or(context_memory::step() as u32),
            )
        });
        let mut call = OpMemory {
            alloc_bytes: 0,
            freed_bytes: 0,
            in_use_bytes: 0,
        };
        for op in ops {
            if let OperationIr::Drop(tensor) = op {
                call.freed_bytes += self.free(tensor.id);
                continue;
            }
            for output in op.outputs() {
                let bytes = bytes_of(output).unwrap_or_else(|| {
                    self.sizeless += 1;
                    0
                });
                if let Some(before) = self.bytes.insert(output.id, Made { bytes, by }) {
                    self.live -= before.bytes;
                }
                self.live += bytes;
                call.alloc_bytes += bytes;
            }
            for input in op.inputs() {
                if input.status == TensorStatus::ReadWrite {
                    call.freed_bytes += self.free(input.id);
                }
            }
        }
        call.in_use_bytes = self.live;
        call
    }

    fn free(&mut self, id: TensorId) -> u64 {
        match self.bytes.remove(&id) {
            Some(tensor) => {
                self.live -= tensor.bytes;
                tensor.bytes
            }
            None => 0,
        }
    }

    /// The tensors alive now that a named block made, with its maker and step.
    pub(crate) fn live_blocks(&self) -> Vec<LiveBlock> {
        (self.bytes.values())
            .filter_map(|made| {
                let (maker, step) = made.by?;
                Some(LiveBlock {
                    maker,
                    step,
                    bytes: made.bytes,
                })
            })
            .collect()
    }

    /// The bytes of the tensors alive now.
    pub(crate) fn live_bytes(&self) -> u64 {
        self.live
    }

    /// How many tensors had a dtype without a byte size (counted as 0 bytes).
    pub(crate) fn unsized_tensors(&self) -> u64 {
        self.sizeless
    }
}
