//! The backend the single-device examples train on: CUDA with the `cuda` feature, burn's
//! `Wgpu` (Vulkan, Metal, DirectX; Mesa's lavapipe on a machine without GPU) with `wgpu`, each
//! op's range on CubeCL's device thread; NdArray otherwise.
// Each example uses part of it.
#![allow(dead_code)]

use burn::tensor::Device;
use burn_profiled::{LaunchThread, Profiled};

#[cfg(feature = "cuda")]
pub type Training = burn::backend::Autodiff<Profiled<burn::backend::Cuda>>;
#[cfg(all(feature = "wgpu", not(feature = "cuda")))]
pub type Training = burn::backend::Autodiff<Profiled<burn::backend::Wgpu>>;
#[cfg(not(any(feature = "cuda", feature = "wgpu")))]
pub type Training = burn::backend::Autodiff<Profiled<burn::backend::NdArray>>;

/// The launch thread of `device`, where the backend has one.
pub fn launch_thread(device: &Device<Training>) -> Option<LaunchThread> {
    #[cfg(feature = "cuda")]
    return Some(LaunchThread::cubecl::<burn::backend::Cuda>(device));
    #[cfg(all(feature = "wgpu", not(feature = "cuda")))]
    return Some(LaunchThread::cubecl::<burn::backend::Wgpu>(device));
    #[cfg(not(any(feature = "cuda", feature = "wgpu")))]
    {
        let _ = device;
        None
    }
}
