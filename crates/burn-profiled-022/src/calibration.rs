//! The roofline's peaks measured through the session's backend and device
//! (`[roofline] calibrate`): a matmul for the arithmetic rate, an elementwise op over a large
//! tensor for the bandwidth, each grown until a run is long enough to time.

use std::panic::{AssertUnwindSafe, catch_unwind};

use burn::tensor::{Device, Tensor};
use burn_profiled_core::roofline::{Calibration, Workload};

/// The matmuls' sizes, up to 8192² (1.1 TFLOP: long enough on any GPU).
const MATMUL_SIDES: [usize; 5] = [512, 1024, 2048, 4096, 8192];
/// The elementwise op's element counts, 16 MiB to 1 GiB of f32.
const ELEMENTS: [usize; 4] = [1 << 22, 1 << 24, 1 << 26, 1 << 28];

/// Measures `device`'s peaks; an error says why it could not.
pub(crate) fn calibrate(device: &Device) -> Result<Calibration, String> {
    let sync = || {
        device
            .sync()
            .map_err(|error| format!("the device failed: {error:?}"))
    };
    let measured = catch_unwind(AssertUnwindSafe(|| {
        Calibration::measure(
            |step| {
                let n = *MATMUL_SIDES.get(step)?;
                let a = Tensor::<2>::ones([n, n], device);
                let what = format!("matmul {n}x{n} {}", dtype_name(&a));
                let run = move || {
                    let product = a.clone().matmul(a.clone());
                    let synced = sync();
                    drop(product);
                    synced
                };
                Some((
                    Workload {
                        what,
                        amount: 2 * (n as u64).pow(3),
                    },
                    run,
                ))
            },
            |step| {
                let len = *ELEMENTS.get(step)?;
                let x = Tensor::<1>::ones([len], device);
                let elem = x.dtype().size() as u64;
                let what = format!(
                    "add_scalar over {} MiB of {}, read and written in place",
                    (len as u64 * elem) >> 20,
                    dtype_name(&x)
                );
                // Each run takes the last one's result, its only handle: the op can work in
                // place, so the run reads and writes the tensor rather than allocating another.
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
                Some((
                    Workload {
                        what,
                        amount: 2 * len as u64 * elem,
                    },
                    run,
                ))
            },
        )
    }));
    measured.unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("a panic");
        Err(format!("the backend panicked: {message}"))
    })
}

fn dtype_name<const D: usize>(tensor: &Tensor<D>) -> String {
    format!("{:?}", tensor.dtype()).to_lowercase()
}
