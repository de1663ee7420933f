//! TensorDumper: tensors and autodiff gradients to disk, and comparison across runs,
//! optimisations and frameworks.

pub mod compare;
pub mod json;
