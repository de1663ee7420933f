//! The process-wide dumper: the original's singleton. [`enable`] it once in the main program;
//! everywhere else the functions here do nothing until then, and cost one atomic load (a
//! `OnceLock` check). Data closures (`add_tensor_data_with`, `push_range_with`,
//! [`run_if_enabled`]) are not called while disabled.
//!
//! ```no_run
//! use burn_profiled::dump::{self, AddOptions, DumpType, global};
//!
//! global::enable("dumps");
//! global::add_tensor_data_with("x", || vec![1, 2, 3], AddOptions::new(DumpType::Json)).unwrap();
//! global::dump(true).unwrap();
//! ```
//!
//! Actions registered with [`perform_after_dump_count`] run with the dumper unlocked, so they
//! may call these functions. The dumper is the core's, which every Burn edition shares; the
//! functions for Burn 0.21's gradients, taps and ragged batches are this crate's.

use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn_profiled_core::dump::global::with;
pub use burn_profiled_core::dump::global::{
    add_grad_data, add_grad_data_with, add_tensor_data, add_tensor_data_with,
    compare_to_dumped_data, dump, dump_count, enable, is_enabled, perform_after_dump_count,
    pop_range, push_range, push_range_with, register_custom_converter, reset_dump_count,
    run_if_enabled, set_dump_count, set_dump_is_compare, set_dump_type_for_all,
};
use burn_profiled_core::dump::{AddOptions, DumpError};

use super::dumper;
use super::grads::GradValues;
use super::ragged::{self, RaggedBatch};

/// See [`TensorDumper::set_gradients`](super::TensorDumper::set_gradients); no backward runs
/// while disabled (`Ok(None)`), so run your own backward when this gives `None`.
pub fn set_gradients<B: AutodiffBackend>(
    values: impl GradValues<B>,
) -> Result<Option<B::Gradients>, DumpError> {
    with(|d| dumper::set_gradients(d, values).map(Some)).unwrap_or(Ok(None))
}

/// See [`TensorDumper::set_gradients_from`](super::TensorDumper::set_gradients_from).
pub fn set_gradients_from<B: AutodiffBackend>(grads: &B::Gradients) -> Result<(), DumpError> {
    with(|d| dumper::set_gradients_from::<B>(d, grads)).unwrap_or(Ok(()))
}

/// See [`TensorDumper::grad_tap`](super::TensorDumper::grad_tap); while disabled, `tensor`
/// itself (no op is added).
pub fn grad_tap<B: Backend, const D: usize>(
    path: &str,
    tensor: Tensor<B, D>,
    options: AddOptions,
) -> Result<Tensor<B, D>, DumpError> {
    if !is_enabled() {
        return Ok(tensor);
    }
    with(|d| dumper::grad_tap(d, path, tensor, options))
        .unwrap_or_else(|| Err(DumpError::Gradients("the dumper is not enabled".into())))
}

/// See [`TensorDumper::enable_ragged_batch_dumping`](super::TensorDumper::enable_ragged_batch_dumping).
pub fn enable_ragged_batch_dumping<R: RaggedBatch>(as_per_sample: bool) {
    with(|d| ragged::register::<R>(d.converters_mut(), as_per_sample));
}
