//! A fingerprint's statistics reduced on the device (`[numerics] fingerprints` on CubeCL's
//! backends, fused or not): nine numbers per tensor, made by the backend's own ops as the op
//! returns, and read with the batch they join ([`numerics_batch`](crate::numerics_batch)), so
//! that fingerprints make no sync per op and move nine numbers, not the tensor.
//!
//! The statistics are those of [`Fingerprint::of`] (NaN and infinity counts, the finite
//! elements' min, max, sum, sum of squares, sum of absolute values and position-weighted sum),
//! reduced in f32 by the backend's reductions rather than in f64 in element order: equal bit
//! for bit between two runs of one backend, within the comparison's tolerance of the host's.
//! Counts are exact up to 2^24 elements; integers are summed as f32.

use burn_backend::{Backend, Scalar, TensorMetadata, get_device_settings};
use burn_profiled_core::numerics::{Fingerprint, WEIGHT_PERIOD};
use burn_std::{FloatDType, Shape};

use crate::op_numerics::Held;

/// How many statistics a tensor's reduction holds.
pub(crate) const STATS: usize = 9;

/// A tensor's fingerprint, its statistics still on the device (a clone shares them: a tensor
/// several ops read is reduced once).
#[derive(Clone)]
pub(crate) struct DevicePrint<B: Backend> {
    dtype: String,
    shape: Vec<usize>,
    /// `[nan, inf, +inf, min, max, sum, sum of squares, sum of |x|, weighted sum]` of shape
    /// `[STATS]`; `None` for an empty tensor, which has nothing to reduce.
    stats: Option<B::FloatTensorPrimitive>,
}

impl<B: Backend> DevicePrint<B> {
    /// Launches the reduction of `held` (`None` for a quantized tensor: no fingerprint).
    pub(crate) fn reduce(held: &Held<B>) -> Option<Self> {
        let shape = held.shape();
        let elements: usize = shape.iter().product();
        let (dtype, x) = match held {
            Held::Float(t) => {
                let x = match t.dtype() {
                    burn_backend::DType::F32 => t.clone(),
                    _ => B::float_cast(t.clone(), FloatDType::F32),
                };
                (t.dtype(), x)
            }
            Held::Int(t) => (t.dtype(), B::int_into_float(t.clone(), FloatDType::F32)),
            Held::Bool(t) => (t.dtype(), B::bool_into_float(t.clone(), FloatDType::F32)),
            Held::Quantized(_) => return None,
        };
        let stats = (elements > 0).then(|| statistics::<B>(x, elements));
        Some(DevicePrint {
            dtype: dtype.name().to_owned(),
            shape,
            stats,
        })
    }

    /// How many numbers its reduction adds to a batch (also once they are taken).
    pub(crate) fn len(&self) -> usize {
        match self.shape.iter().product::<usize>() {
            0 => 0,
            _ => STATS,
        }
    }

    /// Its reduction, to be read with the batch's (none for an empty tensor).
    pub(crate) fn take_stats(&mut self) -> Option<B::FloatTensorPrimitive> {
        self.stats.take()
    }

    /// The fingerprint, from the [`len`](Self::len) numbers its reduction read as.
    pub(crate) fn fingerprint(&self, stats: &[f32]) -> Fingerprint {
        let elements: u64 = self.shape.iter().product::<usize>() as u64;
        let mut print = Fingerprint::of::<f32>(&[], &self.shape);
        print.dtype = self.dtype.clone();
        print.elements = elements;
        let [
            nan,
            inf,
            pos_inf,
            min,
            max,
            sum,
            sum_squares,
            sum_abs,
            weighted_sum,
        ] = <[f32; STATS]>::try_from(stats).unwrap_or([0.0; STATS]);
        let count = |x: f32| x.round().max(0.0) as u64;
        (print.nan, print.pos_inf) = (count(nan), count(pos_inf));
        print.neg_inf = count(inf).saturating_sub(print.pos_inf);
        if print.finite() > 0 {
            (print.min, print.max) = (Some(f64::from(min)), Some(f64::from(max)));
        }
        print.sum = f64::from(sum);
        print.sum_squares = f64::from(sum_squares);
        print.sum_abs = f64::from(sum_abs);
        print.weighted_sum = f64::from(weighted_sum);
        print
    }
}

