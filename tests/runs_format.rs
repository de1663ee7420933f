//! The formats of `run.json`, `ops.json` and `trace.json` are pinned: the keys and value types
//! a session writes are the golden files `tests/golden/run_json_v9.txt`,
//! `{ops,ops_by_call_site,ops_by_module,ops_by_forward_call_site}_json_v9.txt` and
//! `trace_json_v3.txt`. A change that fails this test is a new format version
//! (`RUN_FORMAT_VERSION`, `trace::FORMAT_VERSION`), not an edit: readers of the old version
//! (`burn-profiled diff` on runs of an older burn-profiled, trace tools) rely on them.
//! `BLESS=1 cargo test --test runs_format` writes them anew (then raise the version).

use std::collections::BTreeSet;

use burn::backend::{Autodiff, NdArray};
use burn::tensor::Tensor;
use burn_profiled::config::RuntimeConfig;
use burn_profiled::memory::TrackingAllocator;
use burn_profiled::{Profiled, RUN_FORMAT_VERSION, Session};
use serde_json::Value;

/// Host memory counted, and the blocks ops keep alive traced (`memory.kept_alive`).
#[global_allocator]
static ALLOCATOR: TrackingAllocator = TrackingAllocator::system();

type B = Autodiff<Profiled<NdArray>>;

/// Every key path of `value` with its type; arrays by their elements (`[]`).
fn shape(value: &Value, path: &str, out: &mut BTreeSet<String>) {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    out.insert(format!("{path}: {kind}"));
    match value {
        Value::Array(items) => items
            .iter()
            .for_each(|item| shape(item, &format!("{path}[]"), out)),
        Value::Object(map) => map
            .iter()
            .for_each(|(key, item)| shape(item, &format!("{path}.{key}"), out)),
        _ => {}
    }
}

fn shape_text(path: &std::path::Path) -> String {
    let value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let version = match value.get("otherData") {
        Some(other) => &other["format_version"],
        None => &value["format_version"],
    };
    let expected = match value.get("otherData") {
        Some(_) => burn_profiled::trace::FORMAT_VERSION,
        None => RUN_FORMAT_VERSION,
    };
    assert_eq!(*version, expected, "{}", path.display());
    let mut paths = BTreeSet::new();
    shape(&value, "", &mut paths);
    paths.into_iter().collect::<Vec<_>>().join("\n") + "\n"
}

#[test]
fn run_json_and_ops_json_keep_the_format_of_their_version() {
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 1;
    config.stats.enabled = true;
    config.stats.by_shapes = true;
    config.stats.call_sites = true;
    config.stats.forward_links = true;
    config.memory.per_step = true;
    config.memory.per_op = true;
    config.trace.enabled = true;
    config.nvtx.user_ranges = true;
    config.roofline.counts = true;
    config.roofline.peak_tflops = Some(1.0);
    config.roofline.peak_gbps = Some(100.0);
    config.numerics.fingerprints = true;
    let device = Default::default();
    let out = tempfile::tempdir().unwrap();
    let mut session = Session::start::<B>(config, &device, out.path());
    let mut kept = Vec::new();
    for _ in 0..6 {
        kept.push(Tensor::<B, 1>::zeros([1024], &device));
        let x = Tensor::<B, 2>::ones([4, 4], &device).require_grad();
        let loss = burn_profiled::nvtx::scope("forward", || x.clone().matmul(x).exp().sum());
        let _ = loss.clone().into_scalar();
        let _grads = burn_profiled::nvtx::scope("backward", || loss.backward());
        session.finish_iter().unwrap();
    }
    session.finish().unwrap();
    for (file, golden_file, golden) in [
        (
            "run.json",
            "run_json_v9.txt",
            include_str!("golden/run_json_v9.txt"),
        ),
        (
            "ops.json",
            "ops_json_v9.txt",
            include_str!("golden/ops_json_v9.txt"),
        ),
        (
            "ops_by_call_site.json",
            "ops_by_call_site_json_v9.txt",
            include_str!("golden/ops_by_call_site_json_v9.txt"),
        ),
        (
            "ops_by_module.json",
            "ops_by_module_json_v9.txt",
            include_str!("golden/ops_by_module_json_v9.txt"),
        ),
        (
            "ops_by_forward_call_site.json",
            "ops_by_forward_call_site_json_v9.txt",
            include_str!("golden/ops_by_forward_call_site_json_v9.txt"),
        ),
        (
            "trace.json",
            "trace_json_v3.txt",
            include_str!("golden/trace_json_v3.txt"),
        ),
    ] {
        let written = shape_text(&out.path().join(file));
        if std::env::var_os("BLESS").is_some() {
            std::fs::write(format!("tests/golden/{golden_file}"), &written).unwrap();
        }
        assert_eq!(
            written, golden,
            "{file} changed its format: a new format version"
        );
    }
}
