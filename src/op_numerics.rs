//! Per-op numerics on Burn 0.21 (`[numerics]`): the tensors an op took and returned, held as
//! `B`'s primitives and read to the host for their fingerprints
//! ([`burn_profiled_core::numerics`]).
//!
//! The op table's macro collects them with `(&&&Tensors(&value)).hold(&mut seen)`: a
//! tensor primitive, a pair of them, or a struct holding them (pooling's outputs with
//! indices); anything else holds nothing.
//!
//! Each tensor seen gets an identity where the backend lets one be had without reading the
//! tensor ([`identity`]: NdArray's buffer, shape and strides), which links an op's input to
//! the op that made it; elsewhere the input is read and linked by its fingerprint.

use std::any::Any;

use crate::tensor_identity::{TensorSink, ndarray_identity_of};

use burn_backend::ops::{MaxPool1dWithIndices, MaxPool2dWithIndices};
use burn_backend::{Backend, DType, TensorData, TensorMetadata};
use burn_profiled_core::context::op::Op;
use burn_profiled_core::numerics::{Fingerprint, all_finite};
use burn_profiled_core::sinks::numerics;

/// A tensor of an op, kept to be read: `B`'s primitive of its kind.
#[derive(Clone)]
pub(crate) enum Held<B: Backend> {
    Float(B::FloatTensorPrimitive),
    Int(B::IntTensorPrimitive),
    Bool(B::BoolTensorPrimitive),
    Quantized(B::QuantizedTensorPrimitive),
}

/// Which of a backend's primitives holds a tensor of some dtype.
pub(crate) enum Kind {
    Float,
    Int,
    Bool,
    Quantized,
}

impl Kind {
    /// The kind of a tensor of `dtype`.
    pub(crate) fn of(dtype: DType) -> Self {
        match dtype {
            DType::QFloat(_) => Kind::Quantized,
            dtype if dtype.is_float() => Kind::Float,
            dtype if dtype.is_bool() => Kind::Bool,
            _ => Kind::Int,
        }
    }
}

/// The tensors of an op's arguments or of its result, as collected.
pub(crate) struct Seen<B: Backend> {
    /// Each tensor's shape, in order.
    pub(crate) shapes: Vec<Vec<usize>>,
    /// Each tensor's identity, where [`identity`] knows one.
    pub(crate) identities: Vec<Option<u64>>,
    /// Each tensor, kept to be read.
    pub(crate) held: Vec<Held<B>>,
    /// Whether identities are taken (only fingerprints link records to their producers).
    identify: bool,
}

impl<B: Backend> Seen<B> {
    /// Nothing seen yet; tensors get identities when `identify`.
    pub(crate) fn new(identify: bool) -> Self {
        Seen {
            shapes: Vec::new(),
            identities: Vec::new(),
            held: Vec::new(),
            identify,
        }
    }

    /// Tensors without identities, as a fused block reads them.
    #[cfg(feature = "fusion")]
    pub(crate) fn unidentified(held: Vec<Held<B>>) -> Self {
        Seen {
            shapes: held.iter().map(Held::shape).collect(),
            identities: vec![None; held.len()],
            held,
            identify: false,
        }
    }

    /// Whether every tensor has an identity.
    pub(crate) fn all_identified(&self) -> bool {
        self.identities.iter().all(Option::is_some)
    }
}

impl<B: Backend> TensorSink for Seen<B> {
    fn add<T: TensorMetadata + 'static>(&mut self, tensor: &T) {
        if let Some(held) = Held::of(tensor) {
            self.shapes.push(held.shape());
            self.identities
                .push(self.identify.then(|| ndarray_identity_of(tensor)).flatten());
            self.held.push(held);
        }
    }

    fn add_optional<T: TensorMetadata + 'static>(&mut self, tensor: Option<&T>) {
        if let Some(tensor) = tensor {
            self.add(tensor);
        }
    }
}

