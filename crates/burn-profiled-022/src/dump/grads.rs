//! Gradients from Burn 0.22's autodiff for the tensors added with `add_grad_data`: each
//! becomes its gradient (`tensor.grad(&grads)`), `null` when it is not part of the graph, or
//! the string `` "`.requires_grad == False`" `` when it is not tracked (int and bool tensors
//! included), as on Burn 0.21 and in the original.

use burn::tensor::{Gradients, Tensor};
use burn_profiled_core::dump::function_values::summed;
use burn_profiled_core::dump::gradients::{self, Gradient, Resolution};
use burn_profiled_core::dump::{DumpError, Node};

use super::grad_of::GradOf;
use super::tensors;

/// The function values given to
/// [`TensorDumper::set_gradients`](super::TensorDumper::set_gradients): one scalar tensor, or
/// several (their gradients are summed).
pub trait GradValues {
    /// The values, each a tensor of one element.
    fn into_values(self) -> Vec<Tensor<1>>;
}

impl GradValues for Tensor<1> {
    fn into_values(self) -> Vec<Tensor<1>> {
        vec![self]
    }
}

impl GradValues for Vec<Tensor<1>> {
    fn into_values(self) -> Vec<Tensor<1>> {
        self
    }
}

impl<const N: usize> GradValues for [Tensor<1>; N] {
    fn into_values(self) -> Vec<Tensor<1>> {
        self.into()
    }
}

/// Sums the values and runs `backward()` once.
pub(crate) fn backward(values: impl GradValues) -> Result<Gradients, DumpError> {
    let sum = summed(values.into_values(), |v| v.dims().to_vec(), |a, b| a + b)?;
    Ok(sum.backward())
}

/// Replaces every pending gradient record of `root` by its gradient in `grads`. Nothing
/// changes when it fails.
pub(crate) fn resolve(root: &mut [(String, Node)], grads: &Gradients) -> Result<(), DumpError> {
    gradients::resolve(root, |pending, path| {
        let Some(grad_of) = pending.downcast_ref::<GradOf>() else {
            return Err(DumpError::Gradients(format!(
                "The data added for its gradient at `{path}` is not a tensor of Burn 0.22"
            )));
        };
        let gradient = match grad_of.find(grads) {
            None => Gradient::Untracked,
            Some(None) => Gradient::Unreached,
            Some(Some(read)) => {
                let data = read.map_err(|message| DumpError::TensorRead {
                    path: path.to_owned(),
                    message,
                })?;
                Gradient::Values(tensors::array_at(data, path)?)
            }
        };
        Ok(Resolution::Now(gradient))
    })
}
