//! The graph of a step on Burn 0.22 (`[memory] graph = true`, lavapipe): the blocks fusion ran
//! for the first measured step, with the IR's tensors, their producer and consumer edges, their
//! ends from the IR's drops and last reads, and each backward and optimizer block's forward
//! block.
//!
//! One test: the tools a session enables are process-wide and enable-once.

use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::optim::{GradientsParams, SgdConfig};
use burn::tensor::activation::relu;
use burn::tensor::{Device, DeviceKind, Tensor};
use burn_profiled_022::config::RuntimeConfig;
use burn_profiled_022::{Session, nvtx};
use serde_json::{Value, json};

#[derive(Module, Debug)]
struct TwoLayers {
    hidden: Linear,
    out: Linear,
}

fn at<'a>(list: &'a Value, index: &Value) -> &'a Value {
    &list[index
        .as_u64()
        .unwrap_or_else(|| panic!("an index: {index}")) as usize]
}

#[test]
fn the_graph_of_the_first_measured_step_has_the_blocks_their_tensors_and_their_ends() {
    let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
    device.seed(0);
    let mut model = TwoLayers {
        hidden: LinearConfig::new(32, 64).init(&device),
        out: LinearConfig::new(64, 8).init(&device),
    };
    let mut optimizer = SgdConfig::new().init();
    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 1;
    config.nvtx.user_ranges = true;
    config.memory.graph = true;
    let mut session = Session::start(config, &device, out.path());
    for _ in 0..3 {
        let x = Tensor::<2>::ones([16, 32], &device);
        let hidden = nvtx::scope("hidden", || relu(model.hidden.forward(x)));
        let loss = nvtx::scope("head", || model.out.forward(hidden).powf_scalar(2.0).mean());
        let grads = nvtx::scope("backward", || loss.backward());
        model = nvtx::scope("optimizer", || {
            let grads = GradientsParams::from_grads(grads, &model);
            optimizer.step(1e-2, model, grads)
        });
        let _ = loss.into_scalar::<f32>();
        session.finish_iter().expect("no memory limit");
    }
    let summary = session.finish().expect("the run directory is written");
    let path = out.path().join("graph.json");
    assert!(summary.files.contains(&path), "{:?}", summary.files);
    let text = std::fs::read_to_string(&path).unwrap();
    let graph: Value = serde_json::from_str(&text).expect("graph.json is JSON");

    assert_eq!(graph["format_version"], 1);
    assert_eq!(graph["step"], 1);
    assert_eq!(graph["frees"], "ir");
    assert_eq!(graph["ops_with_unknown_tensors"], 0);
    let (ops, tensors) = (&graph["ops"], &graph["tensors"]);
    let op_list = ops.as_array().unwrap();
    // Each pass has blocks, in their ranges (the batch is made outside any).
    for (pass, phases) in [
        ("forward", &["-", "hidden", "head"][..]),
        ("backward", &["backward"]),
        ("optimizer", &["optimizer"]),
    ] {
        let of_pass: Vec<&Value> = op_list.iter().filter(|op| op["pass"] == pass).collect();
        assert!(!of_pass.is_empty(), "no {pass} block: {text}");
        assert!(
            of_pass
                .iter()
                .all(|op| phases.contains(&op["phase"].as_str().unwrap())),
            "{pass}: {of_pass:#?}"
        );
    }
    for module in ["hidden", "head"] {
        assert!(op_list.iter().any(|op| op["phase"] == module), "{text}");
    }
    // Every backward block names a forward block of this step.
    for op in op_list.iter().filter(|op| op["pass"] == "backward") {
        let forward = at(ops, &op["forward"]["index"]);
        assert_eq!(forward["pass"], "forward", "{op}");
        assert_eq!(forward["op"], op["forward"]["op"], "{op}");
    }
    // Each edge joins the block that made a tensor to one that read it.
    let edges = graph["edges"].as_array().unwrap();
    assert!(!edges.is_empty());
    for edge in edges {
        let tensor = &edge["tensor"];
        assert!(
            at(ops, &edge["from"])["outputs"]
                .as_array()
                .unwrap()
                .contains(tensor),
            "{edge}"
        );
        assert!(
            at(ops, &edge["to"])["inputs"]
                .as_array()
                .unwrap()
                .contains(tensor),
            "{edge}"
        );
        assert_eq!(at(tensors, tensor)["made_by"], edge["from"], "{edge}");
    }
    // The hidden activations (16x64 f32, made in the forward) end within the step, after
    // their last read; the updated hidden weights (32x64, made by the optimizer's update,
    // which fusion may put in the block of the gradient's matmul) outlive it.
    let made_in_pass = |pass: &str, shape: Value| -> Vec<&Value> {
        (tensors.as_array().unwrap().iter())
            .filter(|t| t["shape"] == shape && !t["made_by"].is_null())
            .filter(|t| at(ops, &t["made_by"])["pass"] == pass)
            .collect()
    };
    let activations = made_in_pass("forward", json!([16, 64]));
    assert!(!activations.is_empty(), "{text}");
    for activation in &activations {
        assert_eq!(activation["bytes"], 16 * 64 * 4);
        let freed = activation["freed_at"]
            .as_u64()
            .unwrap_or_else(|| panic!("{activation}"));
        let reads = activation["read_by"].as_array().unwrap();
        assert!(
            reads.iter().all(|read| read.as_u64().unwrap() <= freed),
            "{activation}"
        );
    }
    let weights: Vec<&Value> = ["backward", "optimizer"]
        .into_iter()
        .flat_map(|pass| made_in_pass(pass, json!([32, 64])))
        .collect();
    assert!(!weights.is_empty(), "{text}");
    assert!(
        weights.iter().any(|w| w["freed_at"].is_null()),
        "{weights:#?}"
    );
}
