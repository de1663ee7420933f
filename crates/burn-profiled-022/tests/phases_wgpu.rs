//! Each block is in the phase (innermost user range) its first op was registered in, though it
//! runs later, on the fusion thread: a forward's ops that fusion holds back until a read in the
//! next phase are still the forward's.
//!
//! One test: the tools a session enables are process-wide and enable-once.

use burn::tensor::{Device, DeviceKind, Tensor, TensorData};
use burn_profiled_022::config::RuntimeConfig;
use burn_profiled_022::{Session, nvtx};

fn rows(dir: &std::path::Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dir.join("ops.json")).expect("the session wrote ops.json");
    let json: serde_json::Value = serde_json::from_str(&text).expect("ops.json is JSON");
    json["rows"]
        .as_array()
        .expect("ops.json has rows")
        .iter()
        .map(|row| {
            (
                row["op"].as_str().unwrap_or_default().to_owned(),
                row["phase"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The start (µs) of the first event named `name` of category `category` in `trace.json`.
fn first_start(trace: &serde_json::Value, category: &str, name: impl Fn(&str) -> bool) -> f64 {
    trace["traceEvents"]
        .as_array()
        .expect("trace events")
        .iter()
        .filter(|event| event["cat"] == category && name(event["name"].as_str().unwrap_or("")))
        .filter_map(|event| event["ts"].as_f64())
        .fold(f64::INFINITY, f64::min)
}

#[test]
fn a_forward_whose_ops_run_during_the_next_phase_keeps_them() {
    let device = Device::wgpu(DeviceKind::DefaultDevice);
    let x = Tensor::<2>::from_data(TensorData::new(vec![0.5f32; 64], [8, 8]), &device);
    let _ = x.clone().into_data(); // on the device before the session

    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 0;
    config.nvtx.user_ranges = true;
    config.stats.enabled = true;
    config.trace.enabled = true;
    let mut session = Session::start(config, &device, out.path());

    nvtx::range_push("forward");
    // Fusion holds these back: nothing reads them yet.
    let y = x.exp().mul_scalar(2.0);
    nvtx::range_pop(Some("forward"));

    nvtx::range_push("backward");
    // The forward's block runs now, during `backward`...
    let _ = y.clone().into_data();
    // ... and these are the backward's own.
    let _ = y.log().add_scalar(1.0).into_data();
    nvtx::range_pop(Some("backward"));

    session.finish_iter().expect("no memory limit");
    session.finish().expect("the run directory is written");

    let rows = rows(out.path());
    let exp: Vec<&(String, String)> = rows.iter().filter(|(op, _)| op.contains("exp")).collect();
    assert!(
        !exp.is_empty(),
        "the forward's ops are in the table: {rows:?}"
    );
    assert!(
        exp.iter().all(|(_, phase)| phase == "forward"),
        "the forward's ops are the forward's, wherever they ran: {rows:?}"
    );
    assert!(
        rows.iter()
            .any(|(op, phase)| op.contains("log") && phase == "backward"),
        "the backward's own ops are the backward's: {rows:?}"
    );

    let trace = std::fs::read_to_string(out.path().join("trace.json")).expect("trace.json");
    let trace: serde_json::Value = serde_json::from_str(&trace).expect("trace.json is JSON");
    let backward_opened = first_start(&trace, "user_annotation", |name| name == "backward");
    let forward_block_ran = first_start(&trace, "cpu_op", |name| name.contains("exp"));
    assert!(
        forward_block_ran >= backward_opened,
        "the forward's block ran during `backward` ({forward_block_ran} µs, `backward` opened \
         at {backward_opened} µs): the test shows nothing otherwise"
    );
}
