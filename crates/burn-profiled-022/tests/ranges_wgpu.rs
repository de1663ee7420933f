//! Under the NVTX recorder: each block's range opens and closes on the thread that launches its
//! kernels (cubecl's compute runner, not the fusion thread), so under Nsight Systems every
//! kernel launch the launch observer saw is inside a block's range.
//!
//! One test: the tools a session enables are process-wide and enable-once.

nvtx_recorder::install_static!();

use std::ffi::CString;
use std::sync::Arc;

use burn::tensor::{Device, DeviceKind, Tensor, TensorData};
use burn_profiled_022::Session;
use burn_profiled_022::config::RuntimeConfig;
use burn_std::DeviceHandle;
use burn_std::device::{
    Device as _, DeviceId, DeviceService, DeviceServiceStage, ServerUtilitiesHandle,
};
use cubecl_runtime::logging::{LaunchObservation, LaunchObserver};
use nvtx_recorder::Kind;

/// A service on the compute server's runner: the test's way onto the launching thread.
struct OnLaunchThread;

impl DeviceService for OnLaunchThread {
    fn init(_device_id: DeviceId) -> Self {
        OnLaunchThread
    }
    fn utilities(&self) -> ServerUtilitiesHandle {
        Arc::new(())
    }
    fn stage() -> DeviceServiceStage {
        DeviceServiceStage::Downstream
    }
}

/// Marks each launch on the launching thread, queued right before the launch itself.
struct MarkLaunches(DeviceHandle<OnLaunchThread>);

impl LaunchObserver for MarkLaunches {
    fn launched(&self, kernel: &'static str) {
        let name = CString::new(format!("launch {kernel}")).unwrap();
        self.0.submit(move |_| nvtx::mark_ascii(&name));
    }
}

#[test]
fn every_kernel_launch_is_inside_a_block_range_on_the_thread_that_launches_it() {
    let device = Device::wgpu(DeviceKind::DefaultDevice);
    let x = Tensor::<2>::from_data(TensorData::new(vec![0.25f32; 256], [16, 16]), &device);
    let _ = x.clone().into_data();

    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 0;
    config.nvtx.op_ranges = true;
    config.stats.enabled = true;
    let mut session = Session::start(config, &device, out.path());

    // The compute server's id: the runtime's own, without cubecl's runtime tag.
    let stamped = device.as_dispatch().to_id();
    let launcher = DeviceHandle::<OnLaunchThread>::new(DeviceId::new(
        stamped.type_id & 0x1F,
        stamped.index_id,
    ));
    let launch_tid = launcher
        .submit_blocking(|_| nvtx_recorder::current_tid())
        .expect("the compute runner answers");
    assert_ne!(launch_tid, nvtx_recorder::current_tid());
    let observation = LaunchObservation::new(Arc::new(MarkLaunches(launcher.clone())));

    let y = x.clone().exp().mul_scalar(2.0).matmul(x).sum();
    let _ = y.into_data();
    session.finish_iter().expect("no memory limit");
    drop(observation);
    session.finish().expect("the run directory is written");
    launcher
        .submit_blocking(|_| ())
        .expect("the compute runner ran what was queued");

    let events = nvtx_recorder::events_of_thread(launch_tid);
    let mut depth = 0i32;
    let (mut ranges, mut launches) = (0, 0);
    for event in &events {
        match (event.kind, event.domain.as_deref()) {
            (Kind::Push, Some("burn")) => {
                depth += 1;
                ranges += 1;
            }
            (Kind::Pop, Some("burn")) => {
                depth -= 1;
                assert!(
                    depth >= 0,
                    "a block range popped that was not pushed: {events:?}"
                );
            }
            (Kind::Mark, None) => {
                let text = event.message.text().unwrap_or_default();
                if text.starts_with("launch ") {
                    launches += 1;
                    assert!(
                        depth >= 1,
                        "`{text}` is outside every block range: {events:?}"
                    );
                }
            }
            _ => {}
        }
    }
    assert_eq!(depth, 0, "every block range is closed: {events:?}");
    assert!(launches > 0, "the launch observer saw launches: {events:?}");
    assert!(
        ranges > 0,
        "block ranges are on the launching thread: {events:?}"
    );
    let fusion_ranges = nvtx_recorder::events()
        .into_iter()
        .filter(|e| {
            e.tid != launch_tid && e.kind == Kind::Push && e.domain.as_deref() == Some("burn")
        })
        .count();
    assert_eq!(fusion_ranges, 0, "no block range is pushed elsewhere");
}
