//! A Burn 0.22 training loop on wgpu (Mesa's lavapipe without a GPU; 0.22 fuses by default),
//! profiled by a session on its device: every block the fusion server runs is a row of the op
//! table and a span of the timeline, and the session changes no number the model computes.
//!
//! One test: the tools a session enables are process-wide and enable-once.

use burn::module::Module;
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::activation::relu;
use burn::tensor::{Device, DeviceKind, Tensor, TensorData};
use burn_profiled_022::Session;
use burn_profiled_022::config::RuntimeConfig;

#[derive(Module, Debug)]
struct Net {
    fc1: Linear,
    fc2: Linear,
}

impl Net {
    fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        let hidden = relu(self.fc1.forward(x)).exp().mul_scalar(0.5);
        self.fc2.forward(hidden)
    }
}

/// Values that depend only on their index.
fn data(rows: usize, columns: usize, scale: f32) -> TensorData {
    let values: Vec<f32> = (0..rows * columns)
        .map(|i| ((i * 37 % 101) as f32 / 101.0 - 0.5) * scale)
        .collect();
    TensorData::new(values, [rows, columns])
}

/// Trains the net for `steps` steps from the same seed and data, calling `after_step` after
/// each; the losses, bit for bit.
fn train(device: &Device, steps: usize, mut after_step: impl FnMut()) -> Vec<u32> {
    device.seed(7);
    let mut model = Net {
        fc1: LinearConfig::new(16, 32).init(device),
        fc2: LinearConfig::new(32, 4).init(device),
    };
    let mut optim = AdamConfig::new().init();
    let x = Tensor::<2>::from_data(data(8, 16, 1.0), device);
    let y = Tensor::<2>::from_data(data(8, 4, 0.1), device);
    let mut losses = Vec::new();
    for _ in 0..steps {
        let loss = MseLoss::new().forward(model.forward(x.clone()), y.clone(), Reduction::Mean);
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
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 1;
    config.stats.enabled = true;
    config.trace.enabled = true;
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
}
