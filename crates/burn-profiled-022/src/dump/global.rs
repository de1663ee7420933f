//! The process-wide dumper (the original's singleton), which `[dump] enabled` turns on: the
//! core's, shared with Burn 0.21's edition, with Burn 0.22's gradients beside. Everywhere but
//! where it is enabled, the functions here do nothing until then.

use burn::tensor::{Gradients, Tensor};
use burn_profiled_core::dump::global::with;
pub use burn_profiled_core::dump::global::{
    add_grad_data, add_grad_data_with, add_tensor_data, add_tensor_data_with,
    compare_to_dumped_data, dump, dump_count, enable, is_enabled, perform_after_dump_count,
    pop_range, push_range, push_range_with, register_custom_converter, reset_dump_count,
    run_if_enabled, set_dump_count, set_dump_is_compare, set_dump_type_for_all,
};
use burn_profiled_core::dump::{AddOptions, DumpError};

use super::grads::GradValues;
use super::ragged::{self, RaggedBatch};
use super::{dumper, tap};

/// See [`TensorDumper::set_gradients`](super::TensorDumper::set_gradients); no backward runs
/// while disabled (`Ok(None)`), so run your own backward when this gives `None`.
pub fn set_gradients(values: impl GradValues) -> Result<Option<Gradients>, DumpError> {
    with(|d| dumper::set_gradients(d, values).map(Some)).unwrap_or(Ok(None))
}

/// See [`TensorDumper::set_gradients_from`](super::TensorDumper::set_gradients_from).
pub fn set_gradients_from(grads: &Gradients) -> Result<(), DumpError> {
    with(|d| dumper::set_gradients_from(d, grads)).unwrap_or(Ok(()))
}

/// See [`TensorDumper::grad_tap`](super::TensorDumper::grad_tap); while disabled, `tensor`
/// itself (no leaf is added).
pub fn grad_tap<const D: usize>(
    path: &str,
    tensor: Tensor<D>,
    options: AddOptions,
) -> Result<Tensor<D>, DumpError> {
    if !is_enabled() {
        return Ok(tensor);
    }
    with(|d| tap::grad_tap(d, path, tensor, options))
        .unwrap_or_else(|| Err(DumpError::Gradients("the dumper is not enabled".into())))
}

/// See [`TensorDumper::enable_ragged_batch_dumping`](super::TensorDumper::enable_ragged_batch_dumping).
pub fn enable_ragged_batch_dumping<R: RaggedBatch>(as_per_sample: bool) {
    with(|d| ragged::register::<R>(d.converters_mut(), as_per_sample));
}