/// The nine statistics of `x` (f32, `elements > 0` of them), as one tensor of shape `[STATS]`.
fn statistics<B: Backend>(x: B::FloatTensorPrimitive, elements: usize) -> B::FloatTensorPrimitive {
    let device = B::float_device(&x);
    let settings = get_device_settings::<B>(&device);
    let x = B::float_reshape(x, Shape::new([elements]));
    let count = |mask| B::float_sum_dim(B::bool_into_float(mask, FloatDType::F32), 0);
    let nan = B::float_is_nan(x.clone(), settings.bool_dtype);
    let inf = B::float_is_inf(x.clone(), settings.bool_dtype);
    let positive = B::float_greater_elem(x.clone(), Scalar::from(0.0), settings.bool_dtype);
    let pos_inf = B::bool_and(inf.clone(), positive);
    let not_finite = B::bool_or(nan.clone(), inf.clone());
    let finite = B::float_mask_fill(x.clone(), not_finite.clone(), Scalar::from(0.0));
    let min = B::float_min(B::float_mask_fill(
        x.clone(),
        not_finite.clone(),
        Scalar::from(f64::INFINITY),
    ));
    let max = B::float_max(B::float_mask_fill(
        x,
        not_finite,
        Scalar::from(f64::NEG_INFINITY),
    ));
    // (i mod WEIGHT_PERIOD) + 1, as the host's fingerprint weighs position i.
    let positions = B::int_arange(0..elements as i64, &device, settings.int_dtype);
    let weights = B::int_add_scalar(
        B::int_remainder_scalar(positions, Scalar::from(WEIGHT_PERIOD as i64)),
        Scalar::from(1),
    );
    let weights = B::int_into_float(weights, FloatDType::F32);
    let sum = |t| B::float_sum_dim(t, 0);
    B::float_cat(
        vec![
            count(nan),
            count(inf),
            count(pos_inf),
            min,
            max,
            sum(finite.clone()),
            sum(B::float_mul(finite.clone(), finite.clone())),
            sum(B::float_abs(finite.clone())),
            sum(B::float_mul(finite, weights)),
        ],
        0,
    )
}

#[cfg(all(test, feature = "wgpu"))]
mod tests {
    use super::*;
    use burn::backend::Wgpu;
    use burn_backend::TensorData;
    use burn_backend::ops::FloatTensorOps;
    use burn_profiled_core::numerics::{Agreement, Tolerance, compare_outputs};

    /// The statistics reduced on the device are the host's, within the comparison's tolerance,
    /// with the same counts: NaN and infinities counted, left out of the sums.
    #[test]
    fn a_fingerprint_reduced_on_the_device_is_the_hosts() {
        let device = Default::default();
        let values: Vec<f32> = (0..3000)
            .map(|i| match i {
                7 => f32::NAN,
                8 => f32::INFINITY,
                2500 => f32::NEG_INFINITY,
                _ => ((i as f32) * 0.37).sin() * 3.0,
            })
            .collect();
        let data = TensorData::new(values.clone(), [30, 100]);
        let tensor = <Wgpu as FloatTensorOps<Wgpu>>::float_from_data(data, &device);
        let mut print = DevicePrint::<Wgpu>::reduce(&Held::Float(tensor)).unwrap();
        let stats = print.take_stats().unwrap();
        let numbers: Vec<f32> =
            burn_backend::try_read_sync(<Wgpu as FloatTensorOps<Wgpu>>::float_into_data(stats))
                .unwrap()
                .unwrap()
                .iter::<f32>()
                .collect();
        let on_device = print.fingerprint(&numbers);
        let on_host = Fingerprint::of(&values, &[30, 100]);
        assert_eq!(
            (on_device.nan, on_device.pos_inf, on_device.neg_inf),
            (1, 1, 1)
        );
        let (agreement, differences) = compare_outputs(
            std::slice::from_ref(&on_host),
            std::slice::from_ref(&on_device),
            Tolerance::default(),
        );
        assert!(
            matches!(agreement, Agreement::Identical | Agreement::WithinTolerance),
            "{on_host:?}\n{on_device:?}\n{differences:?}"
        );
    }
}
