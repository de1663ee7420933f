//! Holistic Trace Analysis (HTA), PyTorch's trace analysis tool, reads a Burn 0.22 run's
//! `trace.json` as it reads a Burn 0.21 run's (burn-profiled's `tests/hta.rs`): one profiler
//! step per measured step, the blocks of the steps as CPU ops, as many of each as `ops.json`
//! counts, and the kernels the launch observer timed, with HTA's breakdowns of their time.
//!
//! Needs HTA: `scripts/hta-venv.sh` makes it a virtual environment; `.ci/run` runs this with
//! `cargo test -p burn-profiled-022 --test hta_wgpu -- --ignored`.

use std::collections::BTreeMap;

use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, DeviceKind, Int, Tensor};
use burn_profiled_022::Session;
use burn_profiled_022::config::RuntimeConfig;
use serde_json::Value;

#[path = "../examples/common/vision.rs"]
mod vision;
use vision::{VisionModel, generated_batch};

#[path = "../../../tests/support/hta.rs"]
#[allow(dead_code)]
mod hta;

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
#[ignore = "needs HTA: scripts/hta-venv.sh, then cargo test -p burn-profiled-022 --test hta_wgpu -- --ignored"]
fn hta_finds_each_measured_step_its_blocks_and_the_kernels_the_device_timed() {
    let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 1;
    config.nvtx.user_ranges = true;
    config.stats.enabled = true;
    config.stats.device_time = true;
    config.trace.enabled = true;
    let mut session = Session::start(config, &device, out.path());
    device.seed(7);
    let mut model = VisionModel::new(&device);
    let mut optim = AdamConfig::new().init();
    for step in 0..5 {
        let (images, labels) = generated_batch(step, 4);
        let images = Tensor::<4>::from_data(images, &device);
        let labels = Tensor::<1, Int>::from_data(labels, &device);
        let loss = CrossEntropyLossConfig::new()
            .init(&device)
            .forward(model.forward(images), labels);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(1e-2, model, grads);
        // Every block of the step runs before it ends: HTA places CPU ops by time.
        device.sync().unwrap();
        session.finish_iter().unwrap();
    }
    session.finish().unwrap();

    let hta = hta::analyse(out.path());
    let run = read_json(&out.path().join("run.json"));
    let ops = read_json(&out.path().join("ops.json"));
    assert_eq!(hta["profiler_steps"], serde_json::json!([1, 2, 3, 4]));

    let mut calls: BTreeMap<String, u64> = BTreeMap::new();
    for row in ops["rows"].as_array().unwrap() {
        *calls
            .entry(row["op"].as_str().unwrap().to_owned())
            .or_default() += row["calls"].as_u64().unwrap();
    }
    let mut in_steps: BTreeMap<String, u64> = hta["cpu_ops_in_steps"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(op, n)| (op.clone(), n.as_u64().unwrap()))
        .collect();
    // The last step's tensors are freed after it ended (their `drop` blocks in no step).
    let (drops, drops_in_steps) = (
        calls.remove("drop").unwrap_or(0),
        in_steps.remove("drop").unwrap_or(0),
    );
    assert!(
        drops_in_steps <= drops,
        "{drops_in_steps} drops in steps, {drops} in all"
    );
    assert_eq!(
        in_steps, calls,
        "HTA's CPU ops in the steps are ops.json's blocks"
    );

    let kernels = run["device_time"]["kernels"].as_u64().unwrap();
    assert!(kernels > 0, "{run}");
    assert_eq!(
        hta["kernels"], kernels,
        "HTA sees every kernel the device timed"
    );
    let breakdown: f64 = hta["kernel_breakdown"]
        .as_object()
        .unwrap()
        .values()
        .map(|us| us.as_f64().unwrap())
        .sum();
    let device_us = run["device_time"]["device_ns"].as_u64().unwrap() as f64 / 1e3;
    // HTA reads each kernel's `ts` and `dur` as whole microseconds: up to 1 us lost per kernel
    // (lavapipe's kernels are short: 564 of them once lost 1.0% of 57 ms).
    let truncation_us = kernels as f64;
    assert!(
        (breakdown - device_us).abs() <= truncation_us + 0.005 * device_us,
        "HTA's kernel breakdown {breakdown} us, ops.json's device time {device_us} us, {kernels} kernels"
    );
    let temporal = &hta["temporal"];
    let (idle, compute) = (
        temporal["idle_time(us)"].as_f64().unwrap(),
        temporal["compute_time(us)"].as_f64().unwrap(),
    );
    assert!(compute > 0.0 && idle >= 0.0, "{temporal}");
}
