//! `Profiled<B>`: a Burn backend that runs `B` and reports every op.

mod autodiff;
#[cfg(feature = "distributed")]
mod distributed;
pub(crate) mod forward;
pub(crate) mod retag;
mod table;

use core::marker::PhantomData;

use burn_backend::{Backend, BackendTypes, DType, DTypeUsageSet, ExecutionError, TensorData};

/// A Burn backend that forwards every op to `B` and reports it: an NVTX range per op for Nsight
/// Systems, optional device sync per op, op statistics ([`stats`](crate::stats)), a timeline
/// ([`trace`](crate::trace)), device time ([`device_time`](crate::device_time)) and
/// [observers](crate::probe::OpObserver).
///
/// `Profiled<B>` uses `B`'s device and tensor primitive types as its own, so
/// `FloatTensor<Profiled<B>>` *is* `FloatTensor<B>`: no wrapper, no conversion, no allocation.
/// Every method of every op trait is forwarded, the provided (default-bodied) ones included, so
/// `B`'s own implementation of each op runs, results are bit-identical to `B`'s, and each op
/// is reported under its own name (`float_matmul`, `conv2d`, `linear_weight_backward`, ...).
///
/// Two compositions with `Autodiff`, showing different things:
/// * `Autodiff<Profiled<B>>`: Autodiff runs its forward and backward kernels on `Profiled<B>`,
///   so every primitive op of the forward **and** the backward pass is its own range
///   (`float_matmul`, `conv2d_weight_backward`, ...). The usual choice for profiling training.
/// * `Profiled<Autodiff<B>>`: `Profiled` sees the ops the model calls (`linear`, `conv2d`, ...)
///   and the whole backward pass as one `backward` range. The optimizer's maths, which runs on
///   `Profiled<B::InnerBackend>`, shows per op.
///
/// ```
/// use burn::backend::{Autodiff, NdArray};
/// use burn::tensor::Tensor;
/// use burn_profiled::Profiled;
///
/// type B = Autodiff<Profiled<NdArray>>;
/// let device = Default::default();
/// let x = Tensor::<B, 2>::ones([2, 2], &device).require_grad();
/// let grads = (x.clone() * 3.0).sum().backward();
/// assert_eq!(x.grad(&grads).unwrap().into_data().to_vec::<f32>().unwrap(), vec![3.0; 4]);
/// ```
pub struct Profiled<B>(PhantomData<B>);

impl<B> Clone for Profiled<B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B> Copy for Profiled<B> {}

impl<B> Default for Profiled<B> {
    fn default() -> Self {
        Profiled(PhantomData)
    }
}

impl<B: Backend> core::fmt::Debug for Profiled<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Profiled<{}>", core::any::type_name::<B>())
    }
}

impl<B: Backend> BackendTypes for Profiled<B> {
    type Device = B::Device;
    type FloatTensorPrimitive = B::FloatTensorPrimitive;
    type FloatElem = B::FloatElem;
    type IntTensorPrimitive = B::IntTensorPrimitive;
    type IntElem = B::IntElem;
    type BoolTensorPrimitive = B::BoolTensorPrimitive;
    type BoolElem = B::BoolElem;
    type QuantizedTensorPrimitive = B::QuantizedTensorPrimitive;
}

impl<B: Backend> Backend for Profiled<B> {
    fn ad_enabled(device: &Self::Device) -> bool {
        B::ad_enabled(device)
    }

    fn memory_persistent_allocations<
        Output: Send,
        Input: Send,
        Func: Fn(Input) -> Output + Send,
    >(
        device: &Self::Device,
        input: Input,
        func: Func,
    ) -> Output {
        B::memory_persistent_allocations(device, input, func)
    }

    fn memory_cleanup(device: &Self::Device) {
        static OP: crate::probe::Op = crate::probe::Op::new("memory_cleanup\0");
        let _op = crate::probe::probe!(&OP, B, || Some(device.clone()), Vec::new);
        B::memory_cleanup(device)
    }

    fn name(device: &Self::Device) -> String {
        format!("profiled<{}>", B::name(device))
    }

    fn seed(device: &Self::Device, seed: u64) {
        B::seed(device, seed)
    }

    fn sync(device: &Self::Device) -> Result<(), ExecutionError> {
        static OP: crate::probe::Op = crate::probe::Op::new("sync\0");
        // With per-op sync on, the device is synced before the range opens too: the range
        // then holds what is left, which is nothing. Per-op sync is for the other ops.
        let _op = match crate::probe::flags() {
            0 => crate::probe::OpGuard::<B>::off(),
            flags => {
                crate::probe::caller_waits(flags);
                crate::probe::op::<B>(
                    &OP,
                    flags,
                    || Some(device.clone()),
                    Vec::new,
                    crate::tensor_identity::Identities::unknown,
                )
            }
        };
        B::sync(device)
    }

    fn staging<'a, Iter>(data: Iter, device: &Self::Device)
    where
        Iter: Iterator<Item = &'a mut TensorData>,
    {
        B::staging(data, device)
    }

    fn supports_dtype(device: &Self::Device, dtype: DType) -> bool {
        B::supports_dtype(device, dtype)
    }

    fn dtype_usage(device: &Self::Device, dtype: DType) -> DTypeUsageSet {
        B::dtype_usage(device, dtype)
    }

    fn device_count(type_id: u16) -> usize {
        B::device_count(type_id)
    }
}
