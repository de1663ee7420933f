//! The tensor dumper's half that no Burn version changes: the value tree, the add pipeline,
//! the dump directory's files (`tensors.json`, `grads.json`, `.bin`, `.npy`, `.png`), their
//! comparison and the Python interchange. Each edition's `dump` module adds its Burn's
//! tensors, gradients and the process-wide dumper; its front page says how to use it.

pub mod blob;
pub mod compare;
pub mod function_values;
pub mod gradients;
pub mod json;

mod add;
mod convert;
mod dumper;
mod error;
mod format;
pub mod global;
mod options;
pub mod ragged;
mod tree;
mod value;
pub mod value_sink;
mod write;

#[doc(hidden)]
pub use add::full_path;
#[doc(hidden)]
pub use convert::Converters;
pub use dumper::{Action, TensorDumper};
pub use error::DumpError;
pub use options::{AddOptions, CompareSettings, DumpType};
#[doc(hidden)]
pub use tree::{Content, Node, Record, check_name, insert_at_path};
#[doc(hidden)]
pub use value::{ErasedTensor, TensorLeafError, leaf_array};
pub use value::{Map, Opaque, TensorLeaf, ToDump, Value};
