//! Each op's work and its place on the roofline in a session on NdArray: counted from the
//! shapes, dtypes and windows the ops had, large matmuls compute-bound and elementwise ops
//! memory-bound, ops without a formula listed, and nothing counted when counts are off.

use burn::backend::NdArray;
use burn::tensor::Tensor;
use burn::tensor::module::{conv2d, max_pool2d};
use burn::tensor::ops::ConvOptions;
use burn_profiled::Profiled;
use burn_profiled::Session;
use burn_profiled::config::RuntimeConfig;
use serde_json::Value;

type B = Profiled<NdArray>;

const STEPS: u64 = 4;

/// A step: a 256x256 matmul, an add, a sort, a grouped convolution and a max pooling.
fn step(device: &burn::tensor::Device<B>) {
    let a = Tensor::<B, 2>::ones([256, 256], device);
    let y = a.clone().matmul(a.clone()).add(a);
    let _ = y.sort(1).into_data();
    // x [2, 4, 10, 10], 2 groups of 2 channels, 8 filters of 3x3: out [2, 8, 8, 8].
    let x = Tensor::<B, 4>::ones([2, 4, 10, 10], device);
    let weight = Tensor::<B, 4>::ones([8, 2, 3, 3], device);
    let out = conv2d(x, weight, None, ConvOptions::new([1, 1], [0, 0], [1, 1], 2));
    let _ = max_pool2d(out, [2, 2], [2, 2], [0, 0], [1, 1], false).into_data();
}

fn run(config: RuntimeConfig) -> Value {
    // A session's statistics are the process's: one at a time.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = Default::default();
    let out = tempfile::tempdir().unwrap();
    let mut session = Session::start::<B>(config, &device, out.path());
    for _ in 0..STEPS + 1 {
        step(&device);
        session.finish_iter().unwrap();
    }
    session.finish().unwrap();
    serde_json::from_str(&std::fs::read_to_string(out.path().join("ops.json")).unwrap()).unwrap()
}

fn config() -> RuntimeConfig {
    let mut config = RuntimeConfig::default();
    config.stopwatch.warmup_iters = 1;
    config.stats.enabled = true;
    config.roofline.counts = true;
    // A device of 100 GFLOP/s and 10 GB/s: the ridge at 10 FLOPs per byte.
    config.roofline.peak_tflops = Some(0.1);
    config.roofline.peak_gbps = Some(10.0);
    config
}

fn row<'a>(ops: &'a Value, op: &str) -> &'a Value {
    ops["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["op"] == op)
        .unwrap_or_else(|| panic!("no row {op} in {ops:#}"))
}

#[test]
fn a_matmul_is_compute_bound_and_an_add_memory_bound_by_their_counts() {
    let ops = run(config());
    let matmul = row(&ops, "float_matmul");
    assert_eq!(matmul["calls"], STEPS);
    assert_eq!(matmul["flops"], STEPS * 2 * 256 * 256 * 256);
    assert_eq!(matmul["bytes"], STEPS * 3 * 256 * 256 * 4);
    assert_eq!(matmul["roofline"]["limit"], "compute");
    assert_eq!(
        matmul["roofline"]["time"], "host",
        "NdArray's host time is its own"
    );
    let intensity = matmul["roofline"]["intensity"].as_f64().unwrap();
    assert!((intensity - 512.0 / 12.0).abs() < 1e-9, "{intensity}");
    let share = matmul["roofline"]["share"].as_f64().unwrap();
    assert!(share > 0.0, "{share}");

    let add = row(&ops, "float_add");
    assert_eq!(add["flops"], STEPS * 256 * 256);
    assert_eq!(add["bytes"], STEPS * 3 * 256 * 256 * 4);
    assert_eq!(add["roofline"]["limit"], "memory");

    let ones = row(&ops, "float_ones");
    assert_eq!(ones["flops"], 0, "data written, no arithmetic");
    assert!(
        ones.get("roofline").is_none(),
        "no FLOPs: not on the roofline"
    );
}

#[test]
fn convolutions_and_pooling_count_from_their_shapes_and_window() {
    let ops = run(config());
    // Each of the 2·8·8·8 outputs is 2 channels · 3·3 taps of multiply-adds.
    assert_eq!(row(&ops, "conv2d")["flops"], STEPS * 2 * (2 * 8 * 64) * 18);
    // Each of the 2·8·4·4 outputs compares a 2x2 window.
    assert_eq!(row(&ops, "max_pool2d")["flops"], STEPS * (2 * 8 * 16) * 4);
}

#[test]
fn ops_without_a_formula_are_unknown_and_listed_with_their_share() {
    let ops = run(config());
    let sort = row(&ops, "float_sort");
    assert_eq!(sort["flops"], Value::Null);
    assert_eq!(sort["bytes"], Value::Null);
    let work = &ops["work"];
    assert_eq!(work["unknown_ops"], serde_json::json!(["float_sort"]));
    let counted = work["counted_percent"].as_f64().unwrap();
    let unknown = work["unknown_percent"].as_f64().unwrap();
    assert!(counted > 0.0 && unknown > 0.0 && counted + unknown <= 100.0 + 1e-9);
    assert_eq!(work["peaks"]["flops_per_s"], 1e11);
    assert_eq!(work["host_times_are_launches"], false);
}

#[test]
fn without_counts_no_op_has_work() {
    let mut config = config();
    config.roofline = Default::default();
    let ops = run(config);
    assert!(ops.get("work").is_none());
    for row in ops["rows"].as_array().unwrap() {
        assert!(
            row.get("flops").is_none() && row.get("roofline").is_none(),
            "{row}"
        );
    }
}

#[test]
fn a_calibration_measures_the_peaks_through_the_backend_and_says_what_it_measured() {
    let mut config = config();
    config.roofline.peak_tflops = None;
    config.roofline.peak_gbps = None;
    config.roofline.calibrate = true;
    let ops = run(config);
    let calibration = &ops["work"]["calibration"];
    let arithmetic = calibration["arithmetic"].as_str().unwrap();
    assert!(
        arithmetic.starts_with("matmul ") && arithmetic.contains(" f32, best of 3 runs: "),
        "{arithmetic}"
    );
    let bandwidth = calibration["bandwidth"].as_str().unwrap();
    assert!(
        bandwidth.starts_with("add_scalar over ")
            && bandwidth.contains(" MiB of f32, read and written"),
        "{bandwidth}"
    );
    let peaks = &ops["work"]["peaks"];
    assert_eq!(
        peaks, &calibration["peaks"],
        "the roofline uses what was measured"
    );
    assert!(peaks["flops_per_s"].as_f64().unwrap() > 0.0);
    assert!(
        row(&ops, "float_matmul")["roofline"]["share"]
            .as_f64()
            .is_some()
    );
}