impl<B: Backend> Held<B> {
    /// `tensor`, when it is one of `B`'s primitives (cloned: a handle, not the data).
    pub(crate) fn of<T: TensorMetadata + 'static>(tensor: &T) -> Option<Self> {
        let any = tensor as &dyn Any;
        // NdArray's primitives are one type for every kind: the dtype says which it is.
        match Kind::of(tensor.dtype()) {
            Kind::Float => any.downcast_ref().cloned().map(Held::Float),
            Kind::Int => any.downcast_ref().cloned().map(Held::Int),
            Kind::Bool => any.downcast_ref().cloned().map(Held::Bool),
            Kind::Quantized => any.downcast_ref().cloned().map(Held::Quantized),
        }
    }

    /// The device it is on.
    pub(crate) fn device(&self) -> B::Device {
        match self {
            Held::Float(t) => B::float_device(t),
            Held::Int(t) => B::int_device(t),
            Held::Bool(t) => B::bool_device(t),
            Held::Quantized(t) => B::q_device(t),
        }
    }

    /// Its shape.
    pub(crate) fn shape(&self) -> Vec<usize> {
        let shape = match self {
            Held::Float(t) => t.shape(),
            Held::Int(t) => t.shape(),
            Held::Bool(t) => t.shape(),
            Held::Quantized(t) => t.shape(),
        };
        shape.as_slice().to_vec()
    }

    /// Whether the sum of its elements is finite, read as one number: a NaN or an Inf anywhere
    /// makes it not, and so can a sum past the dtype's range (then [`read`](Self::read) tells).
    /// Integer and bool tensors are finite.
    pub(crate) fn sum_is_finite(&self) -> bool {
        match self {
            Held::Float(t) => {
                burn_backend::try_read_sync(B::float_into_data(B::float_sum(t.clone())))
                    .and_then(Result::ok)
                    .is_none_or(|data| finite(&data))
            }
            Held::Quantized(_) | Held::Int(_) | Held::Bool(_) => true,
        }
    }

    /// Its data, read to the host; `None` when the read fails (the op's own error resurfaces
    /// where the user reads).
    pub(crate) fn read(self) -> Option<TensorData> {
        let read = match self {
            Held::Float(t) => burn_backend::try_read_sync(B::float_into_data(t)),
            Held::Int(t) => burn_backend::try_read_sync(B::int_into_data(t)),
            Held::Bool(t) => burn_backend::try_read_sync(B::bool_into_data(t)),
            Held::Quantized(t) => burn_backend::try_read_sync(B::q_into_data(t)),
        };
        read?.ok()
    }
}

/// `Some($apply(slice))` with `$data`'s elements as a slice of their type; `None` for a dtype
/// without one (quantized).
macro_rules! with_elements {
    ($data:expr, |$slice:ident| $apply:expr) => {{
        let data: &TensorData = $data;
        match data.dtype {
            DType::F64 => typed::<f64>(data).map(|$slice| $apply),
            DType::F32 => typed::<f32>(data).map(|$slice| $apply),
            DType::Flex32 => {
                let values: Vec<f32> = data.iter::<f32>().collect();
                let $slice = values.as_slice();
                Some($apply)
            }
            DType::F16 => typed::<half::f16>(data).map(|$slice| $apply),
            DType::BF16 => typed::<half::bf16>(data).map(|$slice| $apply),
            DType::I64 => typed::<i64>(data).map(|$slice| $apply),
            DType::I32 => typed::<i32>(data).map(|$slice| $apply),
            DType::I16 => typed::<i16>(data).map(|$slice| $apply),
            DType::I8 => typed::<i8>(data).map(|$slice| $apply),
            DType::U64 => typed::<u64>(data).map(|$slice| $apply),
            DType::U32 => typed::<u32>(data).map(|$slice| $apply),
            DType::U16 => typed::<u16>(data).map(|$slice| $apply),
            DType::U8 => typed::<u8>(data).map(|$slice| $apply),
            DType::Bool(_) => {
                let values: Vec<bool> = data.iter::<bool>().collect();
                let $slice = values.as_slice();
                Some($apply)
            }
            DType::QFloat(_) => None,
        }
    }};
}

fn typed<E: burn_backend::Element>(data: &TensorData) -> Option<&[E]> {
    data.as_slice::<E>().ok()
}

/// The fingerprint of `data`, named with Burn's name of its dtype.
pub(crate) fn fingerprint(data: &TensorData) -> Option<Fingerprint> {
    let shape = data.shape.as_slice();
    let mut print = with_elements!(data, |values| Fingerprint::of(values, shape))?;
    print.dtype = data.dtype.name().to_owned();
    Some(print)
}

/// `data` as the dumps keep it (`.npy`), where its dtype has a file form.
pub(crate) fn array(data: &TensorData) -> Option<burn_profiled_core::dump::blob::Array> {
    burn_profiled_core::dump::blob::Array::from_tensor_data::<crate::tensor_data::Burn021, _>(data)
        .ok()
}

/// Whether every element of `data` is finite (integers and bools always are).
pub(crate) fn finite(data: &TensorData) -> bool {
    !data.dtype.is_float() || with_elements!(data, |values| all_finite(values)).unwrap_or(true)
}

/// Collects the tensors of a value: `(&&&Tensors(&value)).hold(&mut sink)` finds
/// [`TensorOf`] for a tensor primitive, [`TensorsIn`] for pairs and pooling's outputs, and
/// falls back to [`NoTensor`].
pub(crate) struct Tensors<'a, T>(pub(crate) &'a T);

pub(crate) trait TensorOf {
    fn hold(&self, seen: &mut impl TensorSink);
}

impl<T: TensorMetadata + 'static> TensorOf for &&Tensors<'_, T> {
    fn hold(&self, seen: &mut impl TensorSink) {
        seen.add(self.0);
    }
}

