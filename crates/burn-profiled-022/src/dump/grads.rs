//! Gradients from Burn 0.22's autodiff for the tensors added with `add_grad_data`: each
//! becomes its gradient (`tensor.grad(&grads)`), `null` when it is not part of the graph, or
//! the string `` "`.requires_grad == False`" `` when it is not tracked (int and bool tensors
//! included), as on Burn 0.21 and in the original.

use burn::tensor::{Gradients, Tensor};
use burn_profiled_core::dump::function_values::summed;
use burn_profiled_core::dump::json::PyJson;
use burn_profiled_core::dump::{Content, DumpError, Node, Record};

use super::grad_of::GradOf;
use super::tensors;

/// What an untracked tensor's gradient is dumped as (the original's literal string).
pub const REQUIRES_GRAD_FALSE: &str = "`.requires_grad == False`";

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
    let values = values.into_values();
    summed(
        values,
        |value| value.dims().to_vec(),
        |sum, value| sum + value,
    )
    .map(|sum| sum.backward())
}

enum Outcome {
    Data(burn_profiled_core::dump::blob::Array),
    Leaf(PyJson),
}

/// Replaces every pending gradient record of `root` by its gradient in `grads`. Nothing
/// changes when it fails.
pub(crate) fn resolve(root: &mut [(String, Node)], grads: &Gradients) -> Result<(), DumpError> {
    let mut outcomes = Vec::new();
    for (key, node) in root.iter() {
        collect(node, key, grads, &mut outcomes)?;
    }
    let mut outcomes = outcomes.into_iter();
    for (_, node) in root.iter_mut() {
        node.for_each_record(&mut |node| {
            if let Node::Record(Record {
                content: Content::Pending(_),
                dump_type,
                permute,
            }) = node
            {
                *node = match outcomes.next() {
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

fn collect(
    node: &Node,
    path: &str,
    grads: &Gradients,
    out: &mut Vec<Outcome>,
) -> Result<(), DumpError> {
    match node {
        Node::Map(entries) => {
            for (key, child) in entries {
                collect(child, &format!("{path}.{key}"), grads, out)?;
            }
        }
        Node::List(items) => {
            for (i, child) in items.iter().enumerate() {
                collect(child, &format!("{path}.{i}"), grads, out)?;
            }
        }
        Node::Record(Record {
            content: Content::Pending(pending),
            ..
        }) => {
            let Some(grad_of) = pending.downcast_ref::<GradOf>() else {
                return Err(DumpError::Gradients(format!(
                    "The data added for its gradient at `{path}` is not a tensor of Burn 0.22"
                )));
            };
            out.push(match grad_of.find(grads) {
                None => Outcome::Leaf(PyJson::Str(REQUIRES_GRAD_FALSE.to_owned())),
                Some(found) => match found {
                    None => Outcome::Leaf(PyJson::Null),
                    Some(read) => {
                        let data = read.map_err(|message| DumpError::TensorRead {
                            path: path.to_owned(),
                            message,
                        })?;
                        Outcome::Data(tensors::array_at(data, path)?)
                    }
                },
            });
        }
        Node::Record(_) | Node::Leaf(_) => {}
    }
    Ok(())
}
