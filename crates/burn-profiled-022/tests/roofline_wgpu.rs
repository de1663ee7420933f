//! Each block's work from its ops' IR on Burn 0.22 (wgpu on Mesa's lavapipe): a matmul and the
//! elementwise ops after it count their FLOPs whether fusion puts them in one block or
//! several, a block's bytes are what it reads from outside and writes, and with device time
//! the rates come from the kernels.
//!
//! One test: the tools a session enables are process-wide and enable-once.

use burn::tensor::{Device, DeviceKind, Tensor, TensorData};
use burn_profiled_022::Session;
use burn_profiled_022::config::RuntimeConfig;
use serde_json::Value;

const STEPS: u64 = 3;

#[test]
fn blocks_count_their_ops_work_from_the_ir_and_rates_come_from_device_time() {
    let device = Device::wgpu(DeviceKind::DefaultDevice);
    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 1;
    config.stats.enabled = true;
    config.stats.device_time = true;
    config.roofline.counts = true;
    config.roofline.peak_tflops = Some(1.0);
    config.roofline.peak_gbps = Some(100.0);
    let mut session = Session::start(config, &device, out.path());

    let x = Tensor::<2>::from_data(TensorData::new(vec![0.25f32; 64 * 64], [64, 64]), &device);
    for _ in 0..=STEPS {
        // 2·64³ FLOPs, then three elementwise ops of 64² each.
        let y = x
            .clone()
            .matmul(x.clone())
            .exp()
            .mul_scalar(0.5)
            .add_scalar(1.0);
        let _ = y.into_data();
        session.finish_iter().expect("no memory limit");
    }
    let summary = session.finish().expect("the run directory is written");

    let ops: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("ops.json")).unwrap())
            .unwrap();
    let rows = ops["rows"].as_array().unwrap();
    let counted: u64 = rows.iter().filter_map(|row| row["flops"].as_u64()).sum();
    assert_eq!(
        counted,
        STEPS * (2 * 64 * 64 * 64 + 3 * 64 * 64),
        "every block's FLOPs, summed over its ops: {ops:#}"
    );
    assert_eq!(ops["work"]["unknown_ops"], serde_json::json!([]), "{ops:#}");
    let matmul = rows
        .iter()
        .find(|row| row["op"].as_str().is_some_and(|op| op.contains("matmul")))
        .expect("a block with the matmul");
    let bytes = matmul["bytes"].as_u64().unwrap();
    assert!(
        bytes >= STEPS * 2 * 64 * 64 * 4,
        "x read once (the same tensor twice), its result written: {matmul}"
    );
    if summary.device_time.is_some_and(|time| time.kernels > 0) {
        assert_eq!(matmul["roofline"]["time"], "device", "{matmul}");
        assert!(matmul["roofline"]["share"].as_f64().is_some(), "{matmul}");
    }
}
