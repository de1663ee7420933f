//! Forward links on Burn 0.22 (`[stats] forward_links`, lavapipe): each backward and optimizer
//! block is linked to the forward block whose tensors it reads, from the IR's tensor ids, so
//! the user's forward ranges cover the backward. A two-module model: `conv` with only a
//! convolution, `head` with only linear layers, each in its user range, trained with Adam.
//!
//! One test: the tools a session enables are process-wide and enable-once.

nvtx_recorder::install_static!();

use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::activation::relu;
use burn::tensor::{Device, DeviceKind, Distribution, Tensor};
use burn_profiled_022::config::RuntimeConfig;
use burn_profiled_022::{Session, nvtx};
use serde_json::Value;

#[derive(Module, Debug)]
struct TwoModules {
    conv: Conv2d,
    hidden: Linear,
    out: Linear,
}

impl TwoModules {
    fn new(device: &Device) -> Self {
        TwoModules {
            conv: Conv2dConfig::new([1, 2], [3, 3]).init(device),
            hidden: LinearConfig::new(2 * 6 * 6, 8).init(device),
            out: LinearConfig::new(8, 3).init(device),
        }
    }

    /// The loss of a batch: the convolution in `conv`; the rest, loss included, in `head`.
    fn loss(&self, images: Tensor<4>) -> Tensor<1> {
        let features = nvtx::scope("conv", || self.conv.forward(images));
        nvtx::scope("head", || {
            let flat: Tensor<2> = features.flatten(1, 3);
            let hidden = relu(self.hidden.forward(flat));
            self.out.forward(hidden).powf_scalar(2.0).mean()
        })
    }
}

fn json(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `ops.json`'s rows of `phase`: (op, forward phase, calls).
fn rows_of(ops: &Value, phase: &str) -> Vec<(String, Option<String>, u64)> {
    (ops["rows"].as_array().expect("rows").iter())
        .filter(|row| row["phase"] == phase)
        .map(|row| {
            (
                row["op"].as_str().unwrap_or_default().to_owned(),
                row["forward_phase"].as_str().map(str::to_owned),
                row["calls"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn backward_and_optimizer_blocks_take_the_forward_phase_of_the_module_they_work_for() {
    let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
    device.seed(0);
    let mut model = TwoModules::new(&device);
    let mut optimizer = AdamConfig::new().init();
    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 1;
    config.nvtx.user_ranges = true;
    config.stats.enabled = true;
    config.stats.forward_links = true;
    config.trace.enabled = true;
    config.nvtx.op_ranges = true;
    let mut session = Session::start(config, &device, out.path());
    for _ in 0..3 {
        let images = Tensor::<4>::random([4, 1, 8, 8], Distribution::Default, &device);
        let loss = model.loss(images);
        let grads = nvtx::scope("backward", || loss.backward());
        model = nvtx::scope("optimizer", || {
            let grads = GradientsParams::from_grads(grads, &model);
            optimizer.step(1e-3, model, grads)
        });
        let _ = loss.into_scalar::<f32>();
        session.finish_iter().expect("no memory limit");
    }
    session.finish().expect("the run directory is written");

    let ops = json(&out.path().join("ops.json"));
    let backward = rows_of(&ops, "backward");
    let forward_phase_of = |name: &str| -> Vec<Option<&str>> {
        (backward.iter())
            .filter(|(op, _, _)| op.contains(name))
            .map(|(_, forward, _)| forward.as_deref())
            .collect()
    };
    // The convolution's backward blocks work for `conv`, the matmuls' for `head`.
    let conv = forward_phase_of("conv");
    assert!(!conv.is_empty(), "{backward:#?}");
    assert!(
        conv.iter().all(|phase| *phase == Some("conv")),
        "{backward:#?}"
    );
    let matmul = forward_phase_of("matmul");
    assert!(!matmul.is_empty(), "{backward:#?}");
    assert!(
        matmul.iter().all(|phase| *phase == Some("head")),
        "{backward:#?}"
    );
    // Every backward block is linked.
    assert!(
        backward.iter().all(|(_, forward, _)| forward.is_some()),
        "{backward:#?}"
    );
    // Adam's blocks work for the module of the parameters they update: both modules', none
    // unlinked.
    let optimizer_rows = rows_of(&ops, "optimizer");
    let calls = |module: &str| -> u64 {
        (optimizer_rows.iter())
            .filter(|(_, forward, _)| forward.as_deref() == Some(module))
            .map(|(_, _, calls)| calls)
            .sum()
    };
    assert!(
        calls("conv") > 0 && calls("head") > 0,
        "{optimizer_rows:#?}"
    );
    assert!(
        (optimizer_rows.iter())
            .all(|(_, forward, _)| matches!(forward.as_deref(), Some("conv" | "head"))),
        "{optimizer_rows:#?}"
    );

    // The time per module: `conv` and `head` with their backward and optimizer time.
    let modules = json(&out.path().join("ops_by_module.json"));
    let module = |name: &str| -> &Value {
        (modules["modules"].as_array().expect("modules").iter())
            .find(|row| row["module"] == name)
            .unwrap_or_else(|| panic!("{name} in {modules}"))
    };
    for name in ["conv", "head"] {
        assert!(module(name)["backward_ns"].as_u64() > Some(0), "{modules}");
        assert!(module(name)["optimizer_ns"].as_u64() > Some(0), "{modules}");
    }

    // trace.json: a `fwdbwd` flow from a forward block to each backward block call.
    let trace = json(&out.path().join("trace.json"));
    let events = trace["traceEvents"].as_array().expect("traceEvents");
    let flow_ends = (events.iter())
        .filter(|e| e["cat"] == "fwdbwd" && e["ph"] == "f")
        .count() as u64;
    let backward_calls: u64 = backward.iter().map(|(_, _, calls)| calls).sum();
    assert_eq!(flow_ends, backward_calls);

    // NVTX: a backward block's range carries the forward block's call as its payload, as
    // `emit_nvtx`'s sequence numbers (the ranges open on the thread that launches kernels).
    let pushes: Vec<(String, Option<nvtx_recorder::Payload>)> = (nvtx_recorder::events().iter())
        .filter(|e| e.kind == nvtx_recorder::Kind::Push && e.domain.as_deref() == Some("burn"))
        .map(|e| (e.message.text().unwrap_or_default().to_owned(), e.payload))
        .collect();
    let payloads_of = |op: &str| -> Vec<Option<nvtx_recorder::Payload>> {
        (pushes.iter())
            .filter(|(name, _)| name == op)
            .map(|(_, payload)| *payload)
            .collect()
    };
    let convolutions = payloads_of("conv2d");
    assert!(!convolutions.is_empty(), "{pushes:?}");
    assert!(
        (convolutions.iter()).all(|p| matches!(p, Some(nvtx_recorder::Payload::U64(_)))),
        "{pushes:?}"
    );
    let weight_backward = payloads_of("conv2d_weight_backward");
    assert!(!weight_backward.is_empty(), "{pushes:?}");
    assert!(
        weight_backward.iter().all(|p| convolutions.contains(p)),
        "{pushes:?}"
    );
}
