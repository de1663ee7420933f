//! [`TensorDumper`]: the core's dumper, which every Burn shares, with Burn 0.22's gradients.

use burn::tensor::{Gradients, Tensor};
use burn_profiled_core::dump::{self as core_dump, AddOptions, DumpError};

use super::grads::{self, GradValues};
use super::ragged::{self, RaggedBatch};
use super::tap;

burn_profiled_core::tensor_dumper! {
    /// A tensor dumper writing to one directory: the original `TensorDumper` once enabled, as a
    /// value, writing the same files as Burn 0.21's (a dump of either compares with the other's
    /// and with PyTorch's). Use it directly in a test or a tool, or process-wide through
    /// [`super::global`] (what `[dump] enabled` turns on). Everything that is not Burn's own
    /// (adding data, ranges, dumping, comparing, counts, actions, converters) is the core
    /// dumper's, which it dereferences to.
    ///
    /// ```no_run
    /// use burn::tensor::{Device, DeviceKind, Tensor};
    /// use burn_profiled_022::dump::{AddOptions, DumpType, Map, TensorDumper};
    ///
    /// let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
    /// let mut dumper = TensorDumper::new("target/dumps");
    /// let w = Tensor::<1>::from_floats([1.0, 2.5], &device).require_grad();
    /// let loss = (w.clone() * w.clone()).sum();
    /// dumper.add_tensor_data("step", Map::new().with("w", &w).with("n", 3), AddOptions::new(DumpType::Json)).unwrap();
    /// dumper.add_grad_data("step.w", &w, AddOptions::new(DumpType::Json)).unwrap();
    /// let _grads = dumper.set_gradients(loss).unwrap(); // for the optimizer step
    /// dumper.dump(true).unwrap();
    /// ```
    ///
    /// Tensors are read (`into_data`) when they are added: the dump holds their values at that
    /// time.
}

impl TensorDumper {
    /// Computes the gradients of the added gradient data: sums the scalar `values`, runs
    /// `backward()` once on the sum, and replaces each added tensor by its gradient (`null`
    /// when unused, `` "`.requires_grad == False`" `` when untracked). Returns the gradients.
    ///
    /// Burn 0.22's `backward()` consumes the graph it goes through (there is no
    /// `retain_graph`): call this *instead of* your own `loss.backward()` and step the
    /// optimizer with the gradients it returns, or keep your backward and pass its gradients
    /// to [`set_gradients_from`](Self::set_gradients_from).
    pub fn set_gradients(&mut self, values: impl GradValues) -> Result<Gradients, DumpError> {
        set_gradients(&mut self.0, values)
    }

    /// Replaces each added gradient tensor by its gradient in `grads` (the result of the
    /// user's `loss.backward()`).
    pub fn set_gradients_from(&mut self, grads: &Gradients) -> Result<(), DumpError> {
        set_gradients_from(&mut self.0, grads)
    }

    /// Places a gradient tap on the intermediate `tensor` and returns the tensor to use from
    /// here on (the same values, to the bit): the next gradients set
    /// ([`set_gradients`](Self::set_gradients), [`set_gradients_from`](Self::set_gradients_from))
    /// put the gradient of the loss with respect to it at `path` in `grads.json` (`null` when
    /// the backward did not reach it, `` "`.requires_grad == False`" `` when autodiff does not
    /// track it). Training is unchanged: the tap adds a leaf of negative zeros to the tensor
    /// and reads the leaf's gradient.
    ///
    /// ```no_run
    /// use burn::tensor::{Device, DeviceKind, Tensor};
    /// use burn_profiled_022::dump::{AddOptions, DumpType, TensorDumper};
    ///
    /// let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
    /// let mut dumper = TensorDumper::new("target/dumps");
    /// let x = Tensor::<1>::from_floats([1.0, 2.0], &device).require_grad();
    /// let y = dumper.grad_tap("y", x * 3.0, AddOptions::new(DumpType::Json)).unwrap();
    /// let _grads = dumper.set_gradients(y.powi_scalar(2).sum()).unwrap();
    /// dumper.dump(true).unwrap(); // grads.json: {"y": [6.0, 12.0]}, dz/dy = 2y
    /// ```
    pub fn grad_tap<const D: usize>(
        &mut self,
        path: &str,
        tensor: Tensor<D>,
        options: AddOptions,
    ) -> Result<Tensor<D>, DumpError> {
        tap::grad_tap(&mut self.0, path, tensor, options)
    }
}

/// [`TensorDumper::set_gradients`] on the core's dumper (the process-wide one too).
pub(super) fn set_gradients(
    dumper: &mut core_dump::TensorDumper,
    values: impl GradValues,
) -> Result<Gradients, DumpError> {
    let grads = grads::backward(values)?;
    set_gradients_from(dumper, &grads)?;
    Ok(grads)
}

/// [`TensorDumper::set_gradients_from`] on the core's dumper.
pub(super) fn set_gradients_from(
    dumper: &mut core_dump::TensorDumper,
    grads: &Gradients,
) -> Result<(), DumpError> {
    grads::resolve(dumper.grads_mut(), grads)?;
    dumper.gradients_set();
    Ok(())
}
