//! Element counts and byte lengths of shapes, and the checks of shapes read from files.

use std::path::Path;

use super::error::malformed;
use super::{BlobError, Dtype};

/// The most dimensions a blob file may declare (NumPy's own limit).
pub const MAX_RANK: usize = 64;

/// Checks a shape read from `path`: at most [`MAX_RANK`] dimensions, and an element count and
/// byte length that fit in memory. Returns the byte length.
pub(super) fn checked_file_shape(
    path: &Path,
    shape: &[usize],
    dtype: Dtype,
) -> Result<usize, BlobError> {
    if shape.len() > MAX_RANK {
        return Err(malformed(
            path,
            format!(
                "the shape has {} dimensions; at most {MAX_RANK} are supported",
                shape.len()
            ),
        ));
    }
    byte_length(shape, dtype).ok_or_else(|| {
        malformed(
            path,
            format!("shape {shape:?} has more elements than memory can hold"),
        )
    })
}

/// Checks that a file's `length` bytes (`what`: "bytes", "data bytes") are the `expected` of
/// its declared `shape` and `dtype`.
pub(super) fn check_data_length(
    path: &Path,
    what: &str,
    length: usize,
    expected: usize,
    shape: &[usize],
    dtype: Dtype,
) -> Result<(), BlobError> {
    if length == expected {
        return Ok(());
    }
    Err(malformed(
        path,
        format!(
            "{length} {what}, but shape {shape:?} of {} needs {expected}",
            dtype.torch_name()
        ),
    ))
}

/// The number of elements of `shape`, `None` if it overflows.
pub fn element_count(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |n, d| n.checked_mul(*d))
}

/// The byte length of `shape` elements of `dtype`, `None` if it overflows.
pub(super) fn byte_length(shape: &[usize], dtype: Dtype) -> Option<usize> {
    element_count(shape)?.checked_mul(dtype.size())
}
