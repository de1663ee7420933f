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
use burn_profiled_core::dump::blob::Array;
use burn_profiled_core::dump::json::PyJson;
use burn_profiled_core::dump::{Content, DumpError, Node, Record};

use super::tap::Sink;
use super::tensors;

/// What an untracked tensor's gradient is dumped as (the original's literal string).
pub const REQUIRES_GRAD_FALSE: &str = "`.requires_grad == False`";

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
    let values = values.into_values();
    summed(
        values,
        |value| value.dims().to_vec(),
        |sum, value| sum + value,
    )
    .map(|sum| sum.backward())
}

/// Replaces every pending gradient record of `root` by its gradient. Nothing changes when it
/// fails; the taps' gradients are taken only once every other record resolved (a failed read
/// of a tap's gradient still uses up the taps before it).
pub(crate) fn resolve<B: AutodiffBackend>(
    root: &mut [(String, Node)],
    grads: &B::Gradients,
) -> Result<(), DumpError> {
    let mut collected = Vec::new();
    for (key, node) in root.iter() {
        collect::<B>(node, key, grads, &mut collected)?;
    }
    let resolved = collected
        .into_iter()
        .map(|collected| match collected {
            Collected::Tap(sink, path) => tapped(sink, &path),
            Collected::Ready(outcome) => Ok(outcome),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut resolved = resolved.into_iter();
    for (_, node) in root.iter_mut() {
        node.for_each_record(&mut |node| {
            if let Node::Record(Record {
                content: Content::Pending(_),
                dump_type,
                permute,
            }) = node
            {
                let outcome = resolved.next();
                *node = match outcome {
                    Some(Outcome::Data(data)) => Node::Record(Record {
                        content: Content::Data(data),
                        dump_type: *dump_type,
                        permute: permute.take(),
                    }),
                    Some(Outcome::Leaf(leaf)) => Node::Leaf(leaf),
                    None => Node::Leaf(PyJson::Null),
                };
            }
        });
    }
    Ok(())
}

enum Outcome {
    Data(Array),
    Leaf(PyJson),
}

/// A pending record's outcome, or the tap whose gradient is taken once everything else
/// resolved.
enum Collected<'a> {
    Ready(Outcome),
    Tap(&'a Sink, String),
}

fn collect<'a, B: AutodiffBackend>(
    node: &'a Node,
    path: &str,
    grads: &B::Gradients,
    out: &mut Vec<Collected<'a>>,
) -> Result<(), DumpError> {
    match node {
        Node::Map(entries) => {
            for (key, child) in entries {
                collect::<B>(child, &format!("{path}.{key}"), grads, out)?;
            }
        }
        Node::List(items) => {
            for (i, child) in items.iter().enumerate() {
                collect::<B>(child, &format!("{path}.{i}"), grads, out)?;
            }
        }
        Node::Record(Record {
            content: Content::Pending(pending),
            ..
        }) => match pending.downcast_ref::<Sink>() {
            Some(sink) => out.push(Collected::Tap(sink, path.to_owned())),
            None => out.push(Collected::Ready(gradient::<B>(
                pending.as_ref(),
                path,
                grads,
            )?)),
        },
        Node::Record(_) | Node::Leaf(_) => {}
    }
    Ok(())
}

/// The gradient a tap captured.
fn tapped(sink: &Sink, path: &str) -> Result<Outcome, DumpError> {
    if sink.untracked() {
        return Ok(Outcome::Leaf(PyJson::Str(REQUIRES_GRAD_FALSE.to_owned())));
    }
    match sink.take() {
        None => Ok(Outcome::Leaf(PyJson::Null)),
        Some(read) => read()
            .map_err(|message| DumpError::TensorRead {
                path: path.to_owned(),
                message,
            })
            .and_then(|data| data_at(data, path)),
    }
}

fn gradient<B: AutodiffBackend>(
    primitive: &(dyn Any + Send),
    path: &str,
    grads: &B::Gradients,
) -> Result<Outcome, DumpError> {
    let untracked = || Outcome::Leaf(PyJson::Str(REQUIRES_GRAD_FALSE.to_owned()));
    if let Some(float) = primitive.downcast_ref::<TensorPrimitive<B>>() {
        // The rank is not known here; the data carries the real shape whatever `D` says.
        let tensor = Tensor::<B, 1>::from_primitive(float.clone());
        if !tensor.is_require_grad() {
            return Ok(untracked());
        }
        return match tensor.grad(grads) {
            None => Ok(Outcome::Leaf(PyJson::Null)),
            Some(grad) => grad
                .try_into_data()
                .map_err(|error| DumpError::TensorRead {
                    path: path.to_owned(),
                    message: format!("{error:?}"),
                })
                .and_then(|data| data_at(data, path)),
        };
    }
    if primitive.is::<B::IntTensorPrimitive>() || primitive.is::<B::BoolTensorPrimitive>() {
        return Ok(untracked());
    }
    Err(DumpError::Gradients(format!(
        "The tensor added for its gradient at `{path}` is not a tensor of the backend `{}` given to `set_gradients`",
        std::any::type_name::<B>()
    )))
}

/// A gradient's values as the dumper keeps them.
fn data_at(data: TensorData, path: &str) -> Result<Outcome, DumpError> {
    tensors::array_at(data, path).map(Outcome::Data)
}
