//! A step that reads nothing leaves its ops queued in fusion when `finish_iter` comes: the
//! session runs them before it concludes that the device's ops are not visible, so a training
//! loop as the README writes it (no read of the loss) is not told that its ops are invisible,
//! and has its blocks in the op table.
//!
//! The session runs in a child process (this test binary again), whose stderr is read.

use std::process::Command;

use burn::tensor::{Device, DeviceKind, Tensor, TensorData};
use burn_profiled_022::Session;
use burn_profiled_022::config::RuntimeConfig;

const CHILD: &str = "LAZY_STEP_CHILD_OUT";

#[test]
fn a_step_that_reads_nothing_is_not_told_its_ops_are_invisible() {
    if let Some(out) = std::env::var_os(CHILD) {
        return run_session(std::path::Path::new(&out));
    }
    let out = tempfile::tempdir().unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_step_that_reads_nothing_is_not_told_its_ops_are_invisible",
            "--nocapture",
        ])
        .env(CHILD, out.path())
        .output()
        .expect("the test binary runs");
    let stderr = String::from_utf8_lossy(&child.stderr);
    assert!(child.status.success(), "{stderr}");
    assert!(!stderr.contains("are not visible"), "{stderr}");
    let ops = std::fs::read_to_string(out.path().join("ops.json")).expect("ops.json");
    let ops: serde_json::Value = serde_json::from_str(&ops).unwrap();
    let rows = ops["rows"].as_array().expect("rows");
    assert!(!rows.is_empty(), "the steps' blocks are recorded: {ops}");
}

fn run_session(out: &std::path::Path) {
    let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 0;
    config.stats.enabled = true;
    let mut session = Session::start(config, &device, out);
    for _ in 0..2 {
        let x = Tensor::<2>::from_data(TensorData::new(vec![1.0f32; 16], [4, 4]), &device)
            .require_grad();
        let _grads = x.exp().sum().backward();
        session.finish_iter().expect("no memory limit");
    }
    session.finish().expect("the run is written");
}
