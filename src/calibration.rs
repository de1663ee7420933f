//! The roofline's peaks measured through the session's backend and device
//! (`[roofline] calibrate`), with the core's [`Calibration::through`].

use burn::tensor::Tensor;
use burn::tensor::backend::Backend;
use burn_profiled_core::roofline::Calibration;

/// Measures `device`'s peaks through `B`; an error says why it could not.
pub(crate) fn calibrate<B: Backend>(device: &B::Device) -> Result<Calibration, String> {
    let sync = || B::sync(device).map_err(|error| format!("the device failed: {error:?}"));
    Calibration::through(
        |n| {
            let a = Tensor::<B, 2>::ones([n, n], device);
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
            let x = Tensor::<B, 1>::ones([len], device);
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

fn dtype_name<B: Backend, const D: usize>(tensor: &Tensor<B, D>) -> String {
    format!("{:?}", tensor.dtype()).to_lowercase()
}
