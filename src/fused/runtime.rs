//! The fusion runtime of `Profiled<CubeBackend<R, ..>>`: CubeCL's, with each fuser wrapped so
//! that what it fuses becomes an op.

use burn_cubecl::CubeRuntime;
use burn_cubecl::fusion::FusionCubeRuntime;
use burn_cubecl_fusion::CubeFusionHandle;
use burn_fusion::{FusionRuntime, OperationFuser};

use super::block::{FusedBlock, FusedBlockState};
use super::fuser::BlockFuser;
use super::{ProfiledCubeRuntime, registration, shared_device, stall};

impl<R: CubeRuntime> FusionRuntime for ProfiledCubeRuntime<R> {
    type OptimizationState = FusedBlockState;
    type Optimization = FusedBlock<R>;
    type FusionHandle = CubeFusionHandle<R>;
    type FusionDevice = R::CubeDevice;

    fn fusers(device: R::CubeDevice) -> Vec<Box<dyn OperationFuser<FusedBlock<R>>>> {
        // Called on the fusion thread, for each new stream. `install_registration` and CubeCL's
        // fusers ask CubeCL's registry for a client: a watched wait.
        shared_device::stream_started(&device);
        stall::watch_this_fusion_thread::<R>(&device);
        let _busy = stall::fusion_thread_busy();
        install_registration::<R>(&device);
        registration::on_fusion_thread(&device);
        FusionCubeRuntime::<R>::fusers(device.clone())
            .into_iter()
            .map(|inner| {
                Box::new(BlockFuser::new(inner, device.clone()))
                    as Box<dyn OperationFuser<FusedBlock<R>>>
            })
            .collect()
    }
}

/// Starts logging phase changes (`registration`), once: called where a fused device is first
/// seen.
pub(super) fn install_registration<R: CubeRuntime>(device: &R::CubeDevice) {
    if registration::is_installed() {
        return;
    }
    let client = burn_fusion::client::GlobalFusionClient::<ProfiledCubeRuntime<R>>::load(device);
    registration::install(move || client.create_empty_handle());
}
