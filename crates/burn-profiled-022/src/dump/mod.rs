//! TensorDumper on Burn 0.22: tensors and autodiff gradients to disk, and comparison across
//! runs, optimisations, frameworks and Burn versions. The same files as Burn 0.21's edition
//! (`<dir>/<n>/tensors.json`, `grads.json`, `.bin`, `.npy`, `.png`), written by the same core
//! code: a dump of a 0.21 run and one of a 0.22 run of the same model compare with
//! `burn-dump-diff`, and either with a PyTorch reference's.
//!
//! Data is added at dotted paths ([`TensorDumper::add_tensor_data`](burn_profiled_core::dump::TensorDumper::add_tensor_data)) as anything
//! [`ToDump`]: Burn 0.22 tensors (`Tensor<D, K>`, `&Tensor`, `TensorData`), numbers, strings,
//! lists, [`Map`]s, user types through converters. Gradients of autodiff tensors are added
//! with [`TensorDumper::add_grad_data`](burn_profiled_core::dump::TensorDumper::add_grad_data) and computed by [`TensorDumper::set_gradients`] or
//! taken from the user's backward with [`TensorDumper::set_gradients_from`]; those of
//! intermediate tensors through gradient taps ([`TensorDumper::grad_tap`]). A user's padded
//! batch type dumps per sample or as a map ([`RaggedBatch`]).

pub use burn_profiled_core::dump::{
    Action, AddOptions, CompareSettings, DumpError, DumpType, Map, ToDump, Value, blob, compare,
    json,
};

mod dumper;
pub mod global;
mod grad_of;
mod grads;
mod ragged;
mod tap;
pub(crate) mod tensors;

pub use burn_profiled_core::dump::gradients::REQUIRES_GRAD_FALSE;
pub use dumper::TensorDumper;
pub use grads::GradValues;
pub use ragged::RaggedBatch;
#[doc(hidden)]
pub use tensors::Burn022;
