//! The roofline's peaks measured through the session's backend and device
//! (`[roofline] calibrate`), with the core's [`Calibration::through_tensors`].

use burn::tensor::Tensor;
use burn::tensor::backend::Backend;
use burn_profiled_core::roofline::Calibration;

/// Measures `device`'s peaks through `B`; an error says why it could not.
pub(crate) fn calibrate<B: Backend>(device: &B::Device) -> Result<Calibration, String> {
    Calibration::through_tensors(
        || B::sync(device).map_err(|error| format!("the device failed: {error:?}")),
        |n| {
            let a = Tensor::<B, 2>::ones([n, n], device);
            let dtype = dtype_name(a.dtype());
            (a, dtype)
        },
        |a| a.clone().matmul(a.clone()),
        |len| {
            let x = Tensor::<B, 1>::ones([len], device);
            let dtype = x.dtype();
            (x, dtype_name(dtype), dtype.size() as u64)
        },
        |x| x.add_scalar(1.0),
    )
}

fn dtype_name(dtype: burn::tensor::DType) -> String {
    format!("{dtype:?}").to_lowercase()
}
