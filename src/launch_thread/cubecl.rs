//! The launch thread of burn's CubeCL backends (`Cuda`, `Wgpu`, ...): CubeCL's device thread,
//! reached through `ComputeClient::exclusive` (blocking) and, for the queue, through a device
//! service of our own on the same device: CubeCL runs every service of a device on one thread,
//! from one FIFO queue, the one the compute server's kernel launches go through.

use std::sync::Arc;

use burn_backend::{Backend, DeviceOps};
use burn_cubecl::cubecl::stream_id::StreamId;
use burn_cubecl::{BoolElement, CubeBackend, CubeRuntime, FloatElement, IntElement};
use burn_std::device::{DeviceId, DeviceService, ServerUtilitiesHandle};
use burn_std::device_handle::DeviceHandle;

use crate::LaunchThread;
use crate::context::memory::DeviceMemory;

/// Reads a device's memory, of a stream or of the calling thread's (`None`).
type StreamMemory = dyn Fn(Option<u64>) -> Option<DeviceMemory> + Send + Sync;

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

/// A burn backend whose kernels are launched on CubeCL's device thread.
///
/// Implemented for `CubeBackend<R, ..>`, the backend behind `Cuda`, `Wgpu`, `Rocm` and `Cpu`
/// when burn's `fusion` feature is off, and (feature `fusion`) for
/// [`fused::Cuda`](crate::fused) and [`fused::Wgpu`](crate::fused), `Fusion<Profiled<..>>`,
/// whose fused blocks and unfused ops run on burn's fusion thread and queue their ranges on
/// the device thread. burn's own fused backends (`Fusion<CubeBackend<..>>`) are refused at
/// compile time: their ops are recorded, and run later fused, out of `Profiled`'s sight.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a CubeCL backend `Profiled` sees the kernels of",
    note = "use `CubeBackend<R, ..>` (burn's `Cuda`, `Wgpu`, ... with burn's `fusion` feature off), or, with fusion, `burn_profiled::fused::Cuda` / `fused::Wgpu` (feature `fusion`): `Profiled` inside `Fusion`"
)]
pub trait CubeclBackend: Backend {
    /// A function that runs a task on the device thread of `device`, blocking until it returns.
    fn device_thread(device: &Self::Device) -> Box<DeviceThread>;
    /// The runtime's name: `cuda`, `wgpu`, ...
    fn runtime_name(device: &Self::Device) -> &'static str;
    /// Reads the memory of `device` through CubeCL's `memory_usage`, in the stream given or
    /// the calling thread's.
    #[doc(hidden)]
    fn memory_reader(device: &Self::Device) -> Box<StreamMemory>;
    /// Whether ops run on a fusion thread that feeds the device thread: then a step must not
    /// run on the device thread (it would deadlock), and [`LaunchThread::run`] refuses it.
    const FUSED: bool = false;
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

    fn memory_reader(device: &R::Device) -> Box<StreamMemory> {
        let client = R::client(device);
        Box::new(move |stream| {
            let read = |client: &burn_cubecl::cubecl::prelude::ComputeClient<R>| {
                client.memory_usage().ok().map(|usage| DeviceMemory {
                    allocations: usage.number_allocs,
                    in_use_bytes: usage.bytes_in_use,
                    reserved_bytes: usage.bytes_reserved,
                })
            };
            match stream {
                None => read(&client),
                Some(value) => {
                    let mut client = client.clone();
                    // SAFETY: the client only reads that stream's memory pool (after running
                    // what is queued on it), on the device thread, as any call of the stream's
                    // own thread would.
                    unsafe { client.set_stream(StreamId { value }) };
                    read(&client)
                }
            }
        })
    }
}

/// The calling thread's CubeCL stream.
fn current_stream() -> u64 {
    StreamId::current().value
}

#[cfg(feature = "fusion")]
impl<R: CubeRuntime, F: FloatElement, I: IntElement, BT: BoolElement> CubeclBackend
    for burn_fusion::Fusion<crate::Profiled<CubeBackend<R, F, I, BT>>>
{
    fn device_thread(device: &R::Device) -> Box<DeviceThread> {
        <CubeBackend<R, F, I, BT> as CubeclBackend>::device_thread(device)
    }

    fn runtime_name(device: &R::Device) -> &'static str {
        <CubeBackend<R, F, I, BT> as CubeclBackend>::runtime_name(device)
    }

    fn memory_reader(device: &R::Device) -> Box<StreamMemory> {
        <CubeBackend<R, F, I, BT> as CubeclBackend>::memory_reader(device)
    }

    const FUSED: bool = true;
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
            .with_queue(move |task| queue.submit(move |_| task.run()))
            .with_stream_memory(current_stream, B::memory_reader(device));
        launch.name_thread();
        // Steps run there (`[nvtx] steps_on_launch_thread`): CubeCL's own thread orders the
        // work of every stream, so its ops are read with the session thread's batch.
        launch.run(crate::numerics_batch::read_with_the_session);
        if B::FUSED {
            return launch.refusing_steps(format!(
                "LaunchThread::run on `{}`, a fused backend: a read or sync in the step would wait \
                 for the fusion thread, which launches its kernels on the device thread the step \
                 holds (a deadlock). Run the step where it is called: the fused blocks and \
                 unfused ops already queue their ranges on this launch thread once it is \
                 attached (`Session::run_step` does this)",
                B::name(device)
            ));
        }
        launch
    }
}
