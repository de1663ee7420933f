//! Capturing an op's arguments, and running NdArray's op on them.

use std::any::TypeId;

use burn::backend::NdArray;
use burn::backend::ndarray::{NdArrayDevice, NdArrayTensor};
use std::cell::OnceCell;

use burn_backend::ops::{BoolTensorOps, FloatTensorOps, IntTensorOps};
use burn_backend::{Backend, DType, DeviceOps, TensorData, TensorMetadata};

use crate::op_numerics::Replayed;

use crate::op_numerics::Held;

/// Whether `B`'s ops are captured to be re-run: not NdArray's own (the same backend would
/// give the same answer).
pub(crate) fn wanted<B: Backend>() -> bool {
    TypeId::of::<B>() != TypeId::of::<NdArray>()
}

/// Runs `replay`, NdArray's op on the captured arguments; a panic inside NdArray (an op or a
/// dtype it does not have) is an answer too.
pub(crate) fn run(replay: impl FnOnce() -> Option<Vec<TensorData>>) -> Replayed {
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(replay));
    match ran {
        Ok(Some(outputs)) => Ok(outputs),
        Ok(None) => Err("an input could not be read from the backend".to_owned()),
        Err(panic) => {
            let message = (panic.downcast_ref::<String>().cloned())
                .or_else(|| panic.downcast_ref::<&str>().map(|text| (*text).to_owned()));
            Err(format!(
                "NdArray could not run it: {}",
                message.unwrap_or_else(|| "it panicked".to_owned())
            ))
        }
    }
}

/// An argument, captured: `(&&&&&&Capture(&arg)).capture::<B>()`.
pub(crate) struct Capture<'a, T>(pub(crate) &'a T);

/// A tensor argument, held to be read.
pub(crate) struct CapturedTensor<B: Backend>(Option<Held<B>>);

impl<B: Backend> CapturedTensor<B> {
    /// The tensor, as NdArray's op takes it: read from `B`, made on the host.
    pub(crate) fn arg(&self) -> Option<NdArrayTensor> {
        to_ndarray(self.0.clone()?)
    }
}

fn to_ndarray<B: Backend>(held: Held<B>) -> Option<NdArrayTensor> {
    let device = NdArrayDevice::Cpu;
    Some(match held {
        Held::Float(_) => {
            // NdArray computes floats in f32 or f64: half precision is widened.
            let data = held.read()?;
            let data = match data.dtype {
                DType::F64 | DType::F32 => data,
                _ => data.convert::<f32>(),
            };
            <NdArray>::float_from_data(data, &device)
        }
        Held::Int(_) => <NdArray>::int_from_data(held.read()?, &device),
        Held::Bool(_) => <NdArray>::bool_from_data(held.read()?, &device),
        Held::Quantized(_) => return None,
    })
}

/// A borrowed tensor (`float_is_require_grad`'s), made on the host once.
pub(crate) struct CapturedTensorRef<B: Backend>(Option<Held<B>>, OnceCell<Option<NdArrayTensor>>);

impl<B: Backend> CapturedTensorRef<B> {
    pub(crate) fn arg(&self) -> Option<&NdArrayTensor> {
        let made = self.1.get_or_init(|| to_ndarray(self.0.clone()?));
        made.as_ref()
    }
}

/// A list of tensors (`cat`'s).
pub(crate) struct CapturedTensors<B: Backend>(Vec<Option<Held<B>>>);

impl<B: Backend> CapturedTensors<B> {
    pub(crate) fn arg(&self) -> Option<Vec<NdArrayTensor>> {
        self.0
            .iter()
            .map(|held| to_ndarray(held.clone()?))
            .collect()
    }
}

/// An optional tensor (a convolution's bias).
pub(crate) struct CapturedOption<B: Backend>(Option<Option<Held<B>>>);

impl<B: Backend> CapturedOption<B> {
    pub(crate) fn arg(&self) -> Option<Option<NdArrayTensor>> {
        match &self.0 {
            None => Some(None),
            Some(held) => to_ndarray(held.clone()?).map(Some),
        }
    }
}

/// A device: NdArray's.
pub(crate) struct CapturedDevice(NdArrayDevice);

impl CapturedDevice {
    pub(crate) fn arg(&self) -> Option<&NdArrayDevice> {
        Some(&self.0)
    }
}

/// A borrowed slice (axes, slices), owned.
pub(crate) struct CapturedSlice<T>(Vec<T>);

impl<T> CapturedSlice<T> {
    pub(crate) fn arg(&self) -> Option<&[T]> {
        Some(&self.0)
    }
}

/// Any other argument (a scalar, a shape, options): the same value.
pub(crate) struct Cloned<T>(T);

impl<T: Clone> Cloned<T> {
    pub(crate) fn arg(&self) -> Option<T> {
        Some(self.0.clone())
    }
}

pub(crate) trait CaptureTensor {
    fn capture<B: Backend>(&self) -> CapturedTensor<B>;
}

impl<T: TensorMetadata + 'static> CaptureTensor for &&&&&Capture<'_, T> {
    fn capture<B: Backend>(&self) -> CapturedTensor<B> {
        CapturedTensor(Held::of(self.0))
    }
}

pub(crate) trait CaptureTensorRef {
    fn capture<B: Backend>(&self) -> CapturedTensorRef<B>;
}

impl<T: TensorMetadata + 'static> CaptureTensorRef for &&&&&Capture<'_, &T> {
    fn capture<B: Backend>(&self) -> CapturedTensorRef<B> {
        CapturedTensorRef(Held::of(*self.0), OnceCell::new())
    }
}

pub(crate) trait CaptureTensors {
    fn capture<B: Backend>(&self) -> CapturedTensors<B>;
}

impl<T: TensorMetadata + 'static> CaptureTensors for &&&&Capture<'_, Vec<T>> {
    fn capture<B: Backend>(&self) -> CapturedTensors<B> {
        CapturedTensors(self.0.iter().map(Held::of).collect())
    }
}

pub(crate) trait CaptureOption {
    fn capture<B: Backend>(&self) -> CapturedOption<B>;
}

impl<T: TensorMetadata + 'static> CaptureOption for &&&Capture<'_, Option<T>> {
    fn capture<B: Backend>(&self) -> CapturedOption<B> {
        CapturedOption(self.0.as_ref().map(Held::of))
    }
}

pub(crate) trait CaptureDevice {
    fn capture<B: Backend>(&self) -> CapturedDevice;
}

impl<D: DeviceOps> CaptureDevice for &&Capture<'_, &D> {
    fn capture<B: Backend>(&self) -> CapturedDevice {
        CapturedDevice(NdArrayDevice::Cpu)
    }
}

pub(crate) trait CaptureSlice<T> {
    fn capture<B: Backend>(&self) -> CapturedSlice<T>;
}

impl<T: Clone> CaptureSlice<T> for &Capture<'_, &[T]> {
    fn capture<B: Backend>(&self) -> CapturedSlice<T> {
        CapturedSlice(self.0.to_vec())
    }
}

pub(crate) trait CaptureClone<T> {
    fn capture<B: Backend>(&self) -> Cloned<T>;
}

impl<T: Clone> CaptureClone<T> for Capture<'_, T> {
    fn capture<B: Backend>(&self) -> Cloned<T> {
        Cloned(self.0.clone())
    }
}
