//! CubeCL has one slot for a launch observer. A session recording device time takes it from an
//! observer installed before (burn-instrument, a program's own), records every kernel, and
//! gives the slot back when it finishes.
//!
//! One test: the tools a session enables are process-wide and enable-once.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use burn::tensor::{Device, DeviceKind, Tensor, TensorData};
use burn_profiled_022::Session;
use burn_profiled_022::config::RuntimeConfig;
use cubecl_runtime::logging::{LaunchObservation, LaunchObserver};

#[derive(Default)]
struct CountLaunches(AtomicU64);

impl LaunchObserver for CountLaunches {
    fn launched(&self, _kernel: &'static str) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

fn a_step(device: &Device) {
    let a = Tensor::<2>::from_data(TensorData::new(vec![0.5f32; 256], [16, 16]), device);
    let _ = a.clone().matmul(a).exp().sum().into_data();
}

#[test]
fn a_session_takes_the_slot_from_an_earlier_observer_and_gives_it_back() {
    let device = Device::wgpu(DeviceKind::DefaultDevice);
    let counted = Arc::new(CountLaunches::default());
    let _theirs = LaunchObservation::new(counted.clone());
    a_step(&device);
    let before = counted.0.load(Ordering::Relaxed);
    assert!(
        before > 0,
        "their observer sees launches before the session"
    );

    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 0;
    config.stats.enabled = true;
    config.stats.device_time = true;
    let mut session = Session::start(config, &device, out.path());
    a_step(&device);
    session.finish_iter().expect("no memory limit");
    let summary = session.finish().expect("the run directory is written");

    let device_time = summary.device_time.expect("device time was recorded");
    assert!(
        device_time.kernels > 0,
        "the session recorded the step's kernels: {device_time:?}"
    );
    assert_eq!(
        counted.0.load(Ordering::Relaxed),
        before,
        "their observer saw none while the session held the slot"
    );
    a_step(&device);
    assert!(
        counted.0.load(Ordering::Relaxed) > before,
        "their observer has the slot back once the session finished"
    );
}
