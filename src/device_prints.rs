//! A fingerprint taken without a sync per op (`[numerics] fingerprints` on CubeCL's backends,
//! fused or not): each tensor is flattened to f32 on the device as the op returns (a cast
//! kernel at most) and read with the batch it joins ([`numerics_batch`](crate::numerics_batch)):
//! one transfer for up to 64 ops, and the fingerprint taken on the host as NdArray's are, bit
//! for bit the same statistics (integers exact up to 2^24, f64 as f32).
//!
//! A tensor of 2^16 elements or more is reduced on the device instead, by one kernel of this
//! crate's, to 36 bytes per chunk of 4,096 elements, read with the batch
//! ([`fingerprint_kernel`](crate::fingerprint_kernel)): its sums are then within about 1e-6 of
//! the host's, not bit for bit. (Reducing with the backend's own ops was measured first: about
//! twenty kernels a tensor made the example's step 17x statistics alone on lavapipe, and
//! burn-cubecl 0.21's reductions along a dimension of 2^18 elements or more leave elements out
//! there, `docs/guide/maintenance.md`.)
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
    /// What is read of it: the tensor, flattened, as f32, or its partial statistics; `None`
    /// for an empty tensor, and once taken.
    flat: Option<B::FloatTensorPrimitive>,
    /// Whether `flat` holds partial statistics, reduced on the device (never without the
    /// `fusion` feature, which brings the kernel).
    #[cfg_attr(not(feature = "fusion"), allow(dead_code))]
    reduced: bool,
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
        // An f32 tensor is read as it is, or copied: reduced, it is read as the kernel runs.
        let (dtype, x, as_it_is) = match held {
            Held::Float(t) => match t.dtype() {
                burn_backend::DType::F32 => (t.dtype(), t.clone(), true),
                _ => (t.dtype(), B::float_cast(t.clone(), FloatDType::F32), false),
            },
            Held::Int(t) => (
                t.dtype(),
                B::int_into_float(t.clone(), FloatDType::F32),
                false,
            ),
            Held::Bool(t) => (
                t.dtype(),
                B::bool_into_float(t.clone(), FloatDType::F32),
                false,
            ),
            Held::Quantized(_) => return None,
        };
        let flat = (elements > 0).then(|| B::float_reshape(x, Shape::new([elements])));
        let (flat, reduced) = match flat.map(|flat| reduce::<B>(flat, elements)) {
            Some(Ok(partials)) => (Some(partials), true),
            Some(Err(flat)) if as_it_is => (Some(copy(flat)), false),
            Some(Err(flat)) => (Some(flat), false),
            None => (None, false),
        };
        Some(DevicePrint {
            dtype: dtype.name().to_owned(),
            shape,
            flat,
            reduced,
        })
    }

    /// How many numbers it adds to a batch (also once they are taken).
    pub(crate) fn len(&self) -> usize {
        let elements = self.shape.iter().product();
        #[cfg(feature = "fusion")]
        if self.reduced {
            let (chunks, _) = crate::fingerprint_kernel::chunks(elements);
            return chunks * crate::fingerprint_kernel::STATISTICS;
        }
        elements
    }

    /// What is read of it, with the batch's (none for an empty tensor).
    pub(crate) fn take(&mut self) -> Option<B::FloatTensorPrimitive> {
        self.flat.take()
    }

    /// The fingerprint, from the [`len`](Self::len) numbers read.
    pub(crate) fn fingerprint(&self, values: &[f32]) -> Fingerprint {
        #[cfg(feature = "fusion")]
        if self.reduced {
            return crate::fingerprint_kernel::fingerprint(&self.dtype, &self.shape, values);
        }
        let mut print = Fingerprint::of(values, &self.shape);
        print.dtype = self.dtype.clone();
        print
    }
}

/// `flat`'s partial statistics where it is large and on one of CubeCL's backends; `Err(flat)`
/// where it is read whole.
fn reduce<B: Backend>(
    flat: B::FloatTensorPrimitive,
    elements: usize,
) -> Result<B::FloatTensorPrimitive, B::FloatTensorPrimitive> {
    #[cfg(feature = "fusion")]
    if crate::fingerprint_kernel::reduces(elements) {
        return crate::fingerprint_kernel::partials_of::<B>(flat);
    }
    let _ = elements;
    Err(flat)
}

#[cfg(all(test, feature = "wgpu"))]
mod tests {
    use super::*;
    use burn::backend::Wgpu;
    use burn_backend::TensorData;
    use burn_backend::ops::FloatTensorOps;

    fn on_device(values: &[f32], shape: [usize; 2]) -> Fingerprint {
        on_device_as(values, shape).0
    }

    /// The fingerprint read with a batch, and whether it was reduced on the device.
    fn on_device_as(values: &[f32], shape: [usize; 2]) -> (Fingerprint, bool) {
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
        (print.fingerprint(&numbers), print.reduced)
    }

    fn values(count: usize) -> Vec<f32> {
        (0..count)
            .map(|i| match i {
                7 => f32::NAN,
                8 => f32::INFINITY,
                2500 => f32::NEG_INFINITY,
                250_000 => f32::NAN,
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

    /// A tensor of 2^16 elements or more is reduced on the device (a few numbers a chunk read,
    /// not the tensor): its counts, minimum and maximum are the host's exactly, its sums within
    /// 2e-6 of the sum of magnitudes, and the same tensor gives the same fingerprint bit for bit;
    /// a chunk at its end that is not full counts only its own elements.
    #[test]
    fn a_large_tensor_reduced_on_the_device_has_the_hosts_counts_and_extremes_and_close_sums() {
        let values = values(3 * 100_003);
        let host = Fingerprint::of(&values, &[3, 100_003]);
        let (print, reduced) = on_device_as(&values, [3, 100_003]);
        assert!(reduced, "{print:?}");
        assert_eq!(
            (print.elements, print.nan, print.pos_inf, print.neg_inf),
            (host.elements, 2, 1, 1)
        );
        assert_eq!((print.min, print.max), (host.min, host.max));
        assert_eq!((&print.dtype, &print.shape), (&host.dtype, &host.shape));
        let scale = host.sum_abs;
        for (device, host) in [
            (print.sum, host.sum),
            (print.sum_squares, host.sum_squares),
            (print.sum_abs, host.sum_abs),
            (print.weighted_sum / 1021.0, host.weighted_sum / 1021.0),
        ] {
            assert!(
                (device - host).abs() <= 2e-6 * scale,
                "{device} against {host}"
            );
        }
        let (again, _) = on_device_as(&values, [3, 100_003]);
        assert!(again.bit_equal(&print), "{again:?}");
        let small = values[..(1 << 16) - 1].to_vec();
        let (_, reduced) = on_device_as(&small, [1, (1 << 16) - 1]);
        assert!(!reduced, "a tensor under 2^16 elements is read whole");
    }
}
