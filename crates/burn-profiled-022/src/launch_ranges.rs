//! Block ranges where the kernels are launched.
//!
//! burn-fusion runs a block on its fusion thread, but each kernel it launches is submitted to
//! the compute server's runner (cubecl's downstream stage: the thread that makes the CUDA or
//! wgpu calls), where it runs later. An NVTX range pushed on the fusion thread would not
//! contain them under Nsight Systems. So the fusion thread submits the range's push to that
//! runner as the block starts, and its pop as the block ends: the runner takes every service's
//! tasks of one device from one FIFO, so the range opens before the block's first launch and
//! closes after its last, on the thread that makes them.

use burn_profiled_core::context::op::Op;
use burn_profiled_core::sinks::op_ranges;

use crate::runners::ComputeRunner;

/// Opens `op`'s range on the runner, before the launches submitted after it, with `payload`
/// when not 0 (the forward call the block is or works for).
pub(crate) fn push(runner: &ComputeRunner, op: &'static Op, payload: u64) {
    runner.submit(move |_| push_here(op, payload));
}

/// Opens `op`'s range on this thread, with `payload` when not 0.
pub(crate) fn push_here(op: &'static Op, payload: u64) {
    match payload {
        0 => op_ranges::push_op(op),
        payload => op_ranges::push_op_with_payload(op, payload),
    }
}

/// Closes the range [`push`] opened, after the launches submitted before it.
pub(crate) fn pop(runner: &ComputeRunner) {
    runner.submit(|_| op_ranges::pop_op());
}
