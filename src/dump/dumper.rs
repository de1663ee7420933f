//! [`TensorDumper`]: the core's dumper, which every Burn shares, with what is Burn 0.21's own:
//! its tensors' gradients, gradient taps and ragged batches. The process-wide dumper of
//! [`super::global`] wraps one.

use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn_profiled_core::dump::{self as core_dump, AddOptions, DumpError};

use super::grads::{self, GradValues};
use super::ragged::{self, RaggedBatch};
use super::tap;

burn_profiled_core::tensor_dumper! {
    /// A tensor dumper writing to one directory: the original `TensorDumper` once enabled, as a
    /// value. Use it directly in a test or a tool, or process-wide through [`super::global`].
    /// Everything that is not Burn's own (adding data, ranges, dumping, comparing, counts,
    /// actions, converters) is the core dumper's, which it dereferences to.
    ///
    /// ```
    /// use burn::backend::NdArray;
    /// use burn::tensor::Tensor;
    /// use burn_profiled::dump::{AddOptions, DumpType, Map, TensorDumper};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut dumper = TensorDumper::new(dir.path());
    /// let t = Tensor::<NdArray, 1>::from_floats([1.0, 2.5], &Default::default());
    /// dumper.add_tensor_data("a", Map::new().with("t", t).with("n", 3), AddOptions::new(DumpType::Json)).unwrap();
    /// dumper.dump(true).unwrap();
    /// let text = std::fs::read_to_string(dir.path().join("0/tensors.json")).unwrap();
    /// assert!(text.starts_with("{\n  \"a\": {\n    \"t\": [\n      1.0,"));
    /// ```
    ///
    /// Burn tensors are immutable, so a tensor is read (`into_data`) when it is added: the dump
    /// holds its values at that time. The original keeps a reference, so in-place changes made
    /// before `dump()` show up there.
}

impl TensorDumper {
    /// Places a gradient tap on the intermediate `tensor` and returns the tensor to use from
    /// now on (the same values; an identity op whose backward records the incoming gradient).
    /// The next backward's gradient for it is put at `path` of the gradients by
    /// [`set_gradients`](Self::set_gradients) / [`set_gradients_from`](Self::set_gradients_from)
    /// (`null` if backward did not reach it, the untracked string if it is not tracked or the
    /// backend has no autodiff). Dump type and permutation come from `options`.
    ///
    /// For an autodiff backend, call [`enable_grad_taps`](super::enable_grad_taps) for it
    /// once, else this is a [`DumpError::Gradients`] error. On an error the tensor is dropped
    /// (errors here are programming errors: a bad path or a backend not enabled).
    ///
    /// ```
    /// use burn::backend::{Autodiff, NdArray};
    /// use burn::tensor::Tensor;
    /// use burn_profiled::dump::{AddOptions, DumpType, TensorDumper, enable_grad_taps};
    ///
    /// type B = Autodiff<NdArray>;
    /// enable_grad_taps::<B>();
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut dumper = TensorDumper::new(dir.path());
    /// let x = Tensor::<B, 1>::from_floats([1.0, 2.0], &Default::default()).require_grad();
    /// let y = dumper.grad_tap("y", x * 3.0, AddOptions::new(DumpType::Json)).unwrap();
    /// let _grads = dumper.set_gradients::<B>(y.powi_scalar(2).sum()).unwrap();
    /// dumper.dump(true).unwrap();
    /// let grads = std::fs::read_to_string(dir.path().join("0/grads.json")).unwrap();
    /// assert_eq!(grads, "{\n  \"y\": [\n    6.0,\n    12.0\n  ]\n}"); // dz/dy = 2y
    /// ```
    pub fn grad_tap<B: Backend, const D: usize>(
        &mut self,
        path: &str,
        tensor: Tensor<B, D>,
        options: AddOptions,
    ) -> Result<Tensor<B, D>, DumpError> {
        grad_tap(&mut self.0, path, tensor, options)
    }

    /// Computes the gradients of the added gradient data: sums the scalar `values`, runs
    /// `backward()` once on the sum, and replaces each added tensor by its gradient (`null`
    /// when unused, `` "`.requires_grad == False`" `` when untracked). Returns the gradients.
    ///
    /// Burn 0.21's `backward()` consumes the graph it goes through: a second backward through
    /// the same nodes (even on a clone of the loss) panics in burn-autodiff with "Node should
    /// have a step registered". So either call this *instead of* your own `loss.backward()` and
    /// step the optimizer with the gradients it returns (training is then unchanged), or keep
    /// your backward and pass its gradients to [`set_gradients_from`](Self::set_gradients_from).
    pub fn set_gradients<B: AutodiffBackend>(
        &mut self,
        values: impl GradValues<B>,
    ) -> Result<B::Gradients, DumpError> {
        set_gradients(&mut self.0, values)
    }

    /// Replaces each added gradient tensor by its gradient in `grads` (the result of the
    /// user's `loss.backward()`).
    pub fn set_gradients_from<B: AutodiffBackend>(
        &mut self,
        grads: &B::Gradients,
    ) -> Result<(), DumpError> {
        set_gradients_from::<B>(&mut self.0, grads)
    }
}

/// [`TensorDumper::grad_tap`] on the core's dumper (the process-wide one too).
pub(super) fn grad_tap<B: Backend, const D: usize>(
    dumper: &mut core_dump::TensorDumper,
    path: &str,
    tensor: Tensor<B, D>,
    options: AddOptions,
) -> Result<Tensor<B, D>, DumpError> {
    if !tap::can_tap::<B>(&tensor.device()) {
        // The path is checked first, as before a tap is placed.
        let _ = core_dump::full_path(&[], path)?;
        return Err(DumpError::Gradients(format!(
            "Gradient taps are not enabled for the backend `{0}`: call `burn_profiled::dump::enable_grad_taps::<{0}>()` once",
            std::any::type_name::<B>()
        )));
    }
    let sink = tap::Sink::default();
    dumper.insert_grad_record(path, Box::new(sink.clone()), options)?;
    Ok(tap::tap(tensor, &sink))
}

/// [`TensorDumper::set_gradients`] on the core's dumper.
pub(super) fn set_gradients<B: AutodiffBackend>(
    dumper: &mut core_dump::TensorDumper,
    values: impl GradValues<B>,
) -> Result<B::Gradients, DumpError> {
    let grads = grads::backward(values)?;
    set_gradients_from::<B>(dumper, &grads)?;
    Ok(grads)
}

/// [`TensorDumper::set_gradients_from`] on the core's dumper.
pub(super) fn set_gradients_from<B: AutodiffBackend>(
    dumper: &mut core_dump::TensorDumper,
    grads: &B::Gradients,
) -> Result<(), DumpError> {
    grads::resolve::<B>(dumper.grads_mut(), grads)?;
    dumper.gradients_set();
    Ok(())
}
