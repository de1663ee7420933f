//! The graph of a step (`[memory] graph = true`) on `Autodiff<Profiled<NdArray>>` with the
//! tracking allocator: a two-layer model trained for three steps, its first measured step
//! written as `graph.json`, pinned by a golden file (one line per op and per tensor).
//!
//! Rewrite the golden file with `BURN_PROFILED_BLESS=1 cargo test --test graph`.

use burn::backend::{Autodiff, NdArray};
use burn::module::Module;
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig};
use burn::optim::{GradientsParams, Optimizer, SgdConfig};
use burn::tensor::Tensor;
use burn::tensor::activation::relu;
use burn::tensor::backend::Backend;
use burn_profiled::config::RuntimeConfig;
use burn_profiled::memory::TrackingAllocator;
use burn_profiled::{Profiled, Session, nvtx};
use serde_json::Value;

#[global_allocator]
static ALLOCATOR: TrackingAllocator = TrackingAllocator::system();

type B = Autodiff<Profiled<NdArray>>;

const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/golden/graph_json_v1.txt"
);

#[derive(Module, Debug)]
struct TwoLayers<B: Backend> {
    hidden: Linear<B>,
    out: Linear<B>,
}

impl<B: Backend> TwoLayers<B> {
    fn loss(&self, x: Tensor<B, 2>, y: Tensor<B, 2>) -> Tensor<B, 1> {
        let hidden = nvtx::scope("hidden", || relu(self.hidden.forward(x)));
        nvtx::scope("head", || {
            MseLoss::new().forward(self.out.forward(hidden), y, Reduction::Mean)
        })
    }
}

/// Sessions are process-wide: one test at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    static RANGES: std::sync::Once = std::sync::Once::new();
    RANGES.call_once(|| nvtx::enable(nvtx::RangeConfig::new()));
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `graph.json` of a run of three steps, one of warm-up, with nothing else on.
fn graph_of_a_run(more: impl FnOnce(&mut RuntimeConfig)) -> (Value, Value) {
    let (graph, run) = run(more);
    (graph.expect("graph.json written"), run)
}

/// `graph.json`, if written, and `run.json` of a run of three steps, one of warm-up.
fn run(more: impl FnOnce(&mut RuntimeConfig)) -> (Option<Value>, Value) {
    let _serial = serial();
    let device = Default::default();
    let mut model = TwoLayers::<B> {
        hidden: LinearConfig::new(32, 64).init(&device),
        out: LinearConfig::new(64, 8).init(&device),
    };
    let mut optimizer = SgdConfig::new().init::<B, TwoLayers<B>>();
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 1;
    config.memory.graph = true;
    more(&mut config);
    let out = tempfile::tempdir().unwrap();
    let mut session = Session::start::<B>(config, &device, out.path());
    for _ in 0..3 {
        let x = Tensor::<B, 2>::ones([16, 32], &device);
        let y = Tensor::<B, 2>::zeros([16, 8], &device);
        let loss = model.loss(x, y);
        let grads = nvtx::scope("backward", || loss.backward());
        model = nvtx::scope("optimizer", || {
            let grads = GradientsParams::from_grads(grads, &model);
            optimizer.step(1e-2, model, grads)
        });
        session.finish_iter().unwrap();
    }
    let summary = session.finish().unwrap();
    let path = out.path().join("graph.json");
    assert_eq!(
        summary.files.contains(&path),
        path.exists(),
        "{:?}",
        summary.files
    );
    let graph = path.exists().then(|| {
        let text = std::fs::read_to_string(&path).unwrap();
        serde_json::from_str::<Value>(&text).expect("graph.json is JSON")
    });
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("run.json")).unwrap())
            .unwrap();
    (graph, run)
}

/// The graph as the golden file has it: its scalars, then one line per op and per tensor.
fn golden_text(graph: &Value) -> String {
    let mut text = String::new();
    for key in [
        "format_version",
        "step",
        "frees",
        "ops_with_unknown_tensors",
    ] {
        text.push_str(&format!("{key}: {}\n", graph[key]));
    }
    for list in ["ops", "tensors"] {
        text.push_str(&format!("{list}:\n"));
        for item in graph[list].as_array().unwrap() {
            text.push_str(&format!("{item}\n"));
        }
    }
    text
}

