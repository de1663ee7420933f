//! `Profiled<B>` over an autodiff backend (`Profiled<Autodiff<B>>`).

use burn_backend::AutodiffBackend;
use burn_backend::tensor::{BoolTensor, FloatTensor, IntTensor, QuantizedTensor};

use super::Profiled;

impl<B: AutodiffBackend> AutodiffBackend for Profiled<B> {
    type InnerBackend = Profiled<B::InnerBackend>;
    type Gradients = B::Gradients;

    fn backward(tensor: FloatTensor<Self>) -> Self::Gradients {
        static OP: crate::probe::Op = crate::probe::Op::new("backward\0");
        let _op = crate::probe::probe!(&OP, B, || Some(B::float_device(&tensor)), Vec::new);
        B::backward(tensor)
    }

    fn grad(
        tensor: &FloatTensor<Self>,
        grads: &Self::Gradients,
    ) -> Option<FloatTensor<Self::InnerBackend>> {
        B::grad(tensor, grads)
    }

    fn grad_remove(
        tensor: &FloatTensor<Self>,
        grads: &mut Self::Gradients,
    ) -> Option<FloatTensor<Self::InnerBackend>> {
        B::grad_remove(tensor, grads)
    }

    fn grad_replace(
        tensor: &FloatTensor<Self>,
        grads: &mut Self::Gradients,
        grad: FloatTensor<Self::InnerBackend>,
    ) {
        B::grad_replace(tensor, grads, grad)
    }

    fn inner(tensor: FloatTensor<Self>) -> FloatTensor<Self::InnerBackend> {
        B::inner(tensor)
    }

    fn int_inner(tensor: IntTensor<Self>) -> IntTensor<Self::InnerBackend> {
        B::int_inner(tensor)
    }

    fn bool_inner(tensor: BoolTensor<Self>) -> BoolTensor<Self::InnerBackend> {
        B::bool_inner(tensor)
    }

    fn q_inner(tensor: QuantizedTensor<Self>) -> QuantizedTensor<Self::InnerBackend> {
        B::q_inner(tensor)
    }

    fn from_inner(tensor: FloatTensor<Self::InnerBackend>) -> FloatTensor<Self> {
        B::from_inner(tensor)
    }

    fn int_from_inner(tensor: IntTensor<Self::InnerBackend>) -> IntTensor<Self> {
        B::int_from_inner(tensor)
    }

    fn bool_from_inner(tensor: BoolTensor<Self::InnerBackend>) -> BoolTensor<Self> {
        B::bool_from_inner(tensor)
    }

    fn q_from_inner(tensor: QuantizedTensor<Self::InnerBackend>) -> QuantizedTensor<Self> {
        B::q_from_inner(tensor)
    }

    #[cfg(feature = "distributed")]
    fn set_distributed_params(
        tensor: FloatTensor<Self>,
        param_id: burn_backend::distributed::DistributedParamId,
    ) -> FloatTensor<Self> {
        B::set_distributed_params(tensor, param_id)
    }

    #[cfg(feature = "distributed")]
    fn distributed_params(
        tensor: &FloatTensor<Self>,
    ) -> Option<burn_backend::distributed::DistributedParams> {
        B::distributed_params(tensor)
    }

    #[cfg(feature = "distributed")]
    fn is_distributed(tensor: &FloatTensor<Self>) -> bool {
        B::is_distributed(tensor)
    }
}
