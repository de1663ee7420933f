//! Which forward block each backward and optimizer block works for (`[stats] forward_links`):
//! the core's lineage ([`lineage`]), fed with each block's tensors from the IR. A block reads
//! what its ops read and no earlier op of it wrote, and makes what its ops write; every tensor
//! is known by its id, so no link falls back to order for want of an identity.
//!
//! A block takes the phase its first op was registered in: a backward block is one registered
//! in a `backward` range, an optimizer block one in an `optimizer` range, and the others are
//! forward blocks, linked to.

use std::hash::{Hash, Hasher};

use burn_ir::{OperationIr, TensorId, TensorIr, TensorStatus};
use burn_profiled_core::sinks::graph;

use crate::phases::{self, BlockPhase};
use burn_profiled_core::context::lineage::{self, ForwardOp, Link, Pass};
use burn_profiled_core::context::op::Op;
use rustc_hash::{FxHashSet, FxHasher};

/// The link of the block `op` of `operations` registered as `registered` says, and its pass; what it makes is known from now on as made for that link. In the step the graph
/// records, the block goes into it ([`graph`]).
pub(crate) fn link<'a>(
    op: &'static Op,
    registered: BlockPhase,
    operations: impl Iterator<Item = &'a OperationIr>,
) -> (Link, Pass) {
    let BlockPhase { phase, path, step } = registered;
    let operations: Vec<&OperationIr> = operations.collect();
    let pass = lineage::pass_of_phase(phase).unwrap_or(Pass::Forward);
    let mut written: FxHashSet<TensorId> = FxHashSet::default();
    let (mut inputs, mut outputs) = (Vec::new(), Vec::new());
    for operation in operations.iter().copied() {
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
            path,
            stack: 0,
        },
        pass,
        &inputs,
    );
    lineage::made(link, pass, &outputs);
    // A block that makes nothing (drops) is of the step registering now.
    let step = step.unwrap_or_else(phases::registration_step) as usize;
    if graph::chosen_step() == Some(step) {
        to_graph(op, (phase, step), (link, pass), operations.into_iter());
    }
    (link, pass)
}

/// The block into the graph of its step: what it reads and makes, and the tensors that end in
/// it (dropped, or read for the last time).
fn to_graph<'a>(
    op: &'static Op,
    (phase, step): (u32, usize),
    link: (Link, Pass),
    operations: impl Iterator<Item = &'a OperationIr>,
) {
    let mut written: FxHashSet<TensorId> = FxHashSet::default();
    let (mut inputs, mut outputs, mut ended) = (Vec::new(), Vec::new(), Vec::new());
    let mut seen_inputs: FxHashSet<TensorId> = FxHashSet::default();
    for operation in operations {
        if let OperationIr::Drop(tensor) = operation {
            ended.push(identity(tensor.id));
            continue;
        }
        for input in operation.inputs() {
            if input.status == TensorStatus::ReadWrite {
                ended.push(identity(input.id));
            }
            if !written.contains(&input.id) && seen_inputs.insert(input.id) {
                inputs.push(tensor_seen(input));
            }
        }
        for output in operation.outputs() {
            if written.insert(output.id) {
                outputs.push(tensor_seen(output));
            }
        }
    }
    if inputs.is_empty() && outputs.is_empty() {
        graph::ended(step, &ended);
        return;
    }
    let _ = graph::op(graph::OpSeen {
        op,
        phase,
        stack: 0,
        link,
        inputs: &inputs,
        outputs: &outputs,
        ended: &ended,
        unknown_tensors: false,
        step: Some(step),
    });
}

fn tensor_seen(tensor: &TensorIr) -> graph::TensorSeen {
    graph::TensorSeen {
        id: identity(tensor.id),
        shape: tensor.shape.to_vec(),
        dtype: format!("{:?}", tensor.dtype).to_lowercase(),
        bytes: (tensor.shape.num_elements() * tensor.dtype.size()) as u64,
    }
}

/// A tensor's identity for the lineage: its IR id, hashed (the id's value is private).
fn identity(id: TensorId) -> u64 {
    let mut hasher = FxHasher::default();
    id.hash(&mut hasher);
    hasher.finish()
}
