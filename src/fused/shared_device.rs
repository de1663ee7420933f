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
//! Which server to create first cannot be read from cubecl-common: its registry is private,
//! and asking it for a server creates that server. Work submitted to a fusion server waits in
//! the device's channel, unseen, until a flush (a read, a sync, a full batch, another server's
//! creation), so "nothing queued" is known only for this crate's server, and only once its
//! fusion thread has started a stream there. Hence two rules:
//!
//! * [`share_device`], for programs that run both backends, creates both servers: this crate's
//!   first when it has started a stream on the device, burn's first otherwise (right after a
//!   run on burn's backend, or before either has touched the device).
//! * A [`Session`](crate::Session) creates no server its program does not use: it waits for
//!   this crate's server when that has started a stream, then for the session's own backend
//!   ([`settle_for_session`]). A program that makes its model on `fused::Wgpu` and then starts
//!   a session meets no creation at all.
//!
//! Every wait here is watched (`stall`): a deadlock that remains is told within 30 s, with the
//! fix.

use std::any::Any;
use std::sync::{Mutex, PoisonError};

use burn_backend::{Backend, DeviceId};
use burn_cubecl::CubeRuntime;
use burn_cubecl::fusion::FusionCubeRuntime;
use burn_fusion::client::GlobalFusionClient;
use burn_std::device::Device;

use super::{ProfiledCubeRuntime, stall};

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
/// Only programs that run both need it. Call it once per device, at one of two moments: before
/// either backend first touches the device (the start of the program), or between the two
/// runs, after the first one's last use (a read of its results: `into_scalar`, `into_data`)
/// and before the second one's first. It waits for what either backend has queued on the
/// device, then creates the fusion server the other needs. Without it, the first use of the
/// second backend can hang for ever inside cubecl-common 0.10 (the module docs say why).
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
/// Called at another moment (a model made on `fused::Wgpu` but not yet run, then this), it may
/// still meet the deadlock: the process then stops within 30 s with this advice, never hangs.
pub fn share_device<R: CubeRuntime>(device: &R::CubeDevice) {
    let _waits = stall::user_thread_waits::<R>(device, "fused::share_device");
    let burns = || GlobalFusionClient::<FusionCubeRuntime<R>>::load(device);
    let ours = || GlobalFusionClient::<ProfiledCubeRuntime<R>>::load(device);
    // Each `load` below creates its server only after the other server's queue has run
    // (`sync` waits for everything queued before it on the fusion thread). This crate's server
    // has queued work only once it exists, and it is known to exist once it started a stream.
    if has_started_a_stream(device) {
        ours().sync(|| ());
        burns().sync(|| ());
    } else {
        burns().sync(|| ());
        ours().sync(|| ());
    }
}

/// Before a [`Session`](crate::Session) on `device`, a device of the fused backend `B`: waits
/// for this crate's fusion server there when it has started a stream (it exists, and may have
/// work queued), then for `B`'s (`B::sync`, which creates `B`'s server if the program has not
/// yet: its first op would). Creates no server the program does not use. Watched (`stall`) on
/// the devices of a runtime this build has (Wgpu, Cuda).
pub(crate) fn settle_for_session<B: Backend>(device: &B::Device) {
    let _waits = drain_ours_if_started(device);
    let _ = B::sync(device);
}

/// Waits for this crate's fusion server on `device` if it has started a stream there; the
/// guard keeps the caller's wait watched until it drops. `None` for a device of no runtime
/// this build has.
fn drain_ours_if_started(device: &dyn Any) -> Option<stall::UserThreadWaits> {
    fn drain<R: CubeRuntime>(device: &R::CubeDevice) -> stall::UserThreadWaits {
        let waits = stall::user_thread_waits::<R>(device, "Session::start");
        if has_started_a_stream(device) {
            GlobalFusionClient::<ProfiledCubeRuntime<R>>::load(device).sync(|| ());
        }
        waits
    }
    #[cfg(feature = "wgpu")]
    if let Some(device) = device.downcast_ref::<burn_cubecl::cubecl::wgpu::WgpuDevice>() {
        return Some(drain::<burn_cubecl::cubecl::wgpu::WgpuRuntime>(device));
    }
    #[cfg(feature = "cuda")]
    if let Some(device) = device.downcast_ref::<burn_cubecl::cubecl::cuda::CudaDevice>() {
        return Some(drain::<burn_cubecl::cubecl::cuda::CudaRuntime>(device));
    }
    let _ = device;
    None
}
