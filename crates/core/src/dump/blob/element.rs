//! Single elements: Rust types an array is built from, and elements read back from bytes.

use half::{bf16, f16};

use super::Dtype;
use crate::dump::json::PyJson;

/// An element type an [`Array`](super::Array) can be built from.
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
pub(super) fn le_bytes<const N: usize>(chunk: &[u8]) -> [u8; N] {
    let mut bytes = [0u8; N];
    for (out, byte) in bytes.iter_mut().zip(chunk) {
        *out = *byte;
    }
    bytes
}

/// One element, as a number (bool as 0/1).
pub(super) fn element_f64(dtype: Dtype, chunk: &[u8]) -> f64 {
    match dtype {
        Dtype::F16 => f16::from_le_bytes(le_bytes(chunk)).to_f64(),
        Dtype::BF16 => bf16::from_le_bytes(le_bytes(chunk)).to_f64(),
        Dtype::F32 => f64::from(f32::from_le_bytes(le_bytes(chunk))),
        Dtype::F64 => f64::from_le_bytes(le_bytes(chunk)),
        _ => element_int(dtype, chunk).map_or(f64::NAN, |i| i as f64),
    }
}

/// One element of an integer or bool dtype, exactly; `None` for floats.
pub(super) fn element_int(dtype: Dtype, chunk: &[u8]) -> Option<i128> {
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
pub(super) fn int_json(value: i128) -> PyJson {
    i64::try_from(value).map_or(PyJson::Float(value as f64), PyJson::Int)
}
