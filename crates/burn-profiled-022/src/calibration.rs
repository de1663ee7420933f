//! The roofline's peaks measured through the session's device
//! (`[roofline] calibrate`), with the core's [`Calibration::through`].

use burn::tensor::{Device, Tensor};
use burn_profiled_core::roofline::Calibration;

/// Measures `device`'s peaks; an error says why it could not.
pub(crate) fn calibrate(device: &Device) -> Result<Calibration, String> {
    let sync = || {
        device
            .sync()
            .map_err(|error| format!("the device failed: {error:?}"))
    };
    Calibration::through(
        |n| {
            let a = Tensor::<2>::ones([n, n], device);
            let dtype = dtype_name(&a);
            let run = move || {
                let product = a.clone().matmul(a.clone());
                let synced = sync();
                drop(product);
                synced
            };
            (dtype, run)
        },
        |len| {
            let x = Tensor::<1>::ones([len], device);
            let (dtype, elem_bytes) = (dtype_name(&x), x.dtype().size() as u64);
            let mut held = Some(x);
            let run = move || {
                let x = held
                    .take()
                    .ok_or_else(|| "the tensor was lost in an earlier run".to_owned())?;
                let sum = x.add_scalar(1.0);
                let synced = sync();
                held = Some(sum);
                synced
            };
            (dtype, elem_bytes, run)
        },
    )
}

fn dtype_name<const D: usize>(tensor: &Tensor<D>) -> String {
    format!("{:?}", tensor.dtype()).to_lowercase()
}
