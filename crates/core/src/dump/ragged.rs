//! Ragged batches: the port of the original's `RaggedBatch` dumping, for every edition. An
//! edition's `RaggedBatch` trait hands over a user's padded batch (its Burn's tensor data);
//! here it becomes, per sample, a list (nested for several batch dims) of tensors cropped to
//! each sample's size along the non-uniform dim, or else the map `{"data", "sample_sizes",
//! "non_uniform_dim", "num_batch_dims"}`.

use std::any::Any;

use super::blob::{Array, TensorDataOf};
use super::{Converters, DumpError, Map, ToDump, Value};

/// A padded batch's layout: everything of it but its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaggedLayout {
    /// The size of each sample along the non-uniform dim, batch dims in C order.
    pub sample_sizes: Vec<usize>,
    /// The non-uniform dim, counted in the full data (batch dims included).
    pub non_uniform_dim: usize,
    /// How many leading dims are batch dims (at least 1).
    pub num_batch_dims: usize,
}

/// Registers the converter of the ragged-batch type `R` with `converters`: `read` gives a
/// batch's padded data (the edition `E`'s tensor data) and its layout; the batch is dumped
/// per sample ([`per_sample`]) or as a map ([`as_map`]).
pub fn register<E, D, R>(
    converters: &mut Converters,
    as_per_sample: bool,
    read: impl Fn(&R) -> (D, RaggedLayout) + Send + 'static,
) where
    D: TensorDataOf<E> + ToDump<E>,
    R: Any + Send,
{
    converters.register_fallible(move |batch: R| {
        let (data, layout) = read(&batch);
        if !as_per_sample {
            let shape = data.shape_of();
            return Ok(as_map(ToDump::<E>::to_dump(data), &shape, layout));
        }
        data.check().map_err(DumpError::InvalidRaggedBatch)?;
        let array =
            (data.to_array()).map_err(|error| DumpError::InvalidRaggedBatch(error.to_string()))?;
        per_sample(array, layout)
    });
}

/// The batch as a map: `data` (the padded data, dumped as the edition's tensor data), of
/// `shape`, with `sample_sizes` nested as the batch dims are.
pub fn as_map(data: Value, shape: &[usize], layout: RaggedLayout) -> Value {
    let batch_shape: Vec<usize> = shape.iter().take(layout.num_batch_dims).copied().collect();
    let sizes = nest(
        &mut layout.sample_sizes.into_iter().map(|s| s.to_dump()),
        &batch_shape,
    );
    Map::new()
        .with("data", data)
        .with("sample_sizes", sizes)
        .with("non_uniform_dim", layout.non_uniform_dim)
        .with("num_batch_dims", layout.num_batch_dims)
        .to_dump()
}

/// The batch per sample: each sample's data cropped to its size, in lists nested as the batch
/// dims are; an error that names what does not fit when the layout and the data disagree.
pub fn per_sample(data: Array, layout: RaggedLayout) -> Result<Value, DumpError> {
    let RaggedLayout {
        sample_sizes: sizes,
        non_uniform_dim: dim,
        num_batch_dims: batch_dims,
    } = layout;
    let shape = data.shape.clone();
    let samples = product(shape.iter().take(batch_dims));
    let invalid = |why: &str| {
        DumpError::InvalidRaggedBatch(format!(
            "shape {shape:?}, num_batch_dims {batch_dims}, non_uniform_dim {dim}, {} sample sizes: {why}",
            sizes.len()
        ))
    };
    if batch_dims == 0 || dim < batch_dims || dim >= shape.len() {
        return Err(invalid("the non-uniform dim must be a sample dim"));
    }
    if sizes.len() != samples || sizes.iter().any(|&s| s > shape[dim]) {
        return Err(invalid(
            "one sample size per sample, each at most the padded size",
        ));
    }
    let sample_shape = &shape[batch_dims..];
    let axis = dim - batch_dims;
    let element = data.dtype.size();
    let inner = product(&sample_shape[axis + 1..]).saturating_mul(element);
    let outer = product(&sample_shape[..axis]);
    let padded = sample_shape[axis];
    let sample_bytes = outer.saturating_mul(padded).saturating_mul(inner);
    let mut items = Vec::with_capacity(samples);
    for (i, &size) in sizes.iter().enumerate() {
        let sample = &data.bytes[i * sample_bytes..(i + 1) * sample_bytes];
        let mut cropped = Vec::with_capacity(outer * size * inner);
        for o in 0..outer {
            let start = o * padded * inner;
            cropped.extend_from_slice(&sample[start..start + size * inner]);
        }
        let mut cropped_shape = sample_shape.to_vec();
        cropped_shape[axis] = size;
        items.push(
            Array {
                dtype: data.dtype,
                shape: cropped_shape,
                bytes: cropped,
            }
            .to_dump(),
        );
    }
    Ok(nest(&mut items.into_iter(), &shape[..batch_dims]))
}

fn nest(items: &mut impl Iterator<Item = Value>, shape: &[usize]) -> Value {
    match shape.split_first() {
        None => items.next().unwrap_or(Value::Null),
        Some((&n, rest)) => Value::List((0..n).map(|_| nest(items, rest)).collect()),
    }
}

/// The product of `dims`, saturating: exact whenever the true product fits or is 0, which is
/// all a checked array allows for the products taken here.
fn product<'a>(dims: impl IntoIterator<Item = &'a usize>) -> usize {
    dims.into_iter().fold(1, |n, &d| n.saturating_mul(d))
}
