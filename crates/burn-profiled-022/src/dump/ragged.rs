//! Ragged batches: the port of the original's `RaggedBatch` dumping for a user's own type
//! ([`burn_profiled_core::dump::ragged`], shared with Burn 0.21's edition).
//!
//! Implement [`RaggedBatch`] for the type, call
//! [`TensorDumper::enable_ragged_batch_dumping`](super::TensorDumper::enable_ragged_batch_dumping),
//! and add values wrapped with [`Value::opaque`](burn_profiled_core::dump::Value::opaque). Per
//! sample, a batch becomes a list (nested for several batch dims) of tensors cropped to each
//! sample's size along the non-uniform dim; otherwise it becomes `{"data", "sample_sizes",
//! "non_uniform_dim", "num_batch_dims"}`.

use burn::tensor::TensorData;

use super::tensors::Burn022;

burn_profiled_core::ragged_batch!(TensorData, Burn022);