#[test]
fn the_first_measured_step_is_pinned_op_by_op_and_tensor_by_tensor() {
    let (graph, _) = graph_of_a_run(|_| {});
    let text = golden_text(&graph);
    if std::env::var_os("BURN_PROFILED_BLESS").is_some() {
        std::fs::write(GOLDEN, &text).unwrap();
    }
    let golden = std::fs::read_to_string(GOLDEN)
        .unwrap_or_else(|_| panic!("{GOLDEN}: run once with BURN_PROFILED_BLESS=1"));
    assert_eq!(text, golden, "graph.json changed; if on purpose, bless it");
}

#[test]
fn each_edge_joins_the_op_that_made_a_tensor_to_an_op_that_read_it() {
    let (graph, _) = graph_of_a_run(|_| {});
    let tensors = graph["tensors"].as_array().unwrap();
    let ops = graph["ops"].as_array().unwrap();
    let edges = graph["edges"].as_array().unwrap();
    let reads: usize = tensors
        .iter()
        .filter(|t| !t["made_by"].is_null())
        .map(|t| t["read_by"].as_array().unwrap().len())
        .sum();
    assert_eq!(edges.len(), reads);
    for edge in edges {
        let tensor = edge["tensor"].as_u64().unwrap() as usize;
        let (from, to) = (
            &ops[edge["from"].as_u64().unwrap() as usize],
            &ops[edge["to"].as_u64().unwrap() as usize],
        );
        assert!(
            from["outputs"].as_array().unwrap().contains(&tensor.into()),
            "{edge}"
        );
        assert!(
            to["inputs"].as_array().unwrap().contains(&tensor.into()),
            "{edge}"
        );
    }
}

#[test]
fn every_backward_op_names_a_forward_op_of_the_same_step() {
    let (graph, _) = graph_of_a_run(|_| {});
    let ops = graph["ops"].as_array().unwrap();
    let backward: Vec<&Value> = ops.iter().filter(|op| op["pass"] == "backward").collect();
    assert!(backward.len() > 10, "{ops:#?}");
    for op in backward {
        let forward = &ops[op["forward"]["index"]
            .as_u64()
            .unwrap_or_else(|| panic!("{op}")) as usize];
        assert_eq!(forward["pass"], "forward", "{op}");
        assert_eq!(forward["op"], op["forward"]["op"], "{op}");
        assert!(
            ["hidden", "head"].contains(&forward["phase"].as_str().unwrap()),
            "{op}"
        );
    }
}

#[test]
fn the_step_s_temporaries_are_freed_within_it_and_the_new_parameters_outlive_it() {
    let (graph, _) = graph_of_a_run(|_| {});
    assert_eq!(graph["frees"], "host_allocator");
    let tensors = graph["tensors"].as_array().unwrap();
    let ops = graph["ops"].as_array().unwrap();
    // The hidden layer's activations: made in the forward, read in the backward, freed after.
    let activation = tensors
        .iter()
        .find(|t| t["shape"] == serde_json::json!([16, 64]) && !t["made_by"].is_null())
        .unwrap();
    let freed = activation["freed_at"].as_u64().expect("freed in the step") as usize;
    let last_read = activation["read_by"].as_array().unwrap().last().unwrap();
    assert!(
        freed >= last_read.as_u64().unwrap() as usize,
        "{activation}"
    );
    assert_eq!(activation["bytes"], 16 * 64 * 4);
    // The optimizer's outputs are the next step's parameters: alive at the step's end.
    let updated: Vec<&Value> = ops
        .iter()
        .filter(|op| op["pass"] == "optimizer")
        .flat_map(|op| op["outputs"].as_array().unwrap())
        .map(|t| &tensors[t.as_u64().unwrap() as usize])
        .filter(|t| t["shape"] == serde_json::json!([32, 64]))
        .collect();
    assert!(!updated.is_empty());
    assert!(updated.last().unwrap()["freed_at"].is_null(), "{updated:?}");
}

#[test]
fn a_chosen_step_that_never_ran_writes_no_graph() {
    let (graph, run) = run(|config| config.memory.graph_step = Some(7));
    assert_eq!(graph, None);
    assert_eq!(run["steps"], 3);
}

#[test]
fn run_json_names_graph_json_among_the_files() {
    let (_, run) = graph_of_a_run(|config| config.memory.graph_step = Some(2));
    assert!(
        run["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f.as_str().unwrap().ends_with("graph.json")),
        "{run}"
    );
    assert_eq!(run["config"]["memory"]["graph_step"], 2);
}
