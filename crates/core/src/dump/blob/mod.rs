//! The dumper's blob files: raw `.bin` with a JSON sidecar, NumPy `.npy`, and normalised `.png`
//! images, written exactly as the original Python `TensorDumper` writes them and read back for
//! comparison.
//!
//! * `.bin`: the raw C-order little-endian bytes, and next to it `{file}.meta.json` =
//!   `{"file_data_shape": [...], "file_data_dtype": "torch.float32"}` (Python's `json.dump`
//!   with indent 2). Every dtype, bfloat16 included, is written as its own bytes.
//! * `.npy`: NPY format 1.0 as `numpy.save` writes it. NumPy has no bfloat16, so a bfloat16
//!   array is widened to `<f4` (exactly, every bfloat16 is an f32) and reads back as f32.
//! * `.png`: 8-bit RGB or grey images, normalised per image to `[0, 255]` as the original does
//!   (`(v - min) * 255 / (max - min)`, truncated), with `{file}.meta.json` =
//!   `{"original_range": [min, max], "image_format": "RGB"|"BGR"|"Intensity"}`.
//!
//! Files are written through a temporary file renamed into place, so a reader never sees half a
//! blob. Readers check everything they read: a malformed file is a [`BlobError`] that names the
//! file, never a panic.

mod array;
mod bin;
mod dtype;
mod element;
mod error;
mod file;
mod npy;
mod npy_header;
mod png;
mod shape;

pub use array::Array;
pub(crate) use array::ArrayView;
#[doc(hidden)]
pub use array::TensorDataOf;
pub(crate) use bin::write_bin_view;
pub use bin::{read_bin, write_bin};
pub use dtype::Dtype;
#[doc(hidden)]
pub use dtype::DtypeOf;
pub use element::ArrayElement;
pub use error::BlobError;
pub use file::meta_path;
pub(crate) use npy::write_npy_view;
pub use npy::{read_npy, write_npy};
pub(crate) use png::write_png_view;
pub use png::{ImageFormat, read_png, write_png};
pub use shape::MAX_RANK;
#[doc(hidden)]
pub use shape::element_count;
