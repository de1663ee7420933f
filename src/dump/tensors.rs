//! Burn 0.21's tensors and tensor data in the core's value tree: read when the dumper takes
//! them, as [`Array`]s of the dumped dtypes.

use std::any::Any;

use burn::tensor::backend::Backend;
use burn::tensor::{BasicOps, Element, Tensor, TensorData};
use burn_profiled_core::dump::blob::Array;
use burn_profiled_core::dump::{
    DumpError, ErasedTensor, TensorLeaf, TensorLeafError, ToDump, Value, leaf_array,
};

pub use crate::tensor_data::Burn021;

/// `data` as the dumper keeps it, or why it cannot be.
fn into_array(data: TensorData) -> Result<Array, TensorLeafError> {
    leaf_array::<Burn021, _>(&data)
}

/// `data` at `path` as the dumper keeps it (a gradient read by the edition), or why not.
pub(crate) fn array_at(data: TensorData, path: &str) -> Result<Array, DumpError> {
    into_array(data).map_err(|error| error.at(path))
}

struct Erased<B: Backend, const D: usize, K: BasicOps<B>>(Tensor<B, D, K>);

impl<B, const D: usize, K> ErasedTensor for Erased<B, D, K>
where
    B: Backend,
    K: BasicOps<B> + 'static,
    K::Elem: Element,
    K::Primitive: Send + 'static,
{
    fn into_array(self: Box<Self>) -> Result<Array, TensorLeafError> {
        into_array(self.0.try_into_data().map_err(TensorLeafError::read)?)
    }

    fn into_primitive(self: Box<Self>) -> Box<dyn Any + Send> {
        Box::new(self.0.into_primitive())
    }
}

/// Tensor values already read (ragged-batch samples): dumped as they are; not usable as
/// gradient inputs.
struct DataTensor(TensorData);

impl ErasedTensor for DataTensor {
    fn into_array(self: Box<Self>) -> Result<Array, TensorLeafError> {
        into_array(self.0)
    }

    fn into_primitive(self: Box<Self>) -> Box<dyn Any + Send> {
        Box::new(self.0)
    }
}

impl ToDump<Burn021> for TensorData {
    fn to_dump(self) -> Value {
        Value::Tensor(TensorLeaf(Box::new(DataTensor(self))))
    }
}

impl<B, const D: usize, K> ToDump<Burn021> for Tensor<B, D, K>
where
    B: Backend,
    K: BasicOps<B> + 'static,
    K::Elem: Element,
    K::Primitive: Send + 'static,
{
    fn to_dump(self) -> Value {
        Value::Tensor(TensorLeaf(Box::new(Erased(self))))
    }
}

impl<B, const D: usize, K> ToDump<Burn021> for &Tensor<B, D, K>
where
    B: Backend,
    K: BasicOps<B> + 'static,
    K::Elem: Element,
    K::Primitive: Send + 'static,
{
    fn to_dump(self) -> Value {
        self.clone().to_dump()
    }
}
