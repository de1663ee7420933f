//! cubecl's device runners, reached through a service of this crate's: a task submitted to it
//! runs on the runner's thread in one FIFO with every other service's tasks of that device and
//! stage (`cubecl-common@0.11.4:src/device/handle/channel.rs`). The fusion runner is where
//! burn-fusion registers ops and runs blocks; the compute runner is where cubecl's compute
//! server launches their kernels.

use std::sync::Arc;

use burn::tensor::Device;
use burn_std::DeviceHandle;
use burn_std::device::ServerUtilitiesHandle;
use burn_std::device::{Device as _, DeviceId, DeviceService, DeviceServiceStage};

/// A service that holds nothing: its tasks are what runs. `DOWNSTREAM` picks the compute
/// server's stage, else the fusion server's.
pub(crate) struct Tasks<const DOWNSTREAM: bool>;

impl<const DOWNSTREAM: bool> DeviceService for Tasks<DOWNSTREAM> {
    fn init(_device_id: DeviceId) -> Self {
        Tasks
    }

    fn utilities(&self) -> ServerUtilitiesHandle {
        Arc::new(())
    }

    fn stage() -> DeviceServiceStage {
        match DOWNSTREAM {
            true => DeviceServiceStage::Downstream,
            false => DeviceServiceStage::Upstream,
        }
    }
}

/// The fusion thread's runner.
pub(crate) type FusionRunner = DeviceHandle<Tasks<false>>;
/// The runner where kernels are launched.
pub(crate) type ComputeRunner = DeviceHandle<Tasks<true>>;

/// The fusion and compute runners of a CubeCL `device`.
///
/// The fusion server carries the id of cubecl's device enum, which burn's dispatch device
/// gives; the compute server the runtime's own id, which the enum stamps with the runtime in
/// bits 5 to 7 of the type id (`cubecl@0.11.3:src/device.rs`, `RuntimeId::strip`).
///
/// Call with the calling thread's queued work run (`device.sync()`): cubecl holds its
/// registry's lock while it makes a service on a runner, and a runner with work queued that
/// itself opens a client would wait for it for ever.
pub(crate) fn of(device: &Device) -> (FusionRunner, ComputeRunner) {
    let fusion = device.clone().without_autodiff().as_dispatch().to_id();
    let compute = DeviceId::new(fusion.type_id & 0x1F, fusion.index_id);
    (DeviceHandle::new(fusion), DeviceHandle::new(compute))
}
