//! The train example's model on Burn 0.22 and wgpu (Mesa's lavapipe without a GPU; 0.22 fuses
//! by default), profiled by a session on its device under the `profile` preset: every block
//! the fusion server runs is a row of the op table and a span of the timeline, and the session
//! changes no number the model computes.
//!
//! One test: the tools a session enables are process-wide and enable-once.

use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, DeviceKind, Int, Tensor};
use burn_profiled_022::Session;
use burn_profiled_022::config::{Preset, RuntimeConfig};
use burn_profiled_022::runs::{Run, diff};

#[path = "../examples/common/vision.rs"]
mod vision;
use vision::{VisionModel, generated_batch};

/// Trains the train example's model for `steps` steps from the same seed and data, calling
/// `after_step` after each; the losses, bit for bit.
fn train(device: &Device, steps: usize, mut after_step: impl FnMut()) -> Vec<u32> {
    device.seed(7);
    let mut model = VisionModel::new(device);
    let mut optim = AdamConfig::new().init();
    let mut losses = Vec::new();
    for step in 0..steps {
        let (images, labels) = generated_batch(step, 4);
        let images = Tensor::<4>::from_data(images, device);
        let labels = Tensor::<1, Int>::from_data(labels, device);
        let loss = CrossEntropyLossConfig::new()
            .init(device)
            .forward(model.forward(images), labels);
        losses.push(loss.clone().into_scalar::<f32>().to_bits());
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(1e-2, model, grads);
        after_step();
    }
    losses
}

fn ops_json(dir: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("ops.json")).expect("the session wrote ops.json");
    let json: serde_json::Value = serde_json::from_str(&text).expect("ops.json is JSON");
    json["rows"].as_array().expect("ops.json has rows").clone()
}

#[test]
fn every_fused_block_is_an_op_of_the_table_and_the_losses_do_not_change() {
    let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
    let alone = train(&device, 4, || {});

    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::preset(Preset::Profile);
    config.stopwatch.warmup_iters = 1;
    let mut session = Session::start(config, &device, out.path());
    let profiled = train(&device, 4, || {
        session.finish_iter().expect("no memory limit")
    });
    let summary = session.finish().expect("the run directory is written");

    assert_eq!(
        profiled, alone,
        "the session changed the losses (as f32 bits)"
    );
    assert_eq!(summary.burn_version, "0.22.1", "run.json names Burn 0.22.1");
    assert_eq!(summary.measured_steps, 3);

    let rows = ops_json(out.path());
    let names: Vec<&str> = rows.iter().filter_map(|row| row["op"].as_str()).collect();
    assert!(
        names.iter().any(|name| name.starts_with("fused ")),
        "a fused block is a row of the op table: {names:?}"
    );
    assert!(
        names.iter().any(|name| !name.starts_with("fused ")),
        "an op run unfused is a row under its own name: {names:?}"
    );
    for row in &rows {
        assert!(
            row["calls"].as_u64().is_some_and(|calls| calls >= 1),
            "every row counts its calls: {row}"
        );
    }

    let trace = std::fs::read_to_string(out.path().join("trace.json")).expect("trace.json");
    let trace: serde_json::Value = serde_json::from_str(&trace).expect("trace.json is JSON");
    let ops = trace["traceEvents"]
        .as_array()
        .expect("trace events")
        .iter()
        .filter(|event| event["cat"] == "cpu_op")
        .count();
    assert!(ops > 0, "the blocks are spans of the timeline");

    // A migration check: the same run as Burn 0.21 would have described it, against this one.
    // The diff reads the 0.22 run, says the Burn versions differ, and compares the rest.
    let as_021 = tempfile::tempdir().unwrap();
    for file in ["ops.json", "run.json"] {
        std::fs::copy(out.path().join(file), as_021.path().join(file)).unwrap();
    }
    let run_json = as_021.path().join("run.json");
    let mut summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&run_json).unwrap()).unwrap();
    summary["burn_version"] = "0.21.0".into();
    summary["backend"] = "autodiff<fusion<profiled<cubecl<wgpu>>>>".into();
    std::fs::write(&run_json, summary.to_string()).unwrap();
    let before = Run::open(as_021.path()).expect("a run written as Burn 0.21 writes it reads");
    let after = Run::open(out.path()).expect("the 0.22 run reads as a run");
    let text = diff::compare(&before, &after, diff::DiffSettings::default()).to_string();
    assert!(
        text.contains("  burn: 0.21.0 -> 0.22.1"),
        "the diff says the Burn versions differ: {text}"
    );
    assert!(
        text.contains("ops, host time per step"),
        "and compares the ops: {text}"
    );
}
