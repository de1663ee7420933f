//! How a tensor added for its gradient finds it in Burn 0.22's [`Gradients`]: what the
//! dumper keeps for it until the gradients are set (`grads.rs` resolves it).

use burn::tensor::{Gradients, Tensor, TensorData};

/// A gradient's values, `None` when the tensor is not in the graph, or why they could not be
/// read.
pub(crate) type ReadGrad = Option<Result<TensorData, String>>;

/// Finds a tracked tensor's gradient.
type FindGrad = Box<dyn Fn(&Gradients) -> ReadGrad + Send>;

/// How a tensor added for its gradient finds it: `None` for an untracked one.
pub(crate) struct GradOf(Option<FindGrad>);

impl GradOf {
    /// A float tensor's: untracked unless it requires its gradient.
    pub(crate) fn float<const D: usize>(tensor: Tensor<D>) -> GradOf
    where
        Tensor<D>: Send,
    {
        if !tensor.is_require_grad() {
            return GradOf::untracked();
        }
        GradOf(Some(Box::new(move |grads| {
            tensor
                .grad(grads)
                .map(|grad| grad.try_into_data().map_err(|error| format!("{error:?}")))
        })))
    }

    /// An int or bool tensor's, or an untracked float tensor's: none.
    pub(crate) fn untracked() -> GradOf {
        GradOf(None)
    }

    /// Its gradient in `grads`: `None` for an untracked tensor, else what finding it gave.
    pub(crate) fn find(&self, grads: &Gradients) -> Option<ReadGrad> {
        self.0.as_ref().map(|find| find(grads))
    }
}
