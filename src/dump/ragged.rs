//! Ragged batches: the port of the original's `RaggedBatch` dumping for a user's own type.
//!
//! Implement [`RaggedBatch`] for the type, call
//! [`TensorDumper::enable_ragged_batch_dumping`](super::TensorDumper::enable_ragged_batch_dumping),
//! and add values wrapped with [`Value::opaque`]. Per sample, a batch becomes a list (nested
//! for several batch dims) of tensors cropped to each sample's size along the non-uniform
//! dim; otherwise it becomes `{"data", "sample_sizes", "non_uniform_dim", "num_batch_dims"}`.

use std::any::Any;

use burn::tensor::TensorData;

use burn_profiled_core::dump::{Converters, DumpError, Map, ToDump, Value};

use super::tensors::check_data;

/// A padded batch of samples of different sizes along one dim.
pub trait RaggedBatch: Any + Send {
    /// The padded data: batch dims first, then the sample dims.
    fn data(&self) -> TensorData;
    /// The size of each sample along the non-uniform dim, batch dims in C order.
    fn sample_sizes(&self) -> Vec<usize>;
    /// The non-uniform dim, counted in the full data (batch dims included).
    fn non_uniform_dim(&self) -> usize;
    /// How many leading dims are batch dims (at least 1).
    fn num_batch_dims(&self) -> usize;
}

pub(crate) fn register<R: RaggedBatch>(converters: &mut Converters, as_per_sample: bool) {
    converters.register_fallible(move |batch: R| {
        if as_per_sample {
            per_sample(&batch)
        } else {
            Ok(as_map(&batch))
        }
    });
}

fn as_map<R: RaggedBatch>(batch: &R) -> Value {
    let data = batch.data();
    let batch_shape: Vec<usize> = data
        .shape
        .iter()
        .take(batch.num_batch_dims())
        .copied()
        .collect();
    let sizes = nest(
        &mut batch.sample_sizes().into_iter().map(|s| s.to_dump()),
        &batch_shape,
    );
    Map::new()
        .with("data", data)
        .with("sample_sizes", sizes)
        .with("non_uniform_dim", batch.non_uniform_dim())
        .with("num_batch_dims", batch.num_batch_dims())
        .to_dump()
}

fn nest(items: &mut impl Iterator<Item = Value>, shape: &[usize]) -> Value {
    match shape.split_first() {
        None => items.next().unwrap_or(Value::Null),
        Some((&n, rest)) => Value::List((0..n).map(|_| nest(items, rest)).collect()),
    }
}

/// The product of `dims`, saturating: exact whenever the true product fits or is 0, which is
/// all a checked `TensorData` allows for the products taken here.
fn product<'a>(dims: impl IntoIterator<Item = &'a usize>) -> usize {
    dims.into_iter().fold(1, |n, &d| n.saturating_mul(d))
}

fn per_sample<R: RaggedBatch>(batch: &R) -> Result<Value, DumpError> {
    let data = batch.data();
    check_data(&data).map_err(DumpError::InvalidRaggedBatch)?;
    let shape = data.shape.to_vec();
    let batch_dims = batch.num_batch_dims();
    let dim = batch.non_uniform_dim();
    let sizes = batch.sample_sizes();
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
    let bytes = data.as_bytes();
    let mut items = Vec::with_capacity(samples);
    for (i, &size) in sizes.iter().enumerate() {
        let sample = &bytes[i * sample_bytes..(i + 1) * sample_bytes];
        let mut cropped = Vec::with_capacity(outer * size * inner);
        for o in 0..outer {
            let start = o * padded * inner;
            cropped.extend_from_slice(&sample[start..start + size * inner]);
        }
        let mut cropped_shape = sample_shape.to_vec();
        cropped_shape[axis] = size;
        items.push(TensorData::from_bytes_vec(cropped, cropped_shape, data.dtype).to_dump());
    }
    Ok(nest(&mut items.into_iter(), &shape[..batch_dims]))
}
