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

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use burn::tensor::{BoolStore, DType, TensorData};
use half::{bf16, f16};

use super::json::{NumberValues, Numbers, PyJson};
use crate::files::write_atomically;

/// Element types of dumped arrays, named as PyTorch names them (`torch.float32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// IEEE half precision, `torch.float16`.
    F16,
    /// bfloat16, `torch.bfloat16` (NumPy has none: `.npy` files widen it to f32).
    BF16,
    /// `torch.float32`.
    F32,
    /// `torch.float64`.
    F64,
    /// `torch.int8`.
    I8,
    /// `torch.int16`.
    I16,
    /// `torch.int32`.
    I32,
    /// `torch.int64`.
    I64,
    /// `torch.uint8`.
    U8,
    /// `torch.uint16`.
    U16,
    /// `torch.uint32`.
    U32,
    /// `torch.uint64`.
    U64,
    /// `torch.bool`, one byte per element, 0 or 1.
    Bool,
}

/// Every dtype, with its torch name and NumPy descr (`None`: not representable in `.npy`).
const DTYPE_NAMES: [(Dtype, &str, Option<&str>); 13] = [
    (Dtype::F16, "torch.float16", Some("<f2")),
    (Dtype::BF16, "torch.bfloat16", None),
    (Dtype::F32, "torch.float32", Some("<f4")),
    (Dtype::F64, "torch.float64", Some("<f8")),
    (Dtype::I8, "torch.int8", Some("|i1")),
    (Dtype::I16, "torch.int16", Some("<i2")),
    (Dtype::I32, "torch.int32", Some("<i4")),
    (Dtype::I64, "torch.int64", Some("<i8")),
    (Dtype::U8, "torch.uint8", Some("|u1")),
    (Dtype::U16, "torch.uint16", Some("<u2")),
    (Dtype::U32, "torch.uint32", Some("<u4")),
    (Dtype::U64, "torch.uint64", Some("<u8")),
    (Dtype::Bool, "torch.bool", Some("|b1")),
];

impl Dtype {
    /// Every dtype.
    pub const ALL: [Dtype; 13] = [
        Dtype::F16,
        Dtype::BF16,
        Dtype::F32,
        Dtype::F64,
        Dtype::I8,
        Dtype::I16,
        Dtype::I32,
        Dtype::I64,
        Dtype::U8,
        Dtype::U16,
        Dtype::U32,
        Dtype::U64,
        Dtype::Bool,
    ];

    fn names(self) -> (&'static str, Option<&'static str>) {
        DTYPE_NAMES
            .iter()
            .find(|(dtype, _, _)| *dtype == self)
            .map_or(("", None), |(_, torch, numpy)| (*torch, *numpy))
    }

    /// PyTorch's name, as `str(tensor.dtype)` prints it: `torch.float32`.
    pub fn torch_name(self) -> &'static str {
        self.names().0
    }

    /// The dtype PyTorch calls `name` (`torch.float32`).
    pub fn from_torch_name(name: &str) -> Option<Dtype> {
        DTYPE_NAMES
            .iter()
            .find(|(_, torch, _)| *torch == name)
            .map(|(dtype, _, _)| *dtype)
    }

    /// NumPy's little-endian `descr` (`<f4`, `|u1`); `None` for bfloat16, which NumPy lacks.
    pub fn numpy_descr(self) -> Option<&'static str> {
        self.names().1
    }

    /// The dtype of a NumPy `descr`, little-endian (`<`), native-order (`=`) or byte-sized
    /// (`|`); `None` for big-endian or unknown descrs.
    pub fn from_numpy_descr(descr: &str) -> Option<Dtype> {
        let (order, code) = descr.split_at_checked(1)?;
        if !matches!(order, "<" | "|" | "=") {
            return None;
        }
        DTYPE_NAMES
            .iter()
            .find(|(_, _, numpy)| numpy.is_some_and(|n| n.get(1..) == Some(code)))
            .map(|(dtype, _, _)| *dtype)
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Dtype::I8 | Dtype::U8 | Dtype::Bool => 1,
            Dtype::F16 | Dtype::BF16 | Dtype::I16 | Dtype::U16 => 2,
            Dtype::F32 | Dtype::I32 | Dtype::U32 => 4,
            Dtype::F64 | Dtype::I64 | Dtype::U64 => 8,
        }
    }

    /// Whether this is a floating-point dtype.
    pub fn is_float(self) -> bool {
        matches!(self, Dtype::F16 | Dtype::BF16 | Dtype::F32 | Dtype::F64)
    }

    /// The dtype a Burn tensor of `dtype` is dumped as: `Flex32` as f32, every bool storage as
    /// `torch.bool`; `None` for quantized dtypes.
    pub fn from_burn(dtype: DType) -> Option<Dtype> {
        Some(match dtype {
            DType::F64 => Dtype::F64,
            DType::F32 | DType::Flex32 => Dtype::F32,
            DType::F16 => Dtype::F16,
            DType::BF16 => Dtype::BF16,
            DType::I64 => Dtype::I64,
            DType::I32 => Dtype::I32,
            DType::I16 => Dtype::I16,
            DType::I8 => Dtype::I8,
            DType::U64 => Dtype::U64,
            DType::U32 => Dtype::U32,
            DType::U16 => Dtype::U16,
            DType::U8 => Dtype::U8,
            DType::Bool(_) => Dtype::Bool,
            DType::QFloat(_) => return None,
        })
    }
}

