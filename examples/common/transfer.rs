//! Moving a model and its gradients to another device through host memory. burn 0.21 moves
//! tensors between CubeCL devices with the runtime's device-to-device copy, which CubeCL
//! implements on CUDA only (NCCL): on wgpu, tensors go through host memory instead.
// Each user (example, bench, test) uses part of it.
#![allow(dead_code)]

use burn::module::{AutodiffModule, Module, ModuleMapper, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::tensor::Tensor;
use burn::tensor::backend::AutodiffBackend;

/// `model` on `device`, its parameters still trainable (`Module::fork`, through the host).
pub fn fork_via_host<B: AutodiffBackend, M: Module<B>>(model: M, device: &B::Device) -> M {
    struct ViaHost<'a, B: AutodiffBackend>(&'a B::Device);
    impl<B: AutodiffBackend> ModuleMapper<B> for ViaHost<'_, B> {
        fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
            let (id, tensor, mapper) = param.consume();
            let moved = Tensor::from_data(tensor.to_data(), self.0);
            let moved = if tensor.is_require_grad() {
                moved.require_grad()
            } else {
                moved
            };
            Param::from_mapped_value(id, moved, mapper)
        }
    }
    model.map(&mut ViaHost(device))
}

/// `grads` (of `model`'s parameters) on `device` (`GradientsParams::to_device`, through the
/// host).
pub fn grads_via_host<B: AutodiffBackend, M: AutodiffModule<B>>(
    mut grads: GradientsParams,
    model: &M,
    device: &B::Device,
) -> GradientsParams {
    struct ViaHost<'a, B: AutodiffBackend>(&'a B::Device, &'a mut GradientsParams);
    impl<B: AutodiffBackend> ModuleVisitor<B> for ViaHost<'_, B> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            if let Some(grad) = self.1.remove::<B::InnerBackend, D>(param.id) {
                let moved = Tensor::from_data(grad.into_data(), self.0);
                self.1.register::<B::InnerBackend, D>(param.id, moved);
            }
        }
    }
    model.visit(&mut ViaHost::<B>(device, &mut grads));
    grads
}
