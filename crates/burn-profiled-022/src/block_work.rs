//! A block's work from its ops' IR: each op's FLOPs and the bytes the block moves, as the
//! core's [`work::of_block`] counts them.

use burn_ir::{ModuleOperationIr, OperationIr, TensorIr};
use burn_profiled_core::op_names;
use burn_profiled_core::shape::Shape;
use burn_profiled_core::work::{self, BlockOp, TensorArg, Work};

/// The work of the block of `ops` (its `Drop`s left out); unknown where an op has no formula
/// or a tensor no byte size (sub-byte quantized).
pub(crate) fn of<'a>(ops: impl Iterator<Item = &'a OperationIr>) -> Work {
    let ops: Vec<(String, &OperationIr)> = ops
        .filter(|op| !matches!(op, OperationIr::Drop(_)))
        .map(|op| (op_names::op_name(op), op))
        .collect();
    let mut block = Vec::with_capacity(ops.len());
    for (name, op) in &ops {
        let (Some(inputs), Some(outputs)) = (tensors(op.inputs()), tensors(op.outputs())) else {
            return Work::default();
        };
        block.push(BlockOp {
            name,
            inputs,
            outputs,
            window: window(op),
        });
    }
    work::of_block(&block)
}

fn tensors<'a>(tensors: impl Iterator<Item = &'a TensorIr>) -> Option<Vec<(u64, TensorArg)>> {
    tensors
        .map(|tensor| {
            Some((
                tensor.id.value(),
                TensorArg {
                    shape: Shape::from(tensor.shape.as_slice()),
                    elem_bytes: u32::try_from(tensor.dtype.size()).ok()?,
                },
            ))
        })
        .collect()
}

/// A pooling op's kernel size.
fn window(op: &OperationIr) -> Option<Vec<usize>> {
    let OperationIr::Module(op) = op else {
        return None;
    };
    Some(match op {
        ModuleOperationIr::AvgPool1d(op) => vec![op.kernel_size],
        ModuleOperationIr::AvgPool1dBackward(op) => vec![op.kernel_size],
        ModuleOperationIr::MaxPool1d(op) => vec![op.kernel_size],
        ModuleOperationIr::MaxPool1dWithIndices(op) => vec![op.kernel_size],
        ModuleOperationIr::AvgPool2d(op) => op.kernel_size.to_vec(),
        ModuleOperationIr::AvgPool2dBackward(op) => op.kernel_size.to_vec(),
        ModuleOperationIr::MaxPool2d(op) => op.kernel_size.to_vec(),
        ModuleOperationIr::MaxPool2dWithIndices(op) => op.kernel_size.to_vec(),
        _ => return None,
    })
}
