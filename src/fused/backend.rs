//! `Profiled<CubeBackend<..>>` as a fusion backend: burn-fusion's IR handles are CubeCL's,
//! and its runtime is [`ProfiledCubeRuntime`].

use burn_backend::DType;
use burn_backend::tensor::{BoolTensor, FloatTensor, IntTensor, QuantizedTensor};
use burn_cubecl::{BoolElement, CubeBackend, CubeRuntime, FloatElement, IntElement};
use burn_cubecl_fusion::CubeFusionHandle;
use burn_fusion::FusionBackend;
use burn_ir::{BackendIr, TensorHandle};

use super::ProfiledCubeRuntime;
use super::runtime;
use crate::Profiled;
use crate::probe::{self, Op};

type Cube<R, F, I, BT> = CubeBackend<R, F, I, BT>;

impl<R: CubeRuntime, F: FloatElement, I: IntElement, BT: BoolElement> BackendIr
    for Profiled<Cube<R, F, I, BT>>
{
    type Handle = CubeFusionHandle<R>;

    fn float_tensor(handle: TensorHandle<Self::Handle>) -> FloatTensor<Self> {
        Cube::<R, F, I, BT>::float_tensor(handle)
    }

    fn int_tensor(handle: TensorHandle<Self::Handle>) -> IntTensor<Self> {
        Cube::<R, F, I, BT>::int_tensor(handle)
    }

    fn bool_tensor(handle: TensorHandle<Self::Handle>) -> BoolTensor<Self> {
        Cube::<R, F, I, BT>::bool_tensor(handle)
    }

    fn quantized_tensor(handle: TensorHandle<Self::Handle>) -> QuantizedTensor<Self> {
        Cube::<R, F, I, BT>::quantized_tensor(handle)
    }

    fn float_tensor_handle(tensor: FloatTensor<Self>) -> Self::Handle {
        // Tensors from data come this way on the registering thread, before its first ops.
        runtime::install_registration::<R>(&tensor.device);
        Cube::<R, F, I, BT>::float_tensor_handle(tensor)
    }

    fn int_tensor_handle(tensor: IntTensor<Self>) -> Self::Handle {
        runtime::install_registration::<R>(&tensor.device);
        Cube::<R, F, I, BT>::int_tensor_handle(tensor)
    }

    fn bool_tensor_handle(tensor: BoolTensor<Self>) -> Self::Handle {
        runtime::install_registration::<R>(&tensor.device);
        Cube::<R, F, I, BT>::bool_tensor_handle(tensor)
    }

    fn quantized_tensor_handle(tensor: QuantizedTensor<Self>) -> Self::Handle {
        runtime::install_registration::<R>(&tensor.device);
        Cube::<R, F, I, BT>::quantized_tensor_handle(tensor)
    }
}

impl<R: CubeRuntime, F: FloatElement, I: IntElement, BT: BoolElement> FusionBackend
    for Profiled<Cube<R, F, I, BT>>
{
    type FusionRuntime = ProfiledCubeRuntime<R>;
    type FullPrecisionBackend = Profiled<Cube<R, f32, i32, BT>>;

    fn cast_float(tensor: FloatTensor<Self>, dtype: DType) -> Self::Handle {
        static OP: Op = Op::new("cast_float\0");
        let _op = probe::probe!(
            &OP,
            Cube<R, F, I, BT>,
            || Some(tensor.device.clone()),
            || vec![probe::Arg::tensor(&tensor)]
        );
        <Cube<R, F, I, BT> as FusionBackend>::cast_float(tensor, dtype)
    }
}
