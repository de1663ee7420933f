//! [`Array`], a dense array of any dumped dtype, and its borrowed form.

use super::element::{element_f64, element_int, int_json};
use super::error::invalid;
use super::shape::{byte_length, element_count};
use super::{ArrayElement, BlobError, Dtype};
use crate::dump::json::{NumberValues, Numbers, PyJson};

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
    pub(super) fn check(&self) -> Result<(), BlobError> {
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
    pub(super) fn values_f64(&self) -> Vec<f64> {
        self.bytes
            .chunks_exact(self.dtype.size())
            .map(|chunk| element_f64(self.dtype, chunk))
            .collect()
    }
}

/// A Burn version's tensor data, which its edition converts: [`Array::from_tensor_data`].
#[doc(hidden)]
pub trait TensorDataOf<Burn> {
    /// The array of the data.
    fn to_array(&self) -> Result<Array, BlobError>;
    /// Its shape.
    fn shape_of(&self) -> Vec<usize>;
    /// Checks that its bytes are exactly what its shape and dtype need (tensor data built by
    /// hand may not be, see [`Array::check_burn_bytes`]); the reason when not.
    fn check(&self) -> Result<(), String>;
    /// Its dtype as `Debug` prints it when it is quantized (no dumped form), `None` otherwise.
    fn quantized(&self) -> Option<String>;
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
    pub fn from_tensor_data<Burn, T: TensorDataOf<Burn> + ?Sized>(
        data: &T,
    ) -> Result<Array, BlobError> {
        data.to_array()
    }

    /// The array of a tensor's raw bytes as Burn stores them: `raw_element_size` bytes an
    /// element, which for a bool is any non-zero byte for `true` (Burn stores bools in one or
    /// four bytes); other dtypes are taken as they are.
    #[doc(hidden)]
    pub fn from_burn_bytes(
        dtype: Dtype,
        raw_element_size: usize,
        shape: Vec<usize>,
        raw: Vec<u8>,
    ) -> Result<Array, BlobError> {
        let bytes = match dtype {
            Dtype::Bool => raw
                .chunks(raw_element_size.max(1))
                .map(|chunk| u8::from(chunk.iter().any(|b| *b != 0)))
                .collect(),
            _ => raw,
        };
        Array::new(dtype, shape, bytes)
    }

    /// Checks that `byte_len` bytes are exactly what `shape` of `dtype` (`element_size` bytes
    /// an element, as Burn stores it) needs, as tensor data built by hand may not be; the
    /// reason when not.
    #[doc(hidden)]
    pub fn check_burn_bytes(
        shape: &[usize],
        element_size: usize,
        byte_len: usize,
        dtype: impl std::fmt::Debug,
    ) -> Result<(), String> {
        match element_count(shape).and_then(|n| n.checked_mul(element_size)) {
            Some(needed) if needed == byte_len => Ok(()),
            Some(needed) => Err(format!(
                "{byte_len} bytes, but shape {shape:?} of {dtype:?} needs {needed}"
            )),
            None => Err(format!(
                "shape {shape:?} of {dtype:?} has more bytes than memory can hold"
            )),
        }
    }

    /// What a quantized tensor, which has no dumped form, is refused with.
    #[doc(hidden)]
    pub fn quantized(dtype: impl std::fmt::Debug) -> BlobError {
        invalid(format!(
            "cannot dump a tensor of dtype {dtype:?}: quantized tensors have no dumped form; \
             dequantize it first"
        ))
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
        self.clone().into_py_json()
    }

    /// [`Array::to_py_json`], taking the array: a `uint8` array (an image) keeps its bytes as
    /// they are, one a pixel, with no copy.
    pub fn into_py_json(self) -> PyJson {
        if self.dtype == Dtype::U8 && !self.shape.is_empty() {
            return PyJson::Numbers(Numbers {
                shape: self.shape,
                values: NumberValues::U8(self.bytes),
            });
        }
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

#[cfg(test)]
mod tests {
    use half::f16;

    use super::*;

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

    /// Two 16000x16000 grey images took 4.25 GB as JSON numbers of eight bytes a pixel: a
    /// `uint8` array (an image's pixels) stays a byte an element, equal to the ints it stands
    /// for.
    #[test]
    fn a_uint8_array_keeps_a_byte_an_element_and_equals_its_ints() {
        let pixels: Vec<u8> = (0..=255).collect();
        let array = Array::from_values(&[16, 16], &pixels).unwrap();
        let json = array.clone().into_py_json();
        let PyJson::Numbers(numbers) = &json else {
            panic!("flat numbers: {json:?}");
        };
        assert!(
            matches!(&numbers.values, NumberValues::U8(bytes) if bytes.len() == 256),
            "a byte a pixel"
        );
        let ints: Vec<i64> = (0..=255).collect();
        let as_ints = Array::from_values(&[16, 16], &ints).unwrap().to_py_json();
        assert_eq!(json, as_ints, "equal to the same values as ints");
        assert_eq!(as_ints, json, "both ways");
        assert_eq!(
            json.to_python_string(),
            as_ints.to_python_string(),
            "the same JSON"
        );
    }

    #[test]
    fn burn_bytes_convert_including_four_byte_bools() {
        let array =
            Array::from_burn_bytes(Dtype::Bool, 4, vec![2], vec![0, 0, 0, 1, 0, 0, 0, 0]).unwrap();
        assert_eq!(array.bytes, vec![1, 0]);
        let half = [f16::from_f32(1.5), f16::from_f32(-2.0)];
        let raw = half.iter().flat_map(|h| h.to_le_bytes()).collect();
        let array = Array::from_burn_bytes(Dtype::F16, 2, vec![2, 1], raw).unwrap();
        assert_eq!(array.values_f64(), vec![1.5, -2.0]);
    }
}
