//! Which forward block each backward and optimizer block works for (`[stats] forward_links`):
//! the core's lineage ([`lineage`]), fed with each block's tensors from the IR. A block reads
//! what its ops read and no earlier op of it wrote, and makes what its ops write; every tensor
//! is known by its id, so no link falls back to order for want of an identity.
//!
//! A block takes the phase its first op was registered in: a backward block is one registered
//! in a `backward` range, an optimizer block one in an `optimizer` range, and the others are
//! forward blocks, linked to.

use std::hash::{Hash, Hasher};

use burn_ir::{OperationIr, TensorId};
use burn_profiled_core::context::lineage::{self, ForwardOp, Link, Pass};
use burn_profiled_core::context::op::Op;
use rustc_hash::{FxHashSet, FxHasher};

/// The link of the block `op` of `operations` registered in `phase`, and its pass; what it
/// makes is known from now on as made for that link.
pub(crate) fn link<'a>(
    op: &'static Op,
    phase: u32,
    operations: impl Iterator<Item = &'a OperationIr>,
) -> (Link, Pass) {
    let pass = lineage::pass_of_phase(phase).unwrap_or(Pass::Forward);
    let mut written: FxHashSet<TensorId> = FxHashSet::default();
    let (mut inputs, mut outputs) = (Vec::new(), Vec::new());
    for operation in operations {
        if matches!(operation, OperationIr::Drop(_)) {
            continue;
        }
        for input in operation.inputs() {
            if !written.contains(&input.id) {
                inputs.push(identity(input.id));
            }
        }
        for output in operation.outputs() {
            written.insert(output.id);
            outputs.push(identity(output.id));
        }
    }
    let link = lineage::link(
        ForwardOp {
            op,
            phase,
            stack: 0,
        },
        pass,
        &inputs,
    );
    lineage::made(link, pass, &outputs);
    (link, pass)
}

/// A tensor's identity for the lineage: its IR id, hashed (the id's value is private).
fn identity(id: TensorId) -> u64 {
    let mut hasher = FxHasher::default();
    id.hash(&mut hasher);
    hasher.finish()
}
