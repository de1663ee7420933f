//! Ragged batches: the port of the original's `RaggedBatch` dumping for a user's own type
//! ([`burn_profiled_core::dump::ragged`], shared with Burn 0.22's edition).
//!
//! Implement [`RaggedBatch`] for the type, call
//! [`TensorDumper::enable_ragged_batch_dumping`](super::TensorDumper::enable_ragged_batch_dumping),
//! and add values wrapped with [`Value::opaque`](burn_profiled_core::dump::Value::opaque). Per
//! sample, a batch becomes a list (nested for several batch dims) of tensors cropped to each
//! sample's size along the non-uniform dim; otherwise it becomes `{"data", "sample_sizes",
//! "non_uniform_dim", "num_batch_dims"}`.

use std::any::Any;

use burn::tensor::TensorData;
use burn_profiled_core::dump::blob::TensorDataOf;
use burn_profiled_core::dump::ragged::{self, RaggedLayout};
use burn_profiled_core::dump::{Converters, DumpError, ToDump};

use super::tensors::{Burn021, check_data};

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
        let data = batch.data();
        let layout = RaggedLayout {
            sample_sizes: batch.sample_sizes(),
            non_uniform_dim: batch.non_uniform_dim(),
            num_batch_dims: batch.num_batch_dims(),
        };
        if !as_per_sample {
            let shape = data.shape.to_vec();
            return Ok(ragged::as_map(
                ToDump::<Burn021>::to_dump(data),
                &shape,
                layout,
            ));
        }
        check_data(&data).map_err(DumpError::InvalidRaggedBatch)?;
        let array = TensorDataOf::<Burn021>::to_array(&data)
            .map_err(|error| DumpError::InvalidRaggedBatch(error.to_string()))?;
        ragged::per_sample(array, layout)
    });
}
