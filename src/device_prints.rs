//! A fingerprint taken without a sync per op (`[numerics] fingerprints` on CubeCL's backends,
//! fused or not): each tensor is flattened to f32 on the device as the op returns (a cast
//! kernel at most) and read with the batch it joins ([`numerics_batch`](crate::numerics_batch)):
//! one transfer for up to 64 ops, and the fingerprint taken on the host as NdArray's are, bit
//! for bit the same statistics (integers exact up to 2^24, f64 as f32).
//!
//! Reducing each tensor to its nine statistics on the device instead, with the backend's own
//! ops, was built and measured: about twenty kernels a tensor made the example's step 17x
//! statistics alone on lavapipe (2.4x read whole), and burn-cubecl 0.21's reductions along a
//! dimension of 2^18 elements or more leave elements out there (`docs/guide/maintenance.md`).
use burn_backend::{Backend, TensorMetadata};
use burn_profiled_core::numerics::Fingerprint;
use burn_std::{FloatDType, Shape};

use crate::op_numerics::Held;

/// A tensor's fingerprint, still on the device (a clone shares it: a tensor several ops read
/// is prepared once).
#[derive(Clone)]
pub(crate) struct DevicePrint<B: Backend> {
    dtype: String,
    shape: Vec<usize>,
    /// What is read of it: the tensor, flattened, as f32; `None` for an empty tensor, and once
    /// taken.
    flat: Option<B::FloatTensorPrimitive>,
}

impl<B: Backend> DevicePrint<B> {
    /// Prepares `held`'s fingerprint (`None` for a quantized tensor: no fingerprint). An f32
    /// tensor is read as it is when the batch is read: its op's held tensors keep anything
    /// from writing over it meanwhile.
    pub(crate) fn prepare(held: &Held<B>) -> Option<Self> {
        Self::prepare_as(held, |t| t)
    }

    /// [`prepare`](Self::prepare) as a copy, for a tensor something may write over before the
    /// batch is read (a fused block's input, which the block may overwrite in place).
    #[cfg(feature = "fusion")]
    pub(crate) fn prepare_copy(held: &Held<B>) -> Option<Self> {
        // x * 1 is x, bit for bit, NaN, infinities and -0 included.
        Self::prepare_as(held, |t| {
            B::float_mul_scalar(t, burn_backend::Scalar::from(1.0))
        })
    }

    fn prepare_as(
        held: &Held<B>,
        copy: impl FnOnce(B::FloatTensorPrimitive) -> B::FloatTensorPrimitive,
    ) -> Option<Self> {
        let shape = held.shape();
        let elements: usize = shape.iter().product();
        let (dtype, x) = match held {
            Held::Float(t) => {
                let x = match t.dtype() {
                    burn_backend::DType::F32 => copy(t.clone()),
                    _ => B::float_cast(t.clone(), FloatDType::F32),
                };
                (t.dtype(), x)
            }
            Held::Int(t) => (t.dtype(), B::int_into_float(t.clone(), FloatDType::F32)),
            Held::Bool(t) => (t.dtype(), B::bool_into_float(t.clone(), FloatDType::F32)),
            Held::Quantized(_) => return None,
        };
        let flat = (elements > 0).then(|| B::float_reshape(x, Shape::new([elements])));
        Some(DevicePrint {
            dtype: dtype.name().to_owned(),
            shape,
            flat,
        })
    }

    /// How many numbers it adds to a batch (also once they are taken).
    pub(crate) fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// What is read of it, with the batch's (none for an empty tensor).
    pub(crate) fn take(&mut self) -> Option<B::FloatTensorPrimitive> {
        self.flat.take()
    }

    /// The fingerprint, from the [`len`](Self::len) numbers read.
    pub(crate) fn fingerprint(&self, values: &[f32]) -> Fingerprint {
        let mut print = Fingerprint::of(values, &self.shape);
        print.dtype = self.dtype.clone();
        print
    }
}

#[cfg(all(test, feature = "wgpu"))]
mod tests {
    use super::*;
    use burn::backend::Wgpu;
    use burn_backend::TensorData;
    use burn_backend::ops::FloatTensorOps;

    fn on_device(values: &[f32], shape: [usize; 2]) -> Fingerprint {
        let device = Default::default();
        let data = TensorData::new(values.to_vec(), shape);
        let tensor = <Wgpu as FloatTensorOps<Wgpu>>::float_from_data(data, &device);
        let mut print = DevicePrint::<Wgpu>::prepare(&Held::Float(tensor)).unwrap();
        let stats = print.take().unwrap();
        let read = <Wgpu as FloatTensorOps<Wgpu>>::float_into_data(stats);
        let numbers: Vec<f32> = burn_backend::try_read_sync(read)
            .unwrap()
            .unwrap()
            .iter::<f32>()
            .collect();
        assert_eq!(numbers.len(), print.len());
        print.fingerprint(&numbers)
    }

    fn values(count: usize) -> Vec<f32> {
        (0..count)
            .map(|i| match i {
                7 => f32::NAN,
                8 => f32::INFINITY,
                2500 => f32::NEG_INFINITY,
                _ => ((i as f32) * 0.37).sin() * 3.0,
            })
            .collect()
    }

    /// A tensor read with a batch is fingerprinted on the host: NdArray's fingerprint, bit for
    /// bit, NaN and infinities counted.
    #[test]
    fn a_tensor_read_with_a_batch_has_the_hosts_fingerprint_bit_for_bit() {
        let values = values(3000);
        let print = on_device(&values, [30, 100]);
        assert!(
            print.bit_equal(&Fingerprint::of(&values, &[30, 100])),
            "{print:?}"
        );
    }
}