/// The second level: values that hold tensors.
pub(crate) trait TensorsIn {
    fn hold(&self, seen: &mut impl TensorSink);
}

impl<T: TensorMetadata + 'static, U: TensorMetadata + 'static> TensorsIn for &Tensors<'_, (T, U)> {
    fn hold(&self, seen: &mut impl TensorSink) {
        seen.add(&self.0.0);
        seen.add(&self.0.1);
    }
}

impl<X: Backend> TensorsIn for &Tensors<'_, MaxPool2dWithIndices<X>> {
    fn hold(&self, seen: &mut impl TensorSink) {
        seen.add(&self.0.output);
        seen.add(&self.0.indices);
    }
}

impl<X: Backend> TensorsIn for &Tensors<'_, MaxPool1dWithIndices<X>> {
    fn hold(&self, seen: &mut impl TensorSink) {
        seen.add(&self.0.output);
        seen.add(&self.0.indices);
    }
}

impl<T: TensorMetadata + 'static> TensorsIn for &Tensors<'_, Option<T>> {
    fn hold(&self, seen: &mut impl TensorSink) {
        seen.add_optional(self.0.as_ref());
    }
}

impl<T: TensorMetadata + 'static> TensorsIn for &Tensors<'_, Vec<T>> {
    fn hold(&self, seen: &mut impl TensorSink) {
        self.0.iter().for_each(|tensor| seen.add(tensor));
    }
}

pub(crate) trait NoTensor {
    fn hold(&self, _seen: &mut impl TensorSink) {}
}

impl<T> NoTensor for Tensors<'_, T> {}

/// What re-running an op on NdArray gives ([`rerun`](crate::rerun)): its outputs, or why
/// there are none.
pub(crate) type Replayed = Result<Vec<TensorData>, String>;

/// A re-run of one op, ready to go: its arguments captured.
pub(crate) type Replay = Box<dyn FnOnce() -> Replayed + Send>;

/// Hands the record of `op` (called at `at`, with call stack `stack`), whose `outputs` were
/// read, to the numerics sink; `held` inputs are read, and the op re-run (`replay`), only when
/// it made the first NaN or Inf.
pub(crate) fn record_read<B: Backend>(
    at: numerics::CalledAt,
    (op, stack): (&'static Op, u32),
    (inputs, held, replay): (Vec<numerics::Input>, Vec<Held<B>>, Option<Replay>),
    outputs: &[burn_backend::TensorData],
    identities: Vec<u64>,
) -> Option<u64> {
    let prints = outputs.iter().filter_map(fingerprint).collect();
    numerics::record_at(at, op, stack, inputs, (prints, identities), || {
        read_inputs(held, replay)
    })
}

/// What the numerics sink asks of the first op that made a NaN or an Inf (or of the call
/// `capture` names): its `held` inputs read, fingerprinted and kept, and the op re-run on
/// NdArray (`replay`).
pub(crate) fn read_inputs<B: Backend>(
    held: Vec<Held<B>>,
    replay: Option<Replay>,
) -> numerics::NonFiniteInputs {
    let read = held.into_iter().filter_map(Held::read);
    let inputs = read.filter_map(|data| {
        let print = fingerprint(&data)?;
        Some((print, array(&data)))
    });
    let rerun = replay.map(|replay| {
        let (outputs, error) = match replay() {
            Ok(outputs) => (outputs, None),
            Err(error) => (Vec::new(), Some(error)),
        };
        let prints = outputs.iter().filter_map(fingerprint);
        burn_profiled_core::numerics::Rerun {
            backend: "ndarray".to_owned(),
            outputs: prints.collect(),
            error,
        }
    });
    numerics::NonFiniteInputs {
        inputs: inputs.collect(),
        rerun,
        outputs: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Burn's dtype names reach the fingerprint, for every kind of element.
    #[test]
    fn tensor_data_of_every_kind_gets_its_burn_dtype_and_statistics() {
        let floats = TensorData::new(vec![1.0f32, f32::NAN, -2.0], [3]);
        let print = fingerprint(&floats).unwrap();
        assert_eq!(
            (print.dtype.as_str(), print.nan, print.sum),
            ("f32", 1, -1.0)
        );
        assert!(!finite(&floats));
        let ints = TensorData::new(vec![3i64, -1], [1, 2]);
        let print = fingerprint(&ints).unwrap();
        assert_eq!(
            (print.dtype.as_str(), print.shape.as_slice(), print.sum),
            ("i64", &[1, 2][..], 2.0)
        );
        assert!(finite(&ints));
        let bools = TensorData::new(vec![true, false, true], [3]);
        let print = fingerprint(&bools).unwrap();
        assert_eq!((print.dtype.as_str(), print.sum), ("bool", 2.0));
        let halves = TensorData::new(vec![half::f16::INFINITY], [1]);
        assert_eq!(fingerprint(&halves).unwrap().pos_inf, 1);
        assert!(!finite(&halves));
    }
}
