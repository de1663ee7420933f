//! Gradient taps: the gradient of an intermediate activation.
//!
//! Burn's autodiff keeps gradients of leaves only; those of intermediate tensors are consumed
//! during backward. A tap is an identity op (the output is the input's very buffer) whose
//! backward records the incoming gradient and passes it on unchanged, so training stays
//! bit-identical. [`TensorDumper::grad_tap`](super::TensorDumper::grad_tap) adds such a tap
//! and a record in the gradient structure at a path; the next backward fills it, and
//! `set_gradients`/`set_gradients_from` put it in place (`null` when backward did not reach it,
//! `` "`.requires_grad == False`" `` when the tensor was not tracked).
//!
//! Taps work on [`Autodiff<X, C>`](burn::backend::Autodiff) backends, and on
//! `Profiled<Autodiff<X, C>>`. Model code generic over
//! `B: Backend` calls `grad_tap` for any backend: register the autodiff backend once with
//! [`enable_grad_taps`]; a backend without autodiff gets the untracked string and no op.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use burn::backend::Autodiff;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::ops::FloatTensor;
use burn::tensor::{Tensor, TensorData, TensorPrimitive};

/// A gradient captured by a tap, read when the gradients are set.
type Captured = Box<dyn FnOnce() -> Result<TensorData, String> + Send>;

/// Where a tap's backward leaves the gradient it saw (opaque).
#[derive(Clone, Default)]
pub struct Sink(Arc<SinkState>);

#[derive(Default)]
struct SinkState {
    captured: Mutex<Option<Captured>>,
    untracked: AtomicBool,
}

impl Sink {
    fn store(&self, captured: Captured) {
        *self
            .0
            .captured
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(captured);
    }

    /// The captured gradient, if a backward reached the tap.
    pub(crate) fn take(&self) -> Option<Captured> {
        self.0
            .captured
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Whether the tapped tensor was not tracked by autodiff.
    pub(crate) fn untracked(&self) -> bool {
        self.0.untracked.load(Ordering::Relaxed)
    }
}

impl fmt::Debug for Sink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sink")
    }
}

/// Autodiff backends on which a gradient tap can be placed.
pub trait TapBackend: AutodiffBackend {
    /// The identity of `tensor` with a backward step recording the incoming gradient into
    /// `sink`; `false` when the tensor is not tracked (no step is recorded then).
    #[doc(hidden)]
    fn tap(tensor: FloatTensor<Self>, sink: Sink) -> (FloatTensor<Self>, bool);
}

#[derive(Debug)]
struct TapOp {
    sink: Sink,
}

impl<X: Backend> Backward<X, 1> for TapOp {
    type State = ();

    fn backward(self, ops: Ops<(), 1>, grads: &mut Gradients, _checkpointer: &mut Checkpointer) {
        let grad = grads.consume::<X>(&ops.node);
        let captured = grad.clone();
        self.sink.store(Box::new(move || {
            Tensor::<X, 1>::from_primitive(TensorPrimitive::Float(captured))
                .try_into_data()
                .map_err(|error| format!("{error:?}"))
        }));
        if let Some(parent) = &ops.parents[0] {
            grads.register::<X>(parent.id, grad);
        }
    }
}

/// `Autodiff<X>` is an autodiff backend for every backend `X`, or, under burn's `distributed`
/// feature, for every `DistributedBackend`.
macro_rules! tap_autodiff {
    ($inner:path) => {
        impl<X: $inner, C: CheckpointStrategy> TapBackend for Autodiff<X, C> {
            fn tap(tensor: FloatTensor<Self>, sink: Sink) -> (FloatTensor<Self>, bool) {
                let node = tensor.node.clone();
                let op = TapOp { sink };
                match op.prepare::<C>([node]).compute_bound().stateful() {
                    OpsKind::Tracked(prep) => (prep.finish((), tensor.primitive), true),
                    OpsKind::UnTracked(prep) => (prep.finish(tensor.primitive), false),
                }
            }
        }
    };
}

#[cfg(not(feature = "distributed"))]
tap_autodiff!(Backend);
#[cfg(feature = "distributed")]
tap_autodiff!(burn_backend::distributed::DistributedBackend);

/// `Profiled<Autodiff<X>>`: the tap goes to the autodiff backend inside (the primitives are
/// the same).
impl<B: TapBackend> TapBackend for crate::Profiled<B> {
    fn tap(tensor: FloatTensor<Self>, sink: Sink) -> (FloatTensor<Self>, bool) {
        B::tap(tensor, sink)
    }
}

/// A tap on a type-erased `TensorPrimitive<B>`: the tapped primitive and whether it is tracked.
type ErasedTap = fn(Box<dyn Any + Send>, Sink) -> (Box<dyn Any + Send>, bool);

static TAP_BACKENDS: RwLock<Option<HashMap<TypeId, ErasedTap>>> = RwLock::new(None);

fn erased_tap<B: TapBackend>(
    primitive: Box<dyn Any + Send>,
    sink: Sink,
) -> (Box<dyn Any + Send>, bool) {
    match primitive.downcast::<TensorPrimitive<B>>() {
        Ok(primitive) => {
            let float = match *primitive {
                TensorPrimitive::Float(float) => float,
                // Quantized tensors are dequantized for the tap (an identity in value).
                TensorPrimitive::QFloat(q) => {
                    let dtype = burn::tensor::FloatDType::F32;
                    B::dequantize(q, dtype)
                }
            };
            let (tapped, tracked) = B::tap(float, sink);
            (Box::new(TensorPrimitive::<B>::Float(tapped)), tracked)
        }
        Err(primitive) => (primitive, false),
    }
}

/// Lets [`TensorDumper::grad_tap`](super::TensorDumper::grad_tap) tap tensors of the
/// autodiff backend `B` in code generic over `B: Backend` (process-wide; idempotent).
pub fn enable_grad_taps<B: TapBackend>() {
    TAP_BACKENDS
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .insert(TypeId::of::<B>(), erased_tap::<B>);
}

/// Whether tensors of `B` can be tapped: `B` has no autodiff (nothing to tap) or was
/// registered with [`enable_grad_taps`].
pub(crate) fn can_tap<B: Backend>(device: &B::Device) -> bool {
    !B::ad_enabled(device) || erased_for::<B>().is_some()
}

fn erased_for<B: Backend>() -> Option<ErasedTap> {
    TAP_BACKENDS
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .and_then(|taps| taps.get(&TypeId::of::<B>()).copied())
}

/// Taps `tensor` (see the module docs); check [`can_tap`] first. A tensor that cannot be
/// tapped is returned unchanged and marked untracked in `sink`.
pub(crate) fn tap<B: Backend, const D: usize>(tensor: Tensor<B, D>, sink: &Sink) -> Tensor<B, D> {
    let Some(tap) = erased_for::<B>().filter(|_| B::ad_enabled(&tensor.device())) else {
        sink.0.untracked.store(true, Ordering::Relaxed);
        return tensor;
    };
    let (tapped, tracked) = tap(Box::new(tensor.into_primitive()), sink.clone());
    sink.0.untracked.store(!tracked, Ordering::Relaxed);
    match tapped.downcast::<TensorPrimitive<B>>() {
        Ok(primitive) => Tensor::from_primitive(*primitive),
        // `erased_tap::<B>` is registered under `B`'s type id and returns `B`'s primitive.
        Err(_) => unreachable!("a grad tap returned a tensor of another backend"),
    }
}