/// A problem with a blob file or an array: every message says what is wrong, and names the
/// file where there is one.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    /// The file could not be read or written.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The file exists but its contents are not what they must be.
    #[error("{}: {reason}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The array cannot be written to the file in the requested form (the original's image
    /// assertions, with its wording).
    #[error("{message}")]
    Unwritable {
        /// The file that was to be written.
        path: PathBuf,
        /// The whole message, file included.
        message: String,
    },
    /// An array in memory is unusable: its bytes do not match its shape, a permutation is
    /// invalid, or a Burn dtype has no dumped form.
    #[error("{reason}")]
    InvalidArray {
        /// What is wrong.
        reason: String,
    },
}

fn malformed(path: &Path, reason: impl Into<String>) -> BlobError {
    BlobError::Malformed {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

fn invalid(reason: impl Into<String>) -> BlobError {
    BlobError::InvalidArray {
        reason: reason.into(),
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, BlobError> {
    std::fs::read(path).map_err(|source| BlobError::Io {
        action: "read",
        path: path.to_owned(),
        source,
    })
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), BlobError> {
    write_file_parts(path, &[bytes])
}

/// One file from several parts, without joining them in memory first.
fn write_file_parts(path: &Path, parts: &[&[u8]]) -> Result<(), BlobError> {
    write_atomically(path, parts).map_err(|source| BlobError::Io {
        action: "write",
        path: path.to_owned(),
        source,
    })
}

/// `{path}.meta.json`, the sidecar of a `.bin` or `.png` blob.
pub fn meta_path(path: &Path) -> PathBuf {
    let mut name = OsString::from(path.as_os_str());
    name.push(".meta.json");
    PathBuf::from(name)
}

/// The most dimensions a blob file may declare (NumPy's own limit).
pub const MAX_RANK: usize = 64;

/// Checks a shape read from `path`: at most [`MAX_RANK`] dimensions, and an element count and
/// byte length that fit in memory. Returns the byte length.
fn checked_file_shape(path: &Path, shape: &[usize], dtype: Dtype) -> Result<usize, BlobError> {
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
fn check_data_length(
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
fn element_count(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |n, d| n.checked_mul(*d))
}

/// The byte length of `shape` elements of `dtype`, `None` if it overflows.
fn byte_length(shape: &[usize], dtype: Dtype) -> Option<usize> {
    element_count(shape)?.checked_mul(dtype.size())
}

/// An element type an [`Array`] can be built from.
pub trait ArrayElement: Copy {
    /// The array dtype of this element type.
    const DTYPE: Dtype;
    /// Appends the little-endian bytes of `self`.
    fn extend_le(self, out: &mut Vec<u8>);
}

macro_rules! array_elements {
    ($($rust:ty => $dtype:ident),* $(,)?) => {$(
        impl ArrayElement for $rust {
            const DTYPE: Dtype = Dtype::$dtype;
            fn extend_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

array_elements!(
    f16 => F16, bf16 => BF16, f32 => F32, f64 => F64,
    i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
);

impl ArrayElement for bool {
    const DTYPE: Dtype = Dtype::Bool;
    fn extend_le(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
}

/// The first `N` bytes of `chunk`, zero-padded if it is shorter.
fn le_bytes<const N: usize>(chunk: &[u8]) -> [u8; N] {
    let mut bytes = [0u8; N];
    for (out, byte) in bytes.iter_mut().zip(chunk) {
        *out = *byte;
    }
    bytes
}

/// One element, as a number (bool as 0/1).
fn element_f64(dtype: Dtype, chunk: &[u8]) -> f64 {
    match dtype {
        Dtype::F16 => f16::from_le_bytes(le_bytes(chunk)).to_f64(),
        Dtype::BF16 => bf16::from_le_bytes(le_bytes(chunk)).to_f64(),
        Dtype::F32 => f64::from(f32::from_le_bytes(le_bytes(chunk))),
        Dtype::F64 => f64::from_le_bytes(le_bytes(chunk)),
        _ => element_int(dtype, chunk).map_or(f64::NAN, |i| i as f64),
    }
}

/// One element of an integer or bool dtype, exactly; `None` for floats.
fn element_int(dtype: Dtype, chunk: &[u8]) -> Option<i128> {
    Some(match dtype {
        Dtype::I8 => i8::from_le_bytes(le_bytes(chunk)).into(),
        Dtype::I16 => i16::from_le_bytes(le_bytes(chunk)).into(),
        Dtype::I32 => i32::from_le_bytes(le_bytes(chunk)).into(),
        Dtype::I64 => i64::from_le_bytes(le_bytes(chunk)).into(),
        Dtype::U8 => u8::from_le_bytes(le_bytes(chunk)).into(),
        Dtype::U16 => u16::from_le_bytes(le_bytes(chunk)).into(),
        Dtype::U32 => u32::from_le_bytes(le_bytes(chunk)).into(),
        Dtype::U64 => u64::from_le_bytes(le_bytes(chunk)).into(),
        Dtype::Bool => i128::from(chunk.first().is_some_and(|b| *b != 0)),
        Dtype::F16 | Dtype::BF16 | Dtype::F32 | Dtype::F64 => return None,
    })
}

/// An integer as JSON: an int when it fits Python-compatible `i64`, else the nearest float.
fn int_json(value: i128) -> PyJson {
    i64::try_from(value).map_or(PyJson::Float(value as f64), PyJson::Int)
}

/// A dense array: C order, little-endian bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// Element type.
    pub dtype: Dtype,
    /// Dimensions, outermost first; empty for a scalar.
    pub shape: Vec<usize>,
    /// `product(shape) * dtype.size()` bytes, C order, little-endian.
    pub bytes: Vec<u8>,
}

/// An array's parts, borrowed: what the writers need, so that a tensor's bytes are written
/// without a copy.
#[derive(Clone, Copy)]
pub(crate) struct ArrayView<'a> {
    pub dtype: Dtype,
    pub shape: &'a [usize],
    pub bytes: &'a [u8],
}

impl ArrayView<'_> {
    /// Checks that the bytes hold exactly the elements the shape declares.
    fn check(&self) -> Result<(), BlobError> {
        match byte_length(self.shape, self.dtype) {
            None => Err(invalid(format!(
                "shape {:?} of {} has more elements than memory can hold",
                self.shape,
                self.dtype.torch_name()
            ))),
            Some(expected) if expected != self.bytes.len() => Err(invalid(format!(
                "{} bytes do not hold shape {:?} of {}, which needs {expected}",
                self.bytes.len(),
                self.shape,
                self.dtype.torch_name()
            ))),
            Some(_) => Ok(()),
        }
    }

    /// See [`Array::values_f64`].
    fn values_f64(&self) -> Vec<f64> {
        self.bytes
            .chunks_exact(self.dtype.size())
            .map(|chunk| element_f64(self.dtype, chunk))
            .collect()
    }
}

/// Calls `write` with the array of a Burn tensor's data: its own bytes where they are already
/// in the dumped layout (every dtype but bool), else as [`Array::from_tensor_data`] converts them.
pub(crate) fn with_tensor_view<R>(
    data: &TensorData,
    write: impl FnOnce(ArrayView<'_>) -> Result<R, BlobError>,
) -> Result<R, BlobError> {
    match (data.dtype, Dtype::from_burn(data.dtype)) {
        (DType::Bool(_), _) | (_, None) => write(Array::from_tensor_data(data)?.view()),
        (_, Some(dtype)) => write(ArrayView {
            dtype,
            shape: &data.shape,
            bytes: data.as_bytes(),
        }),
    }
}

impl Array {
    /// An array of `bytes`, checked against `shape` and `dtype`.
    pub fn new(dtype: Dtype, shape: Vec<usize>, bytes: Vec<u8>) -> Result<Array, BlobError> {
        let array = Array {
            dtype,
            shape,
            bytes,
        };
        array.check()?;
        Ok(array)
    }

    /// An array of `values`, checked against `shape`.
    pub fn from_values<T: ArrayElement>(shape: &[usize], values: &[T]) -> Result<Array, BlobError> {
        let mut bytes = Vec::with_capacity(values.len() * T::DTYPE.size());
        for value in values {
            value.extend_le(&mut bytes);
        }
        Array::new(T::DTYPE, shape.to_vec(), bytes)
    }

    /// Checks that the bytes hold exactly the elements the shape declares.
    fn check(&self) -> Result<(), BlobError> {
        self.view().check()
    }

    /// The array's parts, borrowed.
    pub(crate) fn view(&self) -> ArrayView<'_> {
        ArrayView {
            dtype: self.dtype,
            shape: &self.shape,
            bytes: &self.bytes,
        }
    }

    /// The array of a Burn tensor's data, in any Burn dtype but the quantized ones. Bool
    /// tensors stored as `u32` become one byte per element.
    pub fn from_tensor_data(data: &TensorData) -> Result<Array, BlobError> {
        let dtype = Dtype::from_burn(data.dtype).ok_or_else(|| {
            invalid(format!(
                "cannot dump a tensor of dtype {:?}: quantized tensors have no dumped form; \
                 dequantize it first",
                data.dtype
            ))
        })?;
        let shape = data.shape.to_vec();
        let raw = data.as_bytes();
        let bytes = match data.dtype {
            DType::Bool(BoolStore::U32) => raw
                .chunks(4)
                .map(|chunk| u8::from(chunk.iter().any(|b| *b != 0)))
                .collect(),
            DType::Bool(_) => raw.iter().map(|b| u8::from(*b != 0)).collect(),
            _ => raw.to_vec(),
        };
        Array::new(dtype, shape, bytes)
    }

    /// The number of elements the shape declares.
    pub fn len(&self) -> usize {
        element_count(&self.shape).unwrap_or(usize::MAX)
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements as numbers, in C order (bool as 0/1; 64-bit integers rounded to the nearest
    /// f64).
    pub fn values_f64(&self) -> Vec<f64> {
        self.view().values_f64()
    }

    /// The number of lists [`Array::to_py_json`] builds (`None` if it overflows): about the
    /// element count for non-empty arrays, but unbounded for empty ones (`(10**12, 0)` holds a
    /// trillion empty lists), so check it before converting a shape read from a file.
    pub fn nested_list_count(&self) -> Option<usize> {
        let mut lists = 0usize;
        let mut level = 1usize;
        for &dim in self.shape.iter().take(self.shape.len().saturating_sub(1)) {
            level = level.checked_mul(dim)?;
            lists = lists.checked_add(level)?;
        }
        if self.shape.is_empty() {
            Some(0)
        } else {
            lists.checked_add(1)
        }
    }

    /// The array as `tensor.tolist()` writes it into JSON: nested lists (a bare number for a
    /// scalar) of floats, ints or bools by dtype, held flat as [`PyJson::Numbers`] (equal to
    /// the nested lists, without a node per element) where the elements are of one kind.
    pub fn to_py_json(&self) -> PyJson {
        let size = self.dtype.size();
        let chunks = || self.bytes.chunks_exact(size);
        let flat = match self.dtype {
            _ if self.shape.is_empty() => None,
            Dtype::Bool => Some(NumberValues::Bool(
                chunks().map(|chunk| chunk[0] != 0).collect(),
            )),
            dtype if dtype.is_float() => Some(NumberValues::Float(
                chunks().map(|chunk| element_f64(dtype, chunk)).collect(),
            )),
            // u64 beyond i64 is written as a float: keep a node per element there.
            dtype => chunks()
                .map(|chunk| element_int(dtype, chunk).and_then(|i| i64::try_from(i).ok()))
                .collect::<Option<Vec<i64>>>()
                .map(NumberValues::Int),
        };
        if let Some(values) = flat {
            return PyJson::Numbers(Numbers {
                shape: self.shape.clone(),
                values,
            });
        }
        let element = |chunk: &[u8]| match self.dtype {
            Dtype::Bool => PyJson::Bool(chunk.first().is_some_and(|b| *b != 0)),
            dtype if dtype.is_float() => PyJson::Float(element_f64(dtype, chunk)),
            dtype => element_int(dtype, chunk).map_or(PyJson::Null, int_json),
        };
        let mut elements = self.bytes.chunks_exact(size).map(element);
        nest(&self.shape, &mut elements)
    }

    /// The array with its axes reordered, as `tensor.permute(axes).contiguous()`: axis `i` of
    /// the result is axis `axes[i]` of `self`.
    pub fn permuted(&self, axes: &[usize]) -> Result<Array, BlobError> {
        self.check()?;
        let rank = self.shape.len();
        let mut seen = vec![false; rank];
        let is_permutation = axes.len() == rank
            && axes
                .iter()
                .all(|&axis| axis < rank && !std::mem::replace(&mut seen[axis], true));
        if !is_permutation {
            return Err(invalid(format!(
                "permute axes {axes:?} are not a permutation of the {rank} axes of shape {:?}",
                self.shape
            )));
        }
        let size = self.dtype.size();
        let mut source_strides = vec![size; rank];
        for axis in (0..rank.saturating_sub(1)).rev() {
            // Saturating: only an empty array can have strides beyond memory, and then none is
            // used.
            source_strides[axis] = source_strides[axis + 1].saturating_mul(self.shape[axis + 1]);
        }
        let shape: Vec<usize> = axes.iter().map(|&axis| self.shape[axis]).collect();
        let strides: Vec<usize> = axes.iter().map(|&axis| source_strides[axis]).collect();
        let mut bytes = Vec::with_capacity(self.bytes.len());
        if !self.bytes.is_empty() {
            let mut index = vec![0usize; rank];
            let mut offset = 0usize;
            loop {
                bytes.extend_from_slice(&self.bytes[offset..offset + size]);
                // Odometer step over the result's index, last axis fastest.
                let mut axis = rank;
                loop {
                    if axis == 0 {
                        return Array::new(self.dtype, shape, bytes);
                    }
                    axis -= 1;
                    index[axis] += 1;
                    offset += strides[axis];
                    if index[axis] < shape[axis] {
                        break;
                    }
                    offset -= strides[axis] * index[axis];
                    index[axis] = 0;
                }
            }
        }
        Array::new(self.dtype, shape, bytes)
    }
}

/// Nested lists of `shape` filled from `elements` in C order.
fn nest(shape: &[usize], elements: &mut dyn Iterator<Item = PyJson>) -> PyJson {
    match shape.split_first() {
        None => elements.next().unwrap_or(PyJson::Null),
        Some((&outer, inner)) => PyJson::List((0..outer).map(|_| nest(inner, elements)).collect()),
    }
}

fn shape_json(shape: &[usize]) -> PyJson {
    PyJson::List(
        shape
            .iter()
            .map(|&d| int_json(i128::try_from(d).unwrap_or(i128::MAX)))
            .collect(),
    )
}

fn with_file(path: &Path, error: BlobError) -> BlobError {
    match error {
        BlobError::InvalidArray { reason } => malformed(path, reason),
        other => other,
    }
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

/// A JSON sidecar: parsed, or `Malformed` naming it.
fn read_meta(path: &Path) -> Result<PyJson, BlobError> {
    let bytes = read_file(path)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| malformed(path, "not UTF-8 text"))?;
    PyJson::parse(text)
        .map(PyJson::expand_numbers)
        .map_err(|e| malformed(path, format!("invalid JSON: {e}")))
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
    let bytes = read_file(path)?;
    check_data_length(path, "bytes", bytes.len(), expected, &shape, dtype)?;
    Array::new(dtype, shape, bytes).map_err(|e| with_file(path, e))
}

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

/// A value of the NPY header's Python dict literal.
#[derive(Debug)]
enum HeaderValue {
    Str(String),
    Bool(bool),
    Tuple(Vec<usize>),
}

/// A reader of the NPY header: a Python dict literal of strings, booleans and int tuples.
struct HeaderParser<'a> {
    text: &'a [u8],
    at: usize,
}

impl HeaderParser<'_> {
    fn skip_space(&mut self) {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.text[self.at..].starts_with(token.as_bytes()) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.skip_space();
        let quote = match self.text.get(self.at) {
            Some(q @ (b'\'' | b'"')) => *q,
            _ => return Err(format!("expected a quoted string at byte {}", self.at)),
        };
        let start = self.at + 1;
        let length = self.text[start..]
            .iter()
            .position(|b| *b == quote)
            .ok_or("unterminated string")?;
        self.at = start + length + 1;
        String::from_utf8(self.text[start..start + length].to_vec())
            .map_err(|_| "a string is not UTF-8".to_owned())
    }

    fn integer(&mut self) -> Result<usize, String> {
        self.skip_space();
        let start = self.at;
        while self.text.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        let digits = std::str::from_utf8(&self.text[start..self.at]).unwrap_or("");
        let value = digits
            .parse::<usize>()
            .map_err(|_| format!("expected a dimension at byte {start}"))?;
        self.eat("L"); // Python 2 longs: `(2L, 3L)`.
        Ok(value)
    }

    fn value(&mut self) -> Result<HeaderValue, String> {
        self.skip_space();
        if self.eat("True") {
            return Ok(HeaderValue::Bool(true));
        }
        if self.eat("False") {
            return Ok(HeaderValue::Bool(false));
        }
        if self.eat("(") {
            let mut dims = Vec::new();
            loop {
                if self.eat(")") {
                    return Ok(HeaderValue::Tuple(dims));
                }
                dims.push(self.integer()?);
                if !self.eat(",") && !self.text[self.at..].starts_with(b")") {
                    return Err(format!(
                        "expected `,` or `)` in the shape at byte {}",
                        self.at
                    ));
                }
            }
        }
        if matches!(self.text.get(self.at), Some(b'\'' | b'"')) {
            return self.string().map(HeaderValue::Str);
        }
        Err(format!(
            "unsupported value at byte {} (structured dtypes are not supported)",
            self.at
        ))
    }

    fn dict(&mut self) -> Result<Vec<(String, HeaderValue)>, String> {
        if !self.eat("{") {
            return Err("the header is not a dict".to_owned());
        }
        let mut entries = Vec::new();
        loop {
            if self.eat("}") {
                break;
            }
            let key = self.string()?;
            if !self.eat(":") {
                return Err(format!("expected `:` after '{key}'"));
            }
            entries.push((key, self.value()?));
            if !self.eat(",") && !self.text[self.at..].starts_with(b"}") {
                return Err(format!("expected `,` or `}}` at byte {}", self.at));
            }
        }
        self.skip_space();
        if self.at != self.text.len() {
            return Err("characters after the header dict".to_owned());
        }
        Ok(entries)
    }
}

/// The dtype and shape of an NPY header.
fn parse_npy_header(text: &[u8]) -> Result<(Dtype, Vec<usize>), String> {
    let entries = HeaderParser { text, at: 0 }.dict()?;
    let find = |key: &str| entries.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let dtype = match find("descr") {
        Some(HeaderValue::Str(descr)) => Dtype::from_numpy_descr(descr).ok_or_else(|| {
            format!(
                "unsupported descr '{descr}' (supported: little-endian bool, integers and \
                 f2/f4/f8)"
            )
        })?,
        _ => return Err("'descr' is missing or not a string".to_owned()),
    };
    match find("fortran_order") {
        Some(HeaderValue::Bool(false)) => {}
        Some(HeaderValue::Bool(true)) => {
            return Err(
                "Fortran-order arrays are not supported; save a C-order array \
                 (numpy.ascontiguousarray)"
                    .to_owned(),
            );
        }
        _ => return Err("'fortran_order' is missing or not True/False".to_owned()),
    }
    match find("shape") {
        Some(HeaderValue::Tuple(shape)) => Ok((dtype, shape.clone())),
        _ => Err("'shape' is missing or not a tuple of integers".to_owned()),
    }
}

/// Reads a `.npy` file: versions 1.0, 2.0 and 3.0, C order, little-endian bool, integer and
/// float descrs.
pub fn read_npy(path: &Path) -> Result<Array, BlobError> {
    let bytes = read_file(path)?;
    let rest = bytes
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
    let header = header_start
        .checked_add(header_length)
        .and_then(|end| bytes.get(header_start..end))
        .ok_or_else(|| malformed(path, "truncated .npy header"))?;
    let (dtype, shape) = parse_npy_header(header)
        .map_err(|reason| malformed(path, format!("bad .npy header: {reason}")))?;
    let data = &bytes[header_start + header_length..];
    let expected = checked_file_shape(path, &shape, dtype)?;
    check_data_length(path, "data bytes", data.len(), expected, &shape, dtype)?;
    let bytes = if dtype == Dtype::Bool {
        data.iter().map(|b| u8::from(*b != 0)).collect()
    } else {
        data.to_vec()
    };
    Array::new(dtype, shape, bytes).map_err(|e| with_file(path, e))
}

/// How the channels of an image dump are to be read, as the original's `IMAGE_*` dump types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// `(H, W, 3)`, channels R, G, B (`Type.IMAGE_RGB`).
    Rgb,
    /// `(H, W, 3)`, channels B, G, R (`Type.IMAGE_BGR`).
    Bgr,
    /// `(H, W)` grey (`Type.IMAGE_I`).
    Intensity,
}

impl ImageFormat {
    /// The `image_format` the sidecar records: `RGB`, `BGR` or `Intensity`.
    pub fn meta_name(self) -> &'static str {
        match self {
            ImageFormat::Rgb => "RGB",
            ImageFormat::Bgr => "BGR",
            ImageFormat::Intensity => "Intensity",
        }
    }

    /// The original's name of the dump type: `Type.IMAGE_RGB`.
    fn dump_type(self) -> &'static str {
        match self {
            ImageFormat::Rgb => "Type.IMAGE_RGB",
            ImageFormat::Bgr => "Type.IMAGE_BGR",
            ImageFormat::Intensity => "Type.IMAGE_I",
        }
    }
}

/// The smallest and largest element as the sidecar's JSON: ints for integer and bool dtypes,
/// floats otherwise. NaNs are ignored, as far as they can be.
fn value_range(array: ArrayView<'_>) -> (f64, f64, PyJson, PyJson) {
    let values = array.values_f64();
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if array.dtype.is_float() {
        return (min, max, PyJson::Float(min), PyJson::Float(max));
    }
    let ints = || {
        array
            .bytes
            .chunks_exact(array.dtype.size())
            .filter_map(|chunk| element_int(array.dtype, chunk))
    };
    let int_min = ints().min().map_or(PyJson::Null, int_json);
    let int_max = ints().max().map_or(PyJson::Null, int_json);
    (min, max, int_min, int_max)
}

/// Writes an image dump as the original does: `image` is `(H, W)` for
/// [`ImageFormat::Intensity`] or `(H, W, 3)` for RGB/BGR, any dtype. Normalised per image over
/// all channels, `(v - min) * (255 / (max - min) if max > min else 1)`, computed in f64 and
/// truncated to `u8`; written as an 8-bit RGB (BGR input swapped so the PNG shows true
/// colours) or grey PNG, with `{path}.meta.json` = `{"original_range": [min, max],
/// "image_format": ...}`.
pub fn write_png(path: &Path, image: &Array, format: ImageFormat) -> Result<(), BlobError> {
    write_png_view(path, image.view(), format)
}

/// [`write_png`] of borrowed parts.
pub(crate) fn write_png_view(
    path: &Path,
    image: ArrayView<'_>,
    format: ImageFormat,
) -> Result<(), BlobError> {
    image.check().map_err(|e| with_file(path, e))?;
    let unwritable = |message: String| BlobError::Unwritable {
        path: path.to_owned(),
        message,
    };
    let file = path.display();
    let wanted_rank = if format == ImageFormat::Intensity {
        2
    } else {
        3
    };
    if image.shape.len() != wanted_rank {
        return Err(unwritable(format!(
            "Number of image dimensions does not match the dump type for file:\n{file}.\nImage data has {} dimensions; dump type is {}.",
            image.shape.len(),
            format.dump_type()
        )));
    }
    if wanted_rank == 3 && image.shape[2] != 3 {
        return Err(unwritable(format!(
            "Color image must have 3 channels, but image to be dumped to:\n{file}\nhas {} channels.",
            image.shape[2]
        )));
    }
    let (height, width) = (image.shape[0], image.shape[1]);
    let (Ok(png_height), Ok(png_width)) = (u32::try_from(height), u32::try_from(width)) else {
        return Err(unwritable(format!(
            "cannot write {file}: a {height}x{width} image is too large for PNG"
        )));
    };
    if image.bytes.is_empty() {
        return Err(unwritable(format!(
            "cannot write {file}: the image of shape {:?} is empty",
            image.shape
        )));
    }
    let (min, max, json_min, json_max) = value_range(image);
    let scale = if max - min > 0.0 {
        255.0 / (max - min)
    } else {
        1.0
    };
    // `as u8` truncates towards zero and saturates (NaN becomes 0), as `astype(np.uint8)` does
    // for values in range.
    let mut pixels: Vec<u8> = image
        .values_f64()
        .into_iter()
        .map(|v| ((v - min) * scale) as u8)
        .collect();
    if format == ImageFormat::Bgr {
        for pixel in pixels.chunks_exact_mut(3) {
            pixel.swap(0, 2);
        }
    }
    let colour = if format == ImageFormat::Intensity {
        image::ExtendedColorType::L8
    } else {
        image::ExtendedColorType::Rgb8
    };
    let mut png = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut png),
        &pixels,
        png_width,
        png_height,
        colour,
    )
    .map_err(|e| unwritable(format!("cannot encode {file} as PNG: {e}")))?;
    write_file(path, &png)?;
    let meta = PyJson::Object(vec![
        (
            "original_range".to_owned(),
            PyJson::List(vec![json_min, json_max]),
        ),
        (
            "image_format".to_owned(),
            PyJson::Str(format.meta_name().to_owned()),
        ),
    ]);
    write_file(&meta_path(path), meta.to_python_string().as_bytes())
}

/// Reads a PNG image dump: its pixels as `u8`, `(H, W)` for grey images (alpha dropped) and
/// `(H, W, 3)` in RGB order otherwise (16-bit images scaled to 8 bits), and its
/// `{path}.meta.json` if there is one (else `Null`).
pub fn read_png(path: &Path) -> Result<(Array, PyJson), BlobError> {
    let bytes = read_file(path)?;
    let reader = image::ImageReader::with_format(io::Cursor::new(bytes), image::ImageFormat::Png);
    let decoded = reader
        .decode()
        .map_err(|e| malformed(path, format!("not a readable PNG: {e}")))?;
    let (height, width) = (decoded.height() as usize, decoded.width() as usize);
    let array = if decoded.color().has_color() {
        Array::new(
            Dtype::U8,
            vec![height, width, 3],
            decoded.to_rgb8().into_raw(),
        )
    } else {
        Array::new(
            Dtype::U8,
            vec![height, width],
            decoded.to_luma8().into_raw(),
        )
    }
    .map_err(|e| with_file(path, e))?;
    let meta_file = meta_path(path);
    let meta = if meta_file.exists() {
        read_meta(&meta_file)?
    } else {
        PyJson::Null
    };
    Ok((array, meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_names_round_trip() {
        for dtype in Dtype::ALL {
            assert_eq!(Dtype::from_torch_name(dtype.torch_name()), Some(dtype));
            if let Some(descr) = dtype.numpy_descr() {
                assert_eq!(Dtype::from_numpy_descr(descr), Some(dtype));
            }
        }
        assert_eq!(Dtype::from_numpy_descr(">f4"), None);
        assert_eq!(Dtype::from_numpy_descr(""), None);
        assert_eq!(Dtype::from_torch_name("torch.complex64"), None);
    }

    #[test]
    fn permutes_like_torch() {
        let values: Vec<i32> = (0..24).collect();
        let array = Array::from_values(&[2, 3, 4], &values).unwrap();
        let permuted = array.permuted(&[2, 0, 1]).unwrap();
        assert_eq!(permuted.shape, vec![4, 2, 3]);
        let out = permuted.values_f64();
        // result[k][i][j] = source[i][j][k] = 12 i + 4 j + k
        for k in 0..4 {
            for i in 0..2 {
                for j in 0..3 {
                    assert_eq!(out[k * 6 + i * 3 + j], (12 * i + 4 * j + k) as f64);
                }
            }
        }
        assert!(array.permuted(&[0, 0, 1]).is_err());
        assert!(array.permuted(&[0, 1]).is_err());
        assert!(array.permuted(&[0, 1, 3]).is_err());
        let empty = Array::from_values::<f32>(&[0, 2], &[]).unwrap();
        assert_eq!(empty.permuted(&[1, 0]).unwrap().shape, vec![2, 0]);
        let scalar = Array::from_values(&[], &[1.5f64]).unwrap();
        assert_eq!(scalar.permuted(&[]).unwrap(), scalar);
    }

    #[test]
    fn nests_like_tolist() {
        let array = Array::from_values(&[2, 0], &[] as &[i64]).unwrap();
        assert_eq!(
            array.to_py_json(),
            PyJson::List(vec![PyJson::List(vec![]), PyJson::List(vec![])])
        );
        let scalar = Array::from_values(&[], &[true]).unwrap();
        assert_eq!(scalar.to_py_json(), PyJson::Bool(true));
        let big = Array::from_values(&[1], &[u64::MAX]).unwrap();
        assert_eq!(
            big.to_py_json(),
            PyJson::List(vec![PyJson::Float(u64::MAX as f64)])
        );
    }

    #[test]
    fn burn_data_converts_including_bool_and_half() {
        let data = TensorData::new(vec![true, false, true], [3]);
        let array = Array::from_tensor_data(&data).unwrap();
        assert_eq!(
            (array.dtype, array.bytes.clone()),
            (Dtype::Bool, vec![1, 0, 1])
        );
        let data = TensorData::new(vec![f16::from_f32(1.5), f16::from_f32(-2.0)], [2, 1]);
        let array = Array::from_tensor_data(&data).unwrap();
        assert_eq!(array.dtype, Dtype::F16);
        assert_eq!(array.shape, vec![2, 1]);
        assert_eq!(array.values_f64(), vec![1.5, -2.0]);
    }
}
