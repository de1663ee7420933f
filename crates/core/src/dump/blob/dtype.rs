//! The element types of dumped arrays, and their PyTorch, NumPy and Burn names.

/// A Burn version's dtype, which its edition maps: [`Dtype::from_burn`].
#[doc(hidden)]
pub trait DtypeOf<Burn> {
    /// The dtype it is dumped as; `None` for quantized dtypes.
    fn dumped(&self) -> Option<Dtype>;
}

/// Implements [`DtypeOf`]`<$burn>` for a Burn version's `DType` (every Burn since 0.20 has
/// the same variants): `Flex32` as f32, every bool storage as `torch.bool`, quantized as none.
#[doc(hidden)]
#[macro_export]
macro_rules! dtype_of_burn {
    ($dtype:ty, $burn:ty) => {
        impl $crate::dump::blob::DtypeOf<$burn> for $dtype {
            fn dumped(&self) -> Option<$crate::dump::blob::Dtype> {
                use $crate::dump::blob::Dtype;
                Some(match self {
                    Self::F64 => Dtype::F64,
                    Self::F32 | Self::Flex32 => Dtype::F32,
                    Self::F16 => Dtype::F16,
                    Self::BF16 => Dtype::BF16,
                    Self::I64 => Dtype::I64,
                    Self::I32 => Dtype::I32,
                    Self::I16 => Dtype::I16,
                    Self::I8 => Dtype::I8,
                    Self::U64 => Dtype::U64,
                    Self::U32 => Dtype::U32,
                    Self::U16 => Dtype::U16,
                    Self::U8 => Dtype::U8,
                    Self::Bool(_) => Dtype::Bool,
                    Self::QFloat(_) => return None,
                })
            }
        }
    };
}

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
    pub fn from_burn<Burn, T: DtypeOf<Burn>>(dtype: T) -> Option<Dtype> {
        dtype.dumped()
    }
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
}
