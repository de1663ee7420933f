//! Burn's fused GPU backends, profiled from inside (cargo feature `fusion`).
//!
//! burn's default features make `Cuda` and `Wgpu` fused: `Fusion<CubeBackend<..>>`, which
//! records ops and runs them later as fused kernels. `Profiled` outside (`Profiled<Cuda>` with
//! burn's `fusion` feature) only sees ops being recorded. Here it sits inside: `Wgpu` and
//! `Cuda` (features `wgpu`, `cuda`) are `Fusion<Profiled<CubeBackend<..>>>`, with burn's
//! default element types, so
//!
//! * every fused block is an op: an NVTX range (domain `burn`) named for what it fused,
//!   `fused elementwise[add, mul, exp]`, a row of the op table (its shapes are the block's
//!   inputs), a span on the timeline, observers called;
//! * an op the fusion server runs unfused is recorded when it runs, under its Burn name;
//! * both run on burn's fusion thread, which launches their kernels: with the device's launch
//!   thread attached ([`LaunchThread::cubecl`](crate::LaunchThread::cubecl)), their ranges
//!   and device-time tags are queued on CubeCL's device thread around those launches;
//! * a fused block's phase is the phase (innermost user range) of the thread that
//!   *registered* its ops, even when it runs during a later phase.
//!
//! ```no_run
//! use burn::backend::Autodiff;
//! use burn_profiled::fused;
//!
//! type B = Autodiff<fused::Wgpu>; // was: Autodiff<burn::backend::Wgpu> (fused)
//! ```
//!
//! To train on burn's own fused backend and on these in one process (to check that profiling
//! changes nothing), call [`share_device`] before either touches the device, or between the
//! runs: cubecl-common 0.10 otherwise deadlocks there. A program that uses one of them needs
//! nothing, whatever the order of its model and its [`Session`](crate::Session).
//!
//! What is not exact: a block that fused ops of two phases counts in its first op's. Nothing
//! tells an op fusion runs unfused when it was registered: it gets the phase of the last op of
//! the last block its stream ran or, before any block since the stream last ran dry on a read
//! or a sync, the phase its stream is in when it runs (reads and syncs run when asked for, in
//! the phase of the thread waiting for them). That is off for the ops of a new phase that run
//! before its first block, once the registering thread has moved on.

mod backend;
mod block;
mod block_identity;
mod block_io;
mod block_numerics;
mod fuser;
mod registration;
mod runtime;
mod shared_device;
mod stall;
mod wrong_block;

#[doc(hidden)]
pub use crate::fingerprint_kernel::read_fingerprints_whole;
pub use block::{FusedBlock, FusedBlockState};
pub(crate) use shared_device::settle_for_session;
pub use shared_device::share_device;
#[doc(hidden)]
pub use wrong_block::make_block_wrong;

/// The fusion runtime of [`fused::Wgpu`](crate::fused) and [`fused::Cuda`](crate::fused):
/// CubeCL's fusers and optimizations, each optimization run as a [`FusedBlock`] op (its
/// `FusionRuntime` impl is in `runtime.rs`; the type is here, where the blocks that name it
/// and the runtime that names them both find it).
#[derive(Debug)]
pub struct ProfiledCubeRuntime<R: burn_cubecl::CubeRuntime> {
    _runtime: core::marker::PhantomData<R>,
}

#[cfg(feature = "wgpu")]
/// burn's `Wgpu` (fused, as with burn's default features), profiled inside fusion: write
/// `Autodiff<burn_profiled::fused::Wgpu>` where you wrote `Autodiff<Wgpu>`.
pub type Wgpu<F = f32, I = i32, B = u32> = burn_fusion::Fusion<
    crate::Profiled<burn_cubecl::CubeBackend<burn_cubecl::cubecl::wgpu::WgpuRuntime, F, I, B>>,
>;

#[cfg(feature = "cuda")]
/// burn's `Cuda` (fused, as with burn's default features), profiled inside fusion: write
/// `Autodiff<burn_profiled::fused::Cuda>` where you wrote `Autodiff<Cuda>`.
pub type Cuda<F = f32, I = i32> = burn_fusion::Fusion<
    crate::Profiled<burn_cubecl::CubeBackend<burn_cubecl::cubecl::cuda::CudaRuntime, F, I, u8>>,
>;
