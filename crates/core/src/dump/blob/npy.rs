//! NumPy `.npy` files, written as `numpy.save` writes them and read back.

use std::path::Path;

use half::bf16;

use super::element::le_bytes;
use super::error::{malformed, with_file};
use super::file::{open_file, read_bytes, write_file_parts};
use super::npy_header::parse_npy_header;
use super::shape::{check_data_length, checked_file_shape};
use super::{Array, ArrayView, BlobError, Dtype};

const NPY_MAGIC: &[u8] = b"\x93NUMPY";

/// NumPy's `str(shape)` of a tuple: `()`, `(3,)`, `(2, 3)`.
fn python_tuple(shape: &[usize]) -> String {
    match shape {
        [single] => format!("({single},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Writes `array` as `numpy.save` does: NPY 1.0 (2.0 if the header needs it), header padded
/// with spaces to a multiple of 64 bytes. bfloat16 is widened to `<f4`.
pub fn write_npy(path: &Path, array: &Array) -> Result<(), BlobError> {
    write_npy_view(path, array.view())
}

/// [`write_npy`] of borrowed parts.
pub(crate) fn write_npy_view(path: &Path, array: ArrayView<'_>) -> Result<(), BlobError> {
    array.check().map_err(|e| with_file(path, e))?;
    let widened;
    let array = if array.dtype == Dtype::BF16 {
        let values: Vec<f32> = array
            .bytes
            .chunks_exact(2)
            .map(|chunk| bf16::from_le_bytes(le_bytes(chunk)).to_f32())
            .collect();
        widened = Array::from_values(array.shape, &values).map_err(|e| with_file(path, e))?;
        widened.view()
    } else {
        array
    };
    let descr = array.dtype.numpy_descr().unwrap_or("<f4");
    let mut header = format!(
        "{{'descr': '{descr}', 'fortran_order': False, 'shape': {}, }}",
        python_tuple(array.shape)
    );
    // Version 1.0 has a u16 header length and a 10-byte preamble; 2.0 a u32 and 12 bytes.
    let fits_v1 = header.len() + 1 + 10 + 63 <= usize::from(u16::MAX);
    let preamble = if fits_v1 { 10 } else { 12 };
    let total = (preamble + header.len() + 1).div_ceil(64) * 64;
    let padding = total - preamble - header.len() - 1;
    header.extend(std::iter::repeat_n(' ', padding));
    header.push('\n');
    let mut bytes = Vec::with_capacity(total);
    bytes.extend_from_slice(NPY_MAGIC);
    if fits_v1 {
        bytes.extend_from_slice(&[1, 0]);
        let length =
            u16::try_from(header.len()).map_err(|_| malformed(path, "npy header too long"))?;
        bytes.extend_from_slice(&length.to_le_bytes());
    } else {
        bytes.extend_from_slice(&[2, 0]);
        let length =
            u32::try_from(header.len()).map_err(|_| malformed(path, "npy header too long"))?;
        bytes.extend_from_slice(&length.to_le_bytes());
    }
    bytes.extend_from_slice(header.as_bytes());
    write_file_parts(path, &[&bytes, array.bytes])
}

/// Reads a `.npy` file: versions 1.0, 2.0 and 3.0, C order, little-endian bool, integer and
/// float descrs.
pub fn read_npy(path: &Path) -> Result<Array, BlobError> {
    // The header, then the data once its declared size matches the file's length.
    let (mut file, length) = open_file(path)?;
    let mut preamble = read_bytes(path, &mut file, length.min(10))?;
    // Versions 2 and 3 have a 4-byte header length where version 1 has 2.
    if preamble.starts_with(NPY_MAGIC) && matches!(preamble.get(6), Some(2 | 3)) {
        preamble.extend(read_bytes(
            path,
            &mut file,
            length.min(12) - preamble.len(),
        )?);
    }
    let rest = preamble
        .strip_prefix(NPY_MAGIC)
        .ok_or_else(|| malformed(path, "not an .npy file (no \\x93NUMPY magic)"))?;
    let (header_start, header_length) = match rest {
        [1, _, a, b, ..] => (10usize, usize::from(u16::from_le_bytes([*a, *b]))),
        [2 | 3, _, a, b, c, d, ..] => {
            let length = u32::from_le_bytes([*a, *b, *c, *d]);
            (12, usize::try_from(length).unwrap_or(usize::MAX))
        }
        [major, minor, ..] => {
            return Err(malformed(
                path,
                format!("unsupported .npy format version {major}.{minor}"),
            ));
        }
        _ => return Err(malformed(path, "truncated .npy preamble")),
    };
    let header_end = header_start
        .checked_add(header_length)
        .filter(|&end| end <= length)
        .ok_or_else(|| malformed(path, "truncated .npy header"))?;
    let header = read_bytes(path, &mut file, header_length)?;
    let (dtype, shape) = parse_npy_header(&header)
        .map_err(|reason| malformed(path, format!("bad .npy header: {reason}")))?;
    let expected = checked_file_shape(path, &shape, dtype)?;
    check_data_length(
        path,
        "data bytes",
        length - header_end,
        expected,
        &shape,
        dtype,
    )?;
    let data = read_bytes(path, &mut file, expected)?;
    let bytes = if dtype == Dtype::Bool {
        data.iter().map(|b| u8::from(*b != 0)).collect()
    } else {
        data
    };
    Array::new(dtype, shape, bytes).map_err(|e| with_file(path, e))
}
