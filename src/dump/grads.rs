//! Gradients from Burn's autodiff for the tensors added with `add_grad_data`.
//!
//! The original calls `torch.autograd.grad(values, inputs, retain_graph=True,
//! allow_unused=True)`, which leaves training alone. Burn 0.21 has no `retain_graph`: a
//! backward consumes the graph. So either the function values are summed and `backward()`
//! runs once on the sum ([`TensorDumper::set_gradients`](super::TensorDumper::set_gradients),
//! which returns the gradients for the optimizer step, in place of the user's own backward),
//! or the gradients of the user's own backward are used
//! ([`set_gradients_from`](super::TensorDumper::set_gradients_from)). Each added tensor then
//! becomes its gradient (`tensor.grad(&grads)`), `null` when it is not part of the graph, or the
//! string `` "`.requires_grad == False`" `` when it is not tracked (int and bool tensors
//! included).

use burn_profiled_core::dump::function_values::summed;
use std::any::Any;

use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Tensor, TensorData, TensorPrimitive};
use burn_profiled_core::dump::gradients::{self, Gradient, Resolution};
use burn_profiled_core::dump::{DumpError, Node};

use super::tap::Sink;
use super::tensors;

/// The function values given to
/// [`TensorDumper::set_gradients`](super::TensorDumper::set_gradients): one scalar tensor, or
/// several (their gradients are summed).
pub trait GradValues<B: AutodiffBackend> {
    /// The values, each a tensor of one element.
    fn into_values(self) -> Vec<Tensor<B, 1>>;
}

impl<B: AutodiffBackend> GradValues<B> for Tensor<B, 1> {
    fn into_values(self) -> Vec<Tensor<B, 1>> {
        vec![self]
    }
}

impl<B: AutodiffBackend> GradValues<B> for Vec<Tensor<B, 1>> {
    fn into_values(self) -> Vec<Tensor<B, 1>> {
        self
    }
}

impl<B: AutodiffBackend, const N: usize> GradValues<B> for [Tensor<B, 1>; N] {
    fn into_values(self) -> Vec<Tensor<B, 1>> {
        self.into()
    }
}

/// Sums the values and runs `backward()` once.
pub(crate) fn backward<B: AutodiffBackend>(
    values: impl GradValues<B>,
) -> Result<B::Gradients, DumpError> {
    let sum = summed(values.into_values(), |v| v.dims().to_vec(), |a, b| a + b)?;
    Ok(sum.backward())
}

/// Replaces every pending gradient record of `root` by its gradient. Nothing changes when it
/// fails; the taps' gradients are taken only once every other record resolved (a failed read
/// of a tap's gradient still uses up the taps before it).
pub(crate) fn resolve<B: AutodiffBackend>(
    root: &mut [(String, Node)],
    grads: &B::Gradients,
) -> Result<(), DumpError> {
    gradients::resolve(root, |pending, path| match pending.downcast_ref::<Sink>() {
        Some(sink) => {
            let (sink, path) = (sink.clone(), path.to_owned());
            Ok(Resolution::Later(Box::new(move || tapped(&sink, &path))))
        }
        None => gradient::<B>(pending, path, grads).map(Resolution::Now),
    })
}

/// The gradient a tap captured.
fn tapped(sink: &Sink, path: &str) -> Result<Gradient, DumpError> {
    if sink.untracked() {
        return Ok(Gradient::Untracked);
    }
    match sink.take() {
        None => Ok(Gradient::Unreached),
        Some(read) => read()
            .map_err(|message| DumpError::TensorRead {
                path: path.to_owned(),
                message,
            })
            .and_then(|data| values_at(data, path)),
    }
}

fn gradient<B: AutodiffBackend>(
    primitive: &(dyn Any + Send),
    path: &str,
    grads: &B::Gradients,
) -> Result<Gradient, DumpError> {
    if let Some(float) = primitive.downcast_ref::<TensorPrimitive<B>>() {
        // The rank is not known here; the data carries the real shape whatever `D` says.
        let tensor = Tensor::<B, 1>::from_primitive(float.clone());
        if !tensor.is_require_grad() {
            return Ok(Gradient::Untracked);
        }
        return match tensor.grad(grads) {
            None => Ok(Gradient::Unreached),
            Some(grad) => grad
                .try_into_data()
                .map_err(|error| DumpError::TensorRead {
                    path: path.to_owned(),
                    message: format!("{error:?}"),
                })
                .and_then(|data| values_at(data, path)),
        };
    }
    if primitive.is::<B::IntTensorPrimitive>() || primitive.is::<B::BoolTensorPrimitive>() {
        return Ok(Gradient::Untracked);
    }
    Err(DumpError::Gradients(format!(
        "The tensor added for its gradient at `{path}` is not a tensor of the backend `{}` given to `set_gradients`",
        std::any::type_name::<B>()
    )))
}

/// A gradient's values as the dumper keeps them.
fn values_at(data: TensorData, path: &str) -> Result<Gradient, DumpError> {
    tensors::array_at(data, path).map(Gradient::Values)
}
