//! Device time per block from CubeCL's launch observer (`[stats] device_time`), no CUPTI: each
//! kernel measured by the device is its block's, in the op table's device columns and on the
//! timeline's device track with a flow from its block; launches timed on the host instead are
//! counted apart, never as device time.
//!
//! One test: the tools a session enables are process-wide and enable-once.

use burn::tensor::{Device, DeviceKind, Tensor, TensorData};
use burn_profiled_022::config::RuntimeConfig;
use burn_profiled_022::{Session, nvtx};
use serde_json::Value;

fn json(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|_| panic!("{path:?} written"));
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("{path:?} is JSON"))
}

#[test]
fn each_kernel_the_device_measured_is_its_blocks_on_the_table_and_the_timeline() {
    let device = Device::wgpu(DeviceKind::DefaultDevice);
    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 1;
    config.nvtx.user_ranges = true;
    config.stats.enabled = true;
    config.stats.device_time = true;
    config.trace.enabled = true;
    let mut session = Session::start(config, &device, out.path());

    let a = Tensor::<2>::from_data(TensorData::new(vec![0.25f32; 64 * 64], [64, 64]), &device);
    for _step in 0..3 {
        nvtx::range_push("forward");
        let b = a.clone().matmul(a.clone()).exp().mul_scalar(0.5);
        let _ = b.sum().into_data();
        nvtx::range_pop(Some("forward"));
        session.finish_iter().expect("no memory limit");
    }
    let summary = session.finish().expect("the run directory is written");

    let run = json(&out.path().join("run.json"));
    let device_time = &run["device_time"];
    assert!(device_time.is_object(), "run.json has device time: {run}");
    let measured = summary.device_time.expect("device time was recorded");
    let host_timed = measured.unattributed.host_timed_kernels;
    assert_eq!(
        device_time["host_timed_kernels"].as_u64().unwrap_or(0),
        host_timed,
        "run.json says how many launches were timed on the host: {device_time}"
    );

    let ops = json(&out.path().join("ops.json"));
    let rows = ops["rows"].as_array().expect("ops.json has rows");
    let forward: Vec<&Value> = rows
        .iter()
        .filter(|row| row["phase"] == "forward")
        .collect();
    assert!(!forward.is_empty(), "the forward's blocks are rows: {ops}");

    if measured.kernels == 0 {
        // The adapter gave no timestamps: every launch was timed on the host, counted apart.
        assert!(host_timed > 0, "no kernel measured and none counted: {run}");
        assert!(
            rows.iter()
                .all(|row| row["device_total_ns"].as_u64().unwrap_or(0) == 0),
            "host timings never reach the device columns: {ops}"
        );
        return;
    }

    assert_eq!(
        measured.unattributed.unattributed_kernels, 0,
        "every kernel launched in a measured step is inside a block: {device_time}"
    );
    let matmul = forward
        .iter()
        .find(|row| row["op"].as_str().unwrap_or("").contains("matmul"))
        .unwrap_or_else(|| panic!("the matmul's block is a forward row: {ops}"));
    assert!(
        matmul["kernels"].as_u64().unwrap_or(0) >= 2,
        "the matmul's block launched its kernels in both measured steps: {matmul}"
    );
    assert!(
        matmul["device_total_ns"].as_u64().unwrap_or(0) > 0,
        "and they took device time: {matmul}"
    );
    assert_eq!(
        ops["total_kernels"].as_u64(),
        Some(measured.kernels),
        "the op table's kernels are the run's: {ops}"
    );

    let trace = json(&out.path().join("trace.json"));
    let events = trace["traceEvents"].as_array().expect("trace events");
    let kernels: Vec<&Value> = events.iter().filter(|e| e["cat"] == "kernel").collect();
    assert_eq!(
        kernels.len() as u64,
        measured.kernels,
        "each kernel is a span of the device track"
    );
    let flows = events.iter().filter(|e| e["cat"] == "ac2g").count();
    assert_eq!(
        flows,
        2 * kernels.len(),
        "each kernel has a flow from its block"
    );
}
