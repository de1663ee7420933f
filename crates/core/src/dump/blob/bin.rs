//! The original's BINARY dump: raw bytes, with the shape and dtype in a JSON sidecar.

use std::path::Path;

use super::element::int_json;
use super::error::{malformed, with_file};
use super::file::{open_file, read_bytes, read_meta, write_file};
use super::shape::{check_data_length, checked_file_shape};
use super::{Array, ArrayView, BlobError, Dtype, meta_path};
use crate::dump::json::PyJson;

fn shape_json(shape: &[usize]) -> PyJson {
    PyJson::List(
        shape
            .iter()
            .map(|&d| int_json(i128::try_from(d).unwrap_or(i128::MAX)))
            .collect(),
    )
}

/// Writes `array` as the original's BINARY dump: the raw bytes to `path`, and
/// `{path}.meta.json` = `{"file_data_shape": [...], "file_data_dtype": "torch.float32"}` (written
/// first, as the original does). Both go through a temporary file renamed into place.
pub fn write_bin(path: &Path, array: &Array) -> Result<(), BlobError> {
    write_bin_view(path, array.view())
}

/// [`write_bin`] of borrowed parts.
pub(crate) fn write_bin_view(path: &Path, array: ArrayView<'_>) -> Result<(), BlobError> {
    array.check().map_err(|e| with_file(path, e))?;
    let meta = PyJson::Object(vec![
        ("file_data_shape".to_owned(), shape_json(array.shape)),
        (
            "file_data_dtype".to_owned(),
            PyJson::Str(array.dtype.torch_name().to_owned()),
        ),
    ]);
    write_file(&meta_path(path), meta.to_python_string().as_bytes())?;
    write_file(path, array.bytes)
}

/// A shape from JSON: a list of non-negative integers.
fn shape_from_json(value: &PyJson) -> Option<Vec<usize>> {
    match value {
        PyJson::List(dims) => dims
            .iter()
            .map(|d| match d {
                PyJson::Int(i) => usize::try_from(*i).ok(),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// Reads a BINARY dump: the bytes at `path` and the shape and dtype of `{path}.meta.json`.
pub fn read_bin(path: &Path) -> Result<Array, BlobError> {
    let meta_file = meta_path(path);
    let meta = read_meta(&meta_file)?;
    let shape = meta
        .get("file_data_shape")
        .and_then(shape_from_json)
        .ok_or_else(|| {
            malformed(
                &meta_file,
                "`file_data_shape` is missing or not a list of non-negative integers",
            )
        })?;
    let dtype = match meta.get("file_data_dtype") {
        Some(PyJson::Str(name)) => Dtype::from_torch_name(name)
            .ok_or_else(|| malformed(&meta_file, format!("unknown `file_data_dtype` {name:?}")))?,
        _ => {
            return Err(malformed(
                &meta_file,
                "`file_data_dtype` is missing or not a string",
            ));
        }
    };
    let expected = checked_file_shape(&meta_file, &shape, dtype)?;
    // The declared size is checked against the file's length before anything is read.
    let (mut file, length) = open_file(path)?;
    check_data_length(path, "bytes", length, expected, &shape, dtype)?;
    let bytes = read_bytes(path, &mut file, expected)?;
    Array::new(dtype, shape, bytes).map_err(|e| with_file(path, e))
}
