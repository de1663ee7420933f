//! [`Fingerprint`]: what one output tensor of an op looked like, in a few statistics computed
//! in one pass over its host data.

use serde::{Deserialize, Serialize};

use super::json_float;
use crate::dump::blob::{Array, Dtype};

/// Every position's weight in [`Fingerprint::weighted_sum`] is `(i mod WEIGHT_PERIOD) + 1`: a
/// prime, so that a permutation of a tensor whose rows have a power-of-two length still moves
/// values onto other weights.
pub const WEIGHT_PERIOD: u64 = 1021;

/// The statistics of one tensor: enough to tell, across processes, backends and Burn versions,
/// whether two runs computed the same tensor (bit for bit, or within a tolerance), without
/// keeping the tensor.
///
/// The sums run over the finite elements only, accumulated in `f64` in the tensor's element
/// order: a NaN or an infinity is counted (`nan`, `pos_inf`, `neg_inf`), not summed, so that
/// one NaN does not hide what the other elements did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// The element type as Burn names it (`DType::name`): `f32`, `f16`, `bf16`, `i64`, `bool`, ...
    pub dtype: String,
    /// The shape.
    pub shape: Vec<usize>,
    /// How many elements the data had.
    pub elements: u64,
    /// NaN elements.
    pub nan: u64,
    /// `+inf` elements.
    pub pos_inf: u64,
    /// `-inf` elements.
    pub neg_inf: u64,
    /// The smallest finite element; `None` when there is none.
    #[serde(with = "json_float::option")]
    pub min: Option<f64>,
    /// The largest finite element; `None` when there is none.
    #[serde(with = "json_float::option")]
    pub max: Option<f64>,
    /// The sum of the finite elements.
    #[serde(with = "json_float")]
    pub sum: f64,
    /// The sum of their squares.
    #[serde(with = "json_float")]
    pub sum_squares: f64,
    /// The sum of their absolute values.
    #[serde(with = "json_float")]
    pub sum_abs: f64,
    /// `sum of x[i] * ((i mod 1021) + 1)` over the finite elements, `i` the position in the
    /// data (row-major): a permutation of the same values changes it ([`WEIGHT_PERIOD`]).
    #[serde(with = "json_float")]
    pub weighted_sum: f64,
}

/// An element type a [`Fingerprint`] can be taken of: its name as Burn gives it, and its
/// value as an `f64` (exact for every float type and for integers up to 2^53).
pub trait Element: Copy {
    /// The dtype's name as Burn's `DType::name` gives it.
    const DTYPE: &'static str;
    /// The value, widened.
    fn to_f64(self) -> f64;
}

macro_rules! element {
    ($($ty:ty => $name:literal, |$x:ident| $to:expr;)*) => {$(
        impl Element for $ty {
            const DTYPE: &'static str = $name;
            #[inline]
            fn to_f64(self) -> f64 {
                let $x = self;
                $to
            }
        }
    )*};
}

element! {
    f64 => "f64", |x| x;
    f32 => "f32", |x| f64::from(x);
    half::f16 => "f16", |x| x.to_f64();
    half::bf16 => "bf16", |x| x.to_f64();
    i64 => "i64", |x| x as f64;
    i32 => "i32", |x| f64::from(x);
    i16 => "i16", |x| f64::from(x);
    i8 => "i8", |x| f64::from(x);
    u64 => "u64", |x| x as f64;
    u32 => "u32", |x| f64::from(x);
    u16 => "u16", |x| f64::from(x);
    u8 => "u8", |x| f64::from(x);
    bool => "bool", |x| f64::from(u8::from(x));
}

/// Whether every element of `data` is finite: what `[numerics] check_finite` asks of every
/// output, cheaper than its [`Fingerprint`].
pub fn all_finite<T: Element>(data: &[T]) -> bool {
    data.iter().all(|x| x.to_f64().is_finite())
}

impl Fingerprint {
    /// The fingerprint of a tensor of `shape` whose elements, row-major, are `data`, in one
    /// pass over it. `elements` is `data.len()`, whatever `shape` says.
    pub fn of<T: Element>(data: &[T], shape: &[usize]) -> Self {
        Self::of_values(T::DTYPE, data.iter().map(|x| x.to_f64()), shape)
    }

