//! The fusion runtime of `Profiled<CubeBackend<R, ..>>`: CubeCL's, with each fuser wrapped so
//! that what it fuses becomes an op.

use core::marker::PhantomData;

use burn_cubecl::CubeRuntime;
use burn_cubecl::fusion::FusionCubeRuntime;
use burn_cubecl_fusion::CubeFusionHandle;
use burn_fusion::{FusionRuntime, OperationFuser};

use super::block::{FusedBlock, FusedBlockState};
use super::fuser::BlockFuser;
use super::registration;

/// The fusion runtime of [`fused::Wgpu`](crate::fused) and [`fused::Cuda`](crate::fused):
/// CubeCL's fusers and optimizations, each optimization run as a [`FusedBlock`] op.
#[derive(Debug)]
pub struct ProfiledCubeRuntime<R: CubeRuntime> {
    _runtime: PhantomData<R>,
}

impl<R: CubeRuntime> FusionRuntime for ProfiledCubeRuntime<R> {
    type OptimizationState = FusedBlockState;
    type Optimization = FusedBlock<R>;
    type FusionHandle = CubeFusionHandle<R>;
    type FusionDevice = R::CubeDevice;

    fn fusers(device: R::CubeDevice) -> Vec<Box<dyn OperationFuser<FusedBlock<R>>>> {
        // Called on the fusion thread, for each new stream.
        registration::install::<R>(&device);
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
