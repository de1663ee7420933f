//! TensorDumper: tensors and autodiff gradients to disk, and comparison across runs,
//! optimisations and frameworks.
//!
//! The port of the original Python `TensorDumper`, with its directory layout and JSON format,
//! so that dumps of a PyTorch reference and of a Burn run compare against each other:
//!
//! * data is added at dotted paths ([`TensorDumper::add_tensor_data`](burn_profiled_core::dump::TensorDumper::add_tensor_data)) as anything
//!   [`ToDump`]: Burn tensors, numbers, strings, lists, [`Map`]s, user types through
//!   converters; tensors get a [`DumpType`] (JSON, `.bin`, PNG images, `.npy`), with overrides
//!   by map key, permutations and exclusions ([`AddOptions`]);
//! * gradients of autodiff tensors are added with [`TensorDumper::add_grad_data`](burn_profiled_core::dump::TensorDumper::add_grad_data) and computed
//!   by [`TensorDumper::set_gradients`] (module [`grads`]); gradients of intermediate
//!   activations through [`TensorDumper::grad_tap`] (module [`tap`]);
//! * [`TensorDumper::dump`](burn_profiled_core::dump::TensorDumper::dump) writes `<dir>/<n>/tensors.json` (+ `grads.json` + blob files), all
//!   or nothing; [`TensorDumper::compare_to_dumped_data`](burn_profiled_core::dump::TensorDumper::compare_to_dumped_data) checks the data against
//!   such a dump ([`compare`]);
//! * [`global`] is the process-wide, enable-once dumper; [`TensorDumper`] is the same as a
//!   value.
//!
//! Names: map keys, path parts and range names become parts of file names, so `..`, `.`, and
//! names holding `/`, `\` or NUL are refused with [`DumpError::InvalidName`]; no file is ever
//! written outside the dump directory.
//!
//! Deviations from the original, on purpose:
//! * PICKLE is [`DumpType::Npy`]: `.npy` files (readable by `numpy.load`) named
//!   `{path}.npy` in place of `{path}.pkl`.
//! * Tensors are read (`into_data`) when added, since Burn tensors are immutable: in-place
//!   changes made before `dump()` do not show up, unlike the original. Burn has no 0-d
//!   tensors: pass a [`TensorData`](burn::tensor::TensorData) with an empty shape for a bare
//!   number.
//! * There is no pre-registered numpy converter; [`TensorData`](burn::tensor::TensorData) is
//!   [`ToDump`] directly. Ragged batches are a trait ([`RaggedBatch`]) for the user's type.
//! * A failed insert leaves no `{}` behind.
//! * A dump is checked completely (names, image ranks and channels, permutations, gradients
//!   computed) before anything is written, then written into `<dir>/.<n>.partial-*` and renamed
//!   to `<dir>/<n>`: never half-written (a crash mid-write can leave a `.partial` directory,
//!   never a partial `<n>`). Writing dump `n` again replaces that directory, so stale files do
//!   not remain. On an error the data is kept and the count stays.
//! * Burn 0.21's backward consumes the graph (there is no `retain_graph`):
//!   [`TensorDumper::set_gradients`] returns the gradients of its backward for the optimizer
//!   step, or [`TensorDumper::set_gradients_from`] takes the user's own.
//! * Gradient data added after `set_gradients` is an error at dump time (the original dumps
//!   the tensor values as if they were gradients); no gradient data at all is not an error.
//! * `set_dump_is_compare` honours `allow_missing_data_in_previous`; strings are compared by
//!   equality ([`compare`] lists its own fixes).
//! * Names that could leave the dump directory are refused (see above); `pop_range` on an
//!   empty stack and the other programming errors are [`DumpError`]s; only a second
//!   [`global::enable`] panics, with the original's text.
//! * A comparison failure with `as_warning` is printed to stderr (`warning: ...`) and gives
//!   `Ok(false)`.
//! * An image's `original_range` leaves NaNs out (numpy's `min`/`max` give NaN): the range
//!   of its other values, or `[Infinity, -Infinity]` when every value is NaN.

// What no Burn version changes (the value tree, the files, comparison, Python interchange) is
// the core's, shared with the other editions; this module adds Burn 0.21's tensors.
pub use burn_profiled_core::dump::{blob, compare, json};

mod dumper;
pub mod global;
pub mod grads;
pub mod ragged;
pub mod tap;
mod tensors;

pub use burn_profiled_core::dump::gradients::REQUIRES_GRAD_FALSE;
pub use burn_profiled_core::dump::{
    Action, AddOptions, CompareSettings, DumpError, DumpType, Map, ToDump, Value,
};
pub use dumper::TensorDumper;
pub use grads::GradValues;
pub use ragged::RaggedBatch;
pub use tap::{TapBackend, enable_grad_taps};
#[doc(hidden)]
pub use tensors::Burn021;
