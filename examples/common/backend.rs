//! The backend the single-device examples train on: with the `cuda` feature CUDA, with `wgpu`
//! burn's `Wgpu` (Vulkan, Metal, DirectX; Mesa's lavapipe on a machine without GPU), fused as
//! with burn's default features and profiled inside fusion (`burn_profiled::fused`), each
//! fused block and unfused op's range on CubeCL's device thread; `--unfused` selects the same
//! GPU backend without fusion, to compare. NdArray otherwise (never fused).
// Each example uses part of it.
#![allow(dead_code)]

use burn::backend::Autodiff;
use burn::tensor::Device;
#[cfg(any(feature = "cuda", feature = "wgpu"))]
use burn_profiled::fused;
use burn_profiled::{LaunchThread, Profiled};

#[cfg(feature = "cuda")]
pub type Training = Autodiff<fused::Cuda>;
#[cfg(feature = "cuda")]
pub type Unfused = Autodiff<Profiled<burn::backend::Cuda>>;
#[cfg(all(feature = "wgpu", not(feature = "cuda")))]
pub type Training = Autodiff<fused::Wgpu>;
#[cfg(all(feature = "wgpu", not(feature = "cuda")))]
pub type Unfused = Autodiff<Profiled<burn::backend::Wgpu>>;
#[cfg(not(any(feature = "cuda", feature = "wgpu")))]
pub type Training = Autodiff<Profiled<burn::backend::NdArray>>;
#[cfg(not(any(feature = "cuda", feature = "wgpu")))]
pub type Unfused = Training;

/// The launch thread of `device` for [`Training`], where the backend has one.
pub fn launch_thread(device: &Device<Training>) -> Option<LaunchThread> {
    #[cfg(feature = "cuda")]
    return Some(LaunchThread::cubecl::<fused::Cuda>(device));
    #[cfg(all(feature = "wgpu", not(feature = "cuda")))]
    return Some(LaunchThread::cubecl::<fused::Wgpu>(device));
    #[cfg(not(any(feature = "cuda", feature = "wgpu")))]
    {
        let _ = device;
        None
    }
}

/// The launch thread of `device` for [`Unfused`], where the backend has one.
pub fn unfused_launch_thread(device: &Device<Unfused>) -> Option<LaunchThread> {
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