    /// The fingerprint of a dumped array (a tensor the dumper read, a gradient, the loss):
    /// the same as [`of`](Self::of) on the tensor's data, with Burn's name of its dtype.
    pub fn of_array(array: &Array) -> Self {
        let dtype = match array.dtype {
            Dtype::F16 => "f16",
            Dtype::BF16 => "bf16",
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
            Dtype::I8 => "i8",
            Dtype::I16 => "i16",
            Dtype::I32 => "i32",
            Dtype::I64 => "i64",
            Dtype::U8 => "u8",
            Dtype::U16 => "u16",
            Dtype::U32 => "u32",
            Dtype::U64 => "u64",
            Dtype::Bool => "bool",
        };
        Self::of_values(dtype, array.values_f64().into_iter(), &array.shape)
    }

    fn of_values(dtype: &str, values: impl ExactSizeIterator<Item = f64>, shape: &[usize]) -> Self {
        let mut print = Fingerprint {
            dtype: dtype.to_owned(),
            shape: shape.to_vec(),
            elements: values.len() as u64,
            nan: 0,
            pos_inf: 0,
            neg_inf: 0,
            min: None,
            max: None,
            sum: 0.0,
            sum_squares: 0.0,
            sum_abs: 0.0,
            weighted_sum: 0.0,
        };
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut weight = 1.0f64;
        for x in values {
            if x.is_finite() {
                min = min.min(x);
                max = max.max(x);
                print.sum += x;
                print.sum_squares += x * x;
                print.sum_abs += x.abs();
                print.weighted_sum += x * weight;
            } else if x.is_nan() {
                print.nan += 1;
            } else if x > 0.0 {
                print.pos_inf += 1;
            } else {
                print.neg_inf += 1;
            }
            // (i mod 1021) + 1 without a division per element.
            weight = if weight == WEIGHT_PERIOD as f64 {
                1.0
            } else {
                weight + 1.0
            };
        }
        if min <= max {
            (print.min, print.max) = (Some(min), Some(max));
        }
        print
    }

    /// How many elements are NaN or infinite.
    pub fn non_finite(&self) -> u64 {
        self.nan + self.pos_inf + self.neg_inf
    }

    /// Whether every element is finite (an empty tensor is).
    pub fn is_finite(&self) -> bool {
        self.non_finite() == 0
    }

    /// How many elements are finite: the count the sums are over.
    pub fn finite(&self) -> u64 {
        self.elements.saturating_sub(self.non_finite())
    }

    /// The mean of the finite elements (0 when there is none).
    pub fn mean(&self) -> f64 {
        match self.finite() {
            0 => 0.0,
            n => self.sum / n as f64,
        }
    }

    /// The L2 norm of the finite elements.
    pub fn l2(&self) -> f64 {
        self.sum_squares.sqrt()
    }

    /// A hash of every statistic, bit for bit: equal for two [`bit_equal`](Self::bit_equal)
    /// fingerprints. A run links an op's input to the latest op whose output had the same
    /// ([`OpRecord::producers`](super::OpRecord::producers)).
    pub fn content_key(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = rustc_hash::FxHasher::default();
        self.dtype.hash(&mut hasher);
        self.shape.hash(&mut hasher);
        (self.elements, self.nan, self.pos_inf, self.neg_inf).hash(&mut hasher);
        [self.min, self.max]
            .map(|x| x.map(f64::to_bits))
            .hash(&mut hasher);
        [self.sum, self.sum_squares, self.sum_abs, self.weighted_sum]
            .map(f64::to_bits)
            .hash(&mut hasher);
        hasher.finish()
    }

