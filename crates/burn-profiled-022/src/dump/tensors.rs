//! Burn 0.22's tensors and tensor data in the core's value tree: read when the dumper takes
//! them, as [`Array`]s of the dumped dtypes, in the same files as Burn 0.21's.

use std::any::{Any, TypeId};

use burn::tensor::kind::Basic;
use burn::tensor::{DType, Float, Tensor, TensorData};
use burn_profiled_core::dump::blob::{Array, BlobError, DtypeOf, TensorDataOf};
use burn_profiled_core::dump::{
    DumpError, ErasedTensor, TensorLeaf, TensorLeafError, ToDump, Value, leaf_array,
};

use super::grad_of::GradOf;

/// What this edition's tensors implement the core's conversions for (the compiler infers it).
#[doc(hidden)]
pub enum Burn022 {}

burn_profiled_core::dtype_of_burn!(DType, Burn022);

impl TensorDataOf<Burn022> for TensorData {
    fn to_array(&self) -> Result<Array, BlobError> {
        let dtype = self.dtype();
        let dumped = dtype.dumped().ok_or_else(|| Array::quantized(dtype))?;
        Array::from_burn_bytes(
            dumped,
            dtype.size(),
            self.shape().to_vec(),
            self.as_bytes().to_vec(),
        )
    }

    fn shape_of(&self) -> Vec<usize> {
        self.shape().to_vec()
    }

    fn check(&self) -> Result<(), String> {
        Array::check_burn_bytes(
            &self.shape_of(),
            self.dtype().size(),
            self.as_bytes().len(),
            self.dtype(),
        )
    }

    fn quantized(&self) -> Option<String> {
        let dtype = self.dtype();
        matches!(dtype, DType::QFloat(_)).then(|| format!("{dtype:?}"))
    }
}

fn into_array(data: TensorData) -> Result<Array, TensorLeafError> {
    leaf_array::<Burn022, _>(&data)
}

/// `data` at `path` as the dumper keeps it (a gradient), or why not.
pub(crate) fn array_at(data: TensorData, path: &str) -> Result<Array, DumpError> {
    into_array(data).map_err(|error| error.at(path))
}

struct Erased<const D: usize, K: Basic>(Tensor<D, K>);

impl<const D: usize, K: Basic + 'static> ErasedTensor for Erased<D, K>
where
    Tensor<D, K>: Send,
{
    fn into_array(self: Box<Self>) -> Result<Array, TensorLeafError> {
        into_array(self.0.try_into_data().map_err(TensorLeafError::read)?)
    }

    fn into_primitive(self: Box<Self>) -> Box<dyn Any + Send> {
        // Only float tensors have gradients; int and bool ones dump as untracked.
        let float = (TypeId::of::<K>() == TypeId::of::<Float>())
            .then(|| {
                (Box::new(self.0) as Box<dyn Any>)
                    .downcast::<Tensor<D, Float>>()
                    .ok()
            })
            .flatten();
        Box::new(match float {
            Some(tensor) => GradOf::float(*tensor),
            None => GradOf::untracked(),
        })
    }
}

/// Tensor values already read: dumped as they are; not usable as gradient inputs.
struct DataTensor(TensorData);

impl ErasedTensor for DataTensor {
    fn into_array(self: Box<Self>) -> Result<Array, TensorLeafError> {
        into_array(self.0)
    }

    fn into_primitive(self: Box<Self>) -> Box<dyn Any + Send> {
        Box::new(GradOf::untracked())
    }
}

impl ToDump<Burn022> for TensorData {
    fn to_dump(self) -> Value {
        Value::Tensor(TensorLeaf(Box::new(DataTensor(self))))
    }
}

impl<const D: usize, K: Basic + 'static> ToDump<Burn022> for Tensor<D, K>
where
    Tensor<D, K>: Send,
{
    fn to_dump(self) -> Value {
        Value::Tensor(TensorLeaf(Box::new(Erased(self))))
    }
}

impl<const D: usize, K: Basic + 'static> ToDump<Burn022> for &Tensor<D, K>
where
    Tensor<D, K>: Send,
{
    fn to_dump(self) -> Value {
        self.clone().to_dump()
    }
}
