//! The launch thread of burn's CubeCL backends (`Cuda`, `Wgpu`, ...): CubeCL's device thread,
//! reached through `ComputeClient::exclusive` (blocking) and, for the queue, through a device
//! service of our own on the same device: CubeCL runs every service of a device on one thread,
//! from one FIFO queue, the one the compute server's kernel launches go through.

use std::sync::Arc;

use burn_backend::{Backend, DeviceOps};
use burn_cubecl::{BoolElement, CubeBackend, CubeRuntime, FloatElement, IntElement};
use burn_std::device::{DeviceId, DeviceService, ServerUtilitiesHandle};
use burn_std::device_handle::DeviceHandle;

use crate::LaunchThread;

/// The device service that runs queued op-range tasks on CubeCL's device thread.
struct OpRangeQueue;

impl DeviceService for OpRangeQueue {
    fn init(_device_id: DeviceId) -> Self {
        OpRangeQueue
    }

    fn utilities(&self) -> ServerUtilitiesHandle {
        Arc::new(())
    }
}

/// Runs a task on a device thread and blocks until it has run.
pub type DeviceThread = dyn Fn(&mut (dyn FnMut() + Send)) -> Result<(), String> + Send + Sync;

/// A burn backend whose kernels are launched on CubeCL's device thread, one op at a time.
///
/// Implemented for `CubeBackend<R, ..>`, the backend behind `Cuda`, `Wgpu`, `Rocm` and `Cpu`
/// when burn's `fusion` feature is off. With fusion, ops are recorded and their kernels are
/// launched later, fused with other ops' work, so no op range could contain "its" kernels:
/// fusion is refused here, at compile time.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a CubeCL backend without fusion",
    note = "ops run on the launch thread only on `CubeBackend<R, ..>` (burn's `Cuda`, `Wgpu`, ... with burn's `fusion` feature off): a fused op launches no kernel of its own"
)]
pub trait CubeclBackend: Backend {
    /// A function that runs a task on the device thread of `device`, blocking until it returns.
    fn device_thread(device: &Self::Device) -> Box<DeviceThread>;
    /// The runtime's name: `cuda`, `wgpu`, ...
    fn runtime_name(device: &Self::Device) -> &'static str;
}

impl<R: CubeRuntime, F: FloatElement, I: IntElement, BT: BoolElement> CubeclBackend
    for CubeBackend<R, F, I, BT>
{
    fn device_thread(device: &R::Device) -> Box<DeviceThread> {
        let client = R::client(device);
        Box::new(move |task| client.exclusive(task).map_err(|error| error.to_string()))
    }

    fn runtime_name(device: &R::Device) -> &'static str {
        R::name(&R::client(device))
    }
}

impl LaunchThread {
    /// The device thread CubeCL launches `device`'s kernels on, for burn's CubeCL backends
    /// (`Cuda`, `Wgpu`, ...), named `cubecl <runtime> <device>` in NVTX (for example
    /// `cubecl cuda Cuda(0)`). Its [queue](LaunchThread::with_queue) is CubeCL's own task
    /// queue of the device, behind the kernel launches queued before: it can be
    /// [attached](LaunchThread::attach).
    ///
    /// ```no_run
    /// use burn::backend::Cuda;
    /// use burn_profiled::{LaunchThread, probe};
    ///
    /// let device = Default::default();
    /// let launch = LaunchThread::cubecl::<Cuda>(&device); // named in NVTX
    /// probe::set_op_ranges(true);
    /// launch.run(|| { /* a training step: every kernel inside its op's range */ });
    /// ```
    pub fn cubecl<B: CubeclBackend>(device: &B::Device) -> Self {
        let name = format!("cubecl {} {device:?}", B::runtime_name(device));
        let queue = DeviceHandle::<OpRangeQueue>::new(device.id());
        let launch = LaunchThread::new::<B>(device.clone(), name, B::device_thread(device))
            .with_queue(move |task| queue.submit(move |_| task.run()));
        launch.name_thread();
        launch
    }
}
