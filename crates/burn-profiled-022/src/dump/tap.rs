//! Gradient taps on Burn 0.22: the gradient of an intermediate activation.
//!
//! Burn's autodiff keeps gradients of leaves only, and Burn 0.22 lets no code outside it add
//! a backward step. So a tap adds a leaf to the tensor: a tensor of negative zeros of its
//! shape and dtype, requiring its gradient. `x + (-0.0)` is `x` to the bit for every `x` (a
//! positive zero stays positive, a negative one negative), the addition's backward hands the
//! incoming gradient to both sides unchanged, and the leaf's gradient is the tensor's:
//! training stays bit-identical, and the gradient is read from the leaf when the gradients
//! are set. A tensor autodiff does not track gets no leaf: its record is the original's
//! `` "`.requires_grad == False`" ``.

use burn::tensor::Tensor;
use burn_profiled_core::dump::{self as core_dump, AddOptions, DumpError};

use super::grad_of::GradOf;

/// [`TensorDumper::grad_tap`](super::TensorDumper::grad_tap) on the core's dumper (the
/// process-wide one too).
pub(super) fn grad_tap<const D: usize>(
    dumper: &mut core_dump::TensorDumper,
    path: &str,
    tensor: Tensor<D>,
    options: AddOptions,
) -> Result<Tensor<D>, DumpError> {
    if !tensor.is_tracked() {
        dumper.insert_grad_record(path, Box::new(GradOf::untracked()), options)?;
        return Ok(tensor);
    }
    let leaf = tensor.zeros_like().neg().require_grad();
    dumper.insert_grad_record(path, Box::new(GradOf::float(leaf.clone())), options)?;
    Ok(tensor + leaf)
}
