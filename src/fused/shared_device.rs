//! One device, two fusion servers: burn's own fused backend and this crate's, made to share a
//! device without the deadlock cubecl-common 0.10 leaves there.
//!
//! Each fused backend has a fusion server of its own, and both run on the device's one fusion
//! thread. cubecl-common 0.10 creates a server the first time its backend touches a device
//! (`ChannelDeviceState::init`): it takes the process-wide registry lock, queues the server's
//! creation on that thread, and waits for it *with the lock held*. If the thread still has work
//! of the other server queued ahead of it, and that work asks the registry for a client (every
//! fuser closing a block does, in `ComputeClient::load`), the fusion thread spins on the lock
//! while the caller waits for the fusion thread: both forever, with no message. A training run
//! leaves such work behind (the tensors it drops), so the first use of the other backend right
//! after it hangs.
//!
//! [`share_device`] creates both servers at a moment the fusion thread has nothing queued, so
//! neither is created later.

use std::sync::{Mutex, PoisonError};

use burn_backend::DeviceId;
use burn_cubecl::CubeRuntime;
use burn_cubecl::fusion::FusionCubeRuntime;
use burn_fusion::client::GlobalFusionClient;
use burn_std::device::Device;

use super::ProfiledCubeRuntime;

/// The devices this crate's fusion server has started a stream on.
static STREAMS_STARTED: Mutex<Vec<DeviceId>> = Mutex::new(Vec::new());

/// This crate's fusion server on `device` starts a stream (on the fusion thread).
pub(super) fn stream_started(device: &impl Device) {
    let id = device.to_id();
    let mut started = STREAMS_STARTED
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if !started.contains(&id) {
        started.push(id);
    }
}

fn has_started_a_stream(device: &impl Device) -> bool {
    let id = device.to_id();
    STREAMS_STARTED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .contains(&id)
}

/// Makes `device` safe to use with both burn's own fused backend (`burn::backend::Wgpu` or
/// `Cuda` with burn's default features, and `Profiled<Fusion<..>>`) and this crate's
/// ([`fused::Wgpu`](crate::fused), [`fused::Cuda`](crate::fused)) in one process, in any order.
///
/// Call it once per device before the second of the two backends first touches the device:
/// at the start of the program, or between the two runs. It waits for what either backend has
/// queued on the device, then creates the fusion server the other needs. A
/// [`Session`](crate::Session) started on a fused device calls it. Without it, the first use of
/// the second backend can hang for ever inside cubecl-common 0.10 (the module docs say why);
/// this crate stops the process with a message where it can see that happen.
///
/// ```no_run
/// use burn::backend::wgpu::{WgpuDevice, WgpuRuntime};
///
/// let device = WgpuDevice::default();
/// burn_profiled::fused::share_device::<WgpuRuntime>(&device);
/// // ... train on `Autodiff<burn::backend::Wgpu>`, then on `Autodiff<burn_profiled::fused::Wgpu>`
/// ```
///
/// It must not run while another thread is submitting work to the device's other backend.
pub fn share_device<R: CubeRuntime>(device: &R::CubeDevice) {
    let burns = || GlobalFusionClient::<FusionCubeRuntime<R>>::load(device);
    let ours = || GlobalFusionClient::<ProfiledCubeRuntime<R>>::load(device);
    // Each `load` below creates its server only after the other server's queue has run
    // (`sync` waits for everything queued before it on the fusion thread). This crate's server
    // has queued work only once it started a stream; before that, creating burn's first is safe.
    if has_started_a_stream(device) {
        ours().sync(|| ());
        burns().sync(|| ());
    } else {
        burns().sync(|| ());
        ours().sync(|| ());
    }
}

/// [`share_device`] for a device of a runtime this build has (Wgpu, Cuda); nothing for others.
pub(crate) fn share_device_if_cubecl(device: &dyn std::any::Any) {
    #[cfg(feature = "wgpu")]
    if let Some(device) = device.downcast_ref::<burn_cubecl::cubecl::wgpu::WgpuDevice>() {
        share_device::<burn_cubecl::cubecl::wgpu::WgpuRuntime>(device);
    }
    #[cfg(feature = "cuda")]
    if let Some(device) = device.downcast_ref::<burn_cubecl::cubecl::cuda::CudaDevice>() {
        share_device::<burn_cubecl::cubecl::cuda::CudaRuntime>(device);
    }
    let _ = device;
}
