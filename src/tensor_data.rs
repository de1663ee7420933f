//! Burn 0.21's tensor data as the core's [`Array`]s (what the dumps write and the first NaN's
//! inputs are kept as): a leaf the dumper and the op path both use.

use burn::tensor::{DType, TensorData};
use burn_profiled_core::dump::blob::{Array, BlobError, DtypeOf, TensorDataOf};

/// What this edition's tensors implement the core's conversions for (the compiler infers it).
#[doc(hidden)]
pub enum Burn021 {}

burn_profiled_core::dtype_of_burn!(DType, Burn021);

impl TensorDataOf<Burn021> for TensorData {
    fn to_array(&self) -> Result<Array, BlobError> {
        let dtype = self
            .dtype
            .dumped()
            .ok_or_else(|| Array::quantized(self.dtype))?;
        Array::from_burn_bytes(
            dtype,
            self.dtype.size(),
            self.shape.to_vec(),
            self.as_bytes().to_vec(),
        )
    }

    fn shape_of(&self) -> Vec<usize> {
        self.shape.to_vec()
    }

    fn check(&self) -> Result<(), String> {
        Array::check_burn_bytes(
            &self.shape_of(),
            self.dtype.size(),
            self.as_bytes().len(),
            self.dtype,
        )
    }

    fn quantized(&self) -> Option<String> {
        matches!(self.dtype, DType::QFloat(_)).then(|| format!("{:?}", self.dtype))
    }
}