    /// Whether every statistic of `self` and `other` is the same, bit for bit.
    pub fn bit_equal(&self, other: &Self) -> bool {
        let bits = |x: Option<f64>| x.map(f64::to_bits);
        self.dtype == other.dtype
            && self.shape == other.shape
            && (self.elements, self.nan, self.pos_inf, self.neg_inf)
                == (other.elements, other.nan, other.pos_inf, other.neg_inf)
            && bits(self.min) == bits(other.min)
            && bits(self.max) == bits(other.max)
            && [self.sum, self.sum_squares, self.sum_abs, self.weighted_sum].map(f64::to_bits)
                == [
                    other.sum,
                    other.sum_squares,
                    other.sum_abs,
                    other.weighted_sum,
                ]
                .map(f64::to_bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fingerprint that a reordering cannot change would call a transposed or shuffled
    /// output the same tensor: the position-weighted sum must tell them apart.
    #[test]
    fn a_permutation_of_the_same_values_has_another_fingerprint() {
        let data: Vec<f32> = (0..4096).map(|i| (i as f32 * 0.37).sin()).collect();
        let mut swapped = data.clone();
        swapped.swap(5, 3000);
        let (a, b) = (
            Fingerprint::of(&data, &[4096]),
            Fingerprint::of(&swapped, &[4096]),
        );
        assert_eq!((a.sum, a.min, a.max), (b.sum, b.min, b.max), "same values");
        assert!(!a.bit_equal(&b), "the weighted sum must see the swap");
        assert_ne!(a.weighted_sum, b.weighted_sum);
    }

    /// NaN and infinities are what `check_finite` looks for: each must be counted in its own
    /// column, and the sums must stay those of the finite elements.
    #[test]
    fn nan_and_infinities_are_counted_and_left_out_of_the_sums() {
        let data = [
            1.0f32,
            f32::NAN,
            f32::INFINITY,
            -2.0,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        let print = Fingerprint::of(&data, &[2, 3]);
        assert_eq!((print.nan, print.pos_inf, print.neg_inf), (2, 1, 1));
        assert_eq!((print.min, print.max), (Some(-2.0), Some(1.0)));
        assert_eq!(
            (print.sum, print.sum_squares, print.sum_abs),
            (-1.0, 5.0, 3.0)
        );
        // Positions 0 and 3: weights 1 and 4.
        assert_eq!(print.weighted_sum, 1.0 - 8.0);
        assert!(!print.is_finite());
        assert_eq!((print.finite(), print.non_finite()), (2, 4));
    }

    /// An empty tensor is a real op output (a slice of nothing): it has no minimum, and is
    /// finite.
    #[test]
    fn an_empty_tensor_has_no_min_or_max_and_is_finite() {
        let print = Fingerprint::of::<f32>(&[], &[0, 3]);
        assert_eq!((print.elements, print.min, print.max), (0, None, None));
        assert_eq!((print.sum, print.mean(), print.l2()), (0.0, 0.0, 0.0));
        assert!(print.is_finite());
        assert_eq!(print.shape, vec![0, 3]);
    }

    /// Integer, bool and half-precision outputs (argmax, masks, f16 activations) are op
    /// outputs too, named as Burn names their dtypes.
    #[test]
    fn integer_bool_and_half_tensors_have_their_burn_dtype_names() {
        assert_eq!(Fingerprint::of(&[3i64, -1], &[2]).sum, 2.0);
        assert_eq!(Fingerprint::of(&[true, false, true], &[3]).sum, 2.0);
        assert_eq!(Fingerprint::of(&[7u8], &[1]).dtype, "u8");
        let halves = [half::f16::from_f32(0.5), half::f16::INFINITY];
        let print = Fingerprint::of(&halves, &[2]);
        assert_eq!(
            (print.dtype.as_str(), print.sum, print.pos_inf),
            ("f16", 0.5, 1)
        );
        assert_eq!(Fingerprint::of(&[half::bf16::ONE], &[1]).dtype, "bf16");
    }

    /// The weights repeat with period 1021: position 1021 weighs 1 again.
    #[test]
    fn the_position_weights_run_from_1_to_1021_and_repeat() {
        let mut data = vec![0.0f64; 1022];
        data[1020] = 1.0;
        assert_eq!(Fingerprint::of(&data, &[1022]).weighted_sum, 1021.0);
        data[1020] = 0.0;
        data[1021] = 1.0;
        assert_eq!(Fingerprint::of(&data, &[1022]).weighted_sum, 1.0);
    }
}
