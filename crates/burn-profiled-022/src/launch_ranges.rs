//! Block ranges where the kernels are launched.
//!
//! burn-fusion runs a block on its fusion thread, but each kernel it launches is submitted to
//! the compute server's runner (cubecl's downstream stage: the thread that makes the CUDA or
//! wgpu calls), where it runs later. An NVTX range pushed on the fusion thread would not
//! contain them under Nsight Systems. So the fusion thread submits the range's push to that
//! runner as the block starts, and its pop as the block ends: the runner takes every service's
//! tasks of one device from one FIFO, so the range opens before the block's first launch and
//! closes after its last, on the thread that makes them.

use std::sync::Arc;

use burn::tensor::Device;
use burn_profiled_core::context::op::Op;
use burn_profiled_core::sinks::op_ranges;
use burn_std::DeviceHandle;
use burn_std::device::ServerUtilitiesHandle;
use burn_std::device::{Device as _, DeviceId, DeviceService, DeviceServiceStage};

/// A service on the compute server's runner, whose tasks push and pop block ranges there.
pub(crate) struct LaunchRunner;

impl DeviceService for LaunchRunner {
    fn init(_device_id: DeviceId) -> Self {
        LaunchRunner
    }

    fn utilities(&self) -> ServerUtilitiesHandle {
        Arc::new(())
    }

    fn stage() -> DeviceServiceStage {
        // Where cubecl's compute server runs (`cubecl-runtime@0.11.4:src/client.rs`).
        DeviceServiceStage::Downstream
    }
}

/// The id of the compute server of a CubeCL `device`: the runtime's own device id, which
/// cubecl's device enum (the id burn's dispatch device and the fusion server carry) stamps
/// with the runtime in bits 5 to 7 of the type id (`cubecl@0.11.3:src/device.rs`,
/// `RuntimeId::strip`).
pub(crate) fn compute_device_id(device: &Device) -> DeviceId {
    let stamped = device.clone().without_autodiff().as_dispatch().to_id();
    DeviceId::new(stamped.type_id & 0x1F, stamped.index_id)
}

/// The compute server's runner of `device`, for block ranges. Call with the calling thread's
/// queued work run (see `phases::follow`).
pub(crate) fn runner(device: &Device) -> DeviceHandle<LaunchRunner> {
    DeviceHandle::new(compute_device_id(device))
}

/// Opens `op`'s range on the runner, before the launches submitted after it.
pub(crate) fn push(runner: &DeviceHandle<LaunchRunner>, op: &'static Op) {
    runner.submit(move |_| op_ranges::push_op(op));
}

/// Closes the range [`push`] opened, after the launches submitted before it.
pub(crate) fn pop(runner: &DeviceHandle<LaunchRunner>) {
    runner.submit(|_| op_ranges::pop_op());
}
