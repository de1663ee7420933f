//! The roofline's peaks measured through the session's device (`[roofline] calibrate`), with
//! the core's [`Calibration::through_tensors`].

use burn::tensor::{DType, Device, Tensor};
use burn_profiled_core::roofline::Calibration;

/// Measures `device`'s peaks; an error says why it could not.
pub(crate) fn calibrate(device: &Device) -> Result<Calibration, String> {
    Calibration::through_tensors(
        || {
            device
                .sync()
                .map_err(|error| format!("the device failed: {error:?}"))
        },
        |n| {
            let a = Tensor::<2>::ones([n, n], device);
            let dtype = dtype_name(a.dtype());
            (a, dtype)
        },
        |a| a.clone().matmul(a.clone()),
        |len| {
            let x = Tensor::<1>::ones([len], device);
            let dtype = x.dtype();
            (x, dtype_name(dtype), dtype.size() as u64)
        },
        |x| x.add_scalar(1.0),
    )
}

fn dtype_name(dtype: DType) -> String {
    format!("{dtype:?}").to_lowercase()
}
