//! Each op's call site on Burn 0.21: the innermost function of the user's code on its stack,
//! with `file:line` where the binary has line tables and the function alone where it has
//! none; the stacks folded for a flame graph; and the phase Burn's own frames give an op run
//! outside any user range.
//!
//! Statistics are process-wide: the tests take turns.

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::Mutex;

use burn::backend::{Autodiff, NdArray};
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn_profiled::stats::{self, GroupBy, StatsConfig};
use burn_profiled::{Profiled, nvtx};

mod support;

type B = Profiled<NdArray>;

fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn with_call_sites() -> StatsConfig {
    StatsConfig {
        call_sites: true,
        ..StatsConfig::default()
    }
}

/// A layer of a test model: its matmul's call site is this function, at the line it returns.
#[inline(never)]
fn attention_scores<B: Backend>(q: Tensor<B, 2>, k: Tensor<B, 2>) -> (Tensor<B, 2>, u32) {
    (q.matmul(k.transpose()), line!())
}

/// The statistics of `work`, with call sites, by op and call site, and its stacks folded.
fn recorded(work: impl FnOnce()) -> (Vec<stats::Row>, String) {
    stats::reset();
    stats::start(with_call_sites());
    work();
    stats::stop();
    let snapshot = stats::snapshot();
    let rows = snapshot.rows(GroupBy::OpAndCallSite);
    let folded = snapshot.folded_stacks(false);
    stats::reset();
    (rows, folded)
}

fn call_site_of<'a>(rows: &'a [stats::Row], op: &str) -> Vec<&'a str> {
    rows.iter()
        .filter(|row| row.op == op)
        .filter_map(|row| row.call_site.as_deref())
        .collect()
}

#[test]
fn a_models_function_is_the_call_site_of_its_matmul_with_its_file_and_line() {
    let _serial = serial();
    let device = Default::default();
    let mut line = 0;
    let (rows, folded) = recorded(|| {
        let q = Tensor::<B, 2>::ones([4, 8], &device);
        let k = Tensor::<B, 2>::ones([4, 8], &device);
        let (scores, at) = attention_scores(q, k);
        line = at;
        let _ = scores.into_data();
    });
    assert_eq!(
        call_site_of(&rows, "float_matmul"),
        [format!("attention_scores (tests/call_sites.rs:{line})")],
        "{rows:#?}"
    );
    assert_eq!(
        call_site_of(&rows, "float_transpose"),
        [format!("attention_scores (tests/call_sites.rs:{line})")],
        "the transpose is on the same line"
    );
    let ones = call_site_of(&rows, "float_ones");
    assert_eq!(ones.len(), 2, "one call site per line: {rows:#?}");
    for site in ones {
        assert!(
            site.starts_with(
                "a_models_function_is_the_call_site_of_its_matmul_with_its_file_and_line::{{closure}} (tests/call_sites.rs:"
            ),
            "the test's closure made the inputs: {site:?}"
        );
    }
    assert!(
        folded.lines().any(|line| line.contains(
            "a_models_function_is_the_call_site_of_its_matmul_with_its_file_and_line;recorded;"
        ) && line.contains(";attention_scores;float_matmul ")),
        "the flame graph's stack of the matmul runs from the test through the layer:\n{folded}"
    );
}

/// The child's part of the test below: prints the matmul's call site, run in a copy of this
/// binary without its debug info.
#[test]
fn print_the_call_site_for_the_test_without_line_tables() {
    if std::env::var_os("CALL_SITES_CHILD").is_none() {
        return;
    }
    let _serial = serial();
    let device = Default::default();
    let (rows, _) = recorded(|| {
        let q = Tensor::<B, 2>::ones([2, 2], &device);
        let _ = attention_scores(q.clone(), q).0.into_data();
    });
    println!("call site: {:?}", call_site_of(&rows, "float_matmul"));
}

#[test]
fn without_line_tables_the_call_site_is_the_function_alone() {
    let this = std::env::current_exe().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let stripped = dir.path().join("stripped");
    let status = Command::new("objcopy")
        .arg("--strip-debug")
        .arg(&this)
        .arg(&stripped)
        .status()
        .expect("objcopy (binutils) runs");
    assert!(status.success());
    let output = Command::new(&stripped)
        .args([
            "--exact",
            "print_the_call_site_for_the_test_without_line_tables",
            "--nocapture",
        ])
        .env("CALL_SITES_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout.contains("call site: [\"attention_scores\"]"),
        "the function from the symbol table, no file or line: {stdout}"
    );
}

#[derive(Module, Debug)]
struct Net<B: Backend> {
    layer: Linear<B>,
}

/// One step: forward, backward, optimizer; with `ranges`, each in its user range.
fn train_step<B: AutodiffBackend>(ranges: bool) {
    let device = Default::default();
    let model = Net {
        layer: LinearConfig::new(4, 2).init::<B>(&device),
    };
    let mut optim = AdamConfig::new().init();
    let scope = |name: &str, work: &mut dyn FnMut()| match ranges {
        true => nvtx::scope(name, work),
        false => work(),
    };
    let mut loss = None;
    scope("forward", &mut || {
        let x = Tensor::<B, 2>::ones([3, 4], &device);
        loss = Some(model.layer.forward(x).sum());
    });
    let mut grads = None;
    scope("backward", &mut || {
        grads = loss.take().map(|loss| loss.backward())
    });
    let mut grads = Some(GradientsParams::from_grads(grads.unwrap(), &model));
    let mut model = Some(model);
    scope("optimizer", &mut || {
        model = model
            .take()
            .zip(grads.take())
            .map(|(m, grads)| optim.step(1e-2, m, grads));
    });
}

/// The ops of `rows` in `phases`, with their calls.
fn in_phase(rows: &[stats::Row], phases: &[&str]) -> BTreeMap<String, u64> {
    let mut ops = BTreeMap::new();
    for row in rows {
        if phases.contains(&row.phase.as_deref().unwrap_or_default()) {
            *ops.entry(row.op.clone()).or_default() += row.calls;
        }
    }
    ops
}

#[test]
fn outside_user_ranges_burns_frames_give_the_backward_and_optimizer_phases() {
    let _serial = serial();
    static RANGES: std::sync::Once = std::sync::Once::new();
    RANGES.call_once(|| nvtx::enable(nvtx::RangeConfig::new()));
    let by_phase = |ranges: bool| {
        stats::reset();
        stats::start(with_call_sites());
        train_step::<Autodiff<B>>(ranges);
        stats::stop();
        let rows = stats::snapshot().rows(GroupBy::OpAndPhase);
        stats::reset();
        rows
    };
    let with_ranges = by_phase(true);
    let without = by_phase(false);
    for phase in ["backward", "optimizer"] {
        assert!(
            !in_phase(&with_ranges, &[phase]).is_empty(),
            "{with_ranges:#?}"
        );
        assert_eq!(
            in_phase(&without, &[phase]),
            in_phase(&with_ranges, &[phase]),
            "{phase}: the same ops without the user's ranges"
        );
    }
    assert_eq!(
        in_phase(&without, &["-"]),
        in_phase(&with_ranges, &["forward", "-"]),
        "the forward has no frame of Burn's to say so: it stays outside any phase"
    );
}

/// The rows of a run's `ops.json` in `phase`: op and calls.
fn ops_json_in_phase(run: &std::path::Path, phase: &str) -> BTreeMap<String, u64> {
    let ops: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("ops.json")).unwrap()).unwrap();
    let mut rows = BTreeMap::new();
    for row in ops["rows"].as_array().unwrap() {
        if row["phase"] == phase {
            *rows
                .entry(row["op"].as_str().unwrap().to_owned())
                .or_default() += row["calls"].as_u64().unwrap();
        }
    }
    rows
}

#[test]
fn the_train_example_without_ranges_has_the_backward_and_optimizer_rows_of_the_one_with_ranges() {
    let root = tempfile::tempdir().unwrap();
    let run = |ranges: bool| {
        let config = root.path().join(format!("ranges_{ranges}.toml"));
        std::fs::write(
            &config,
            format!(
                "[stopwatch]\nenabled = true\nwarmup_iters = 2\n[nvtx]\nuser_ranges = {ranges}\n\
                 [stats]\nenabled = true\ncall_sites = true\n"
            ),
        )
        .unwrap();
        let out = root.path().join(format!("ranges_{ranges}"));
        support::train_example_succeeds(
            &[
                "--steps",
                "4",
                "--batch",
                "2",
                "--config",
                config.to_str().unwrap(),
            ],
            &out,
        );
        out
    };
    let (with_ranges, without) = (run(true), run(false));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(without.join("run.json")).unwrap()).unwrap();
    if !summary["backend"].as_str().unwrap().contains("ndarray") {
        // A fused backend's ops run on its fusion thread: no call stack of the model's.
        eprintln!("the example was built for {}: skipped", summary["backend"]);
        return;
    }
    for phase in ["backward", "optimizer"] {
        let expected = ops_json_in_phase(&with_ranges, phase);
        assert!(!expected.is_empty(), "{phase}: the example's own range");
        assert_eq!(
            ops_json_in_phase(&without, phase),
            expected,
            "{phase}: the same ops and calls from Burn's frames alone"
        );
    }
    let sites: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(without.join("ops_by_call_site.json")).unwrap(),
    )
    .unwrap();
    let conv = sites["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["op"] == "conv2d")
        .expect("the model's convolutions");
    assert!(
        conv["call_site"]
            .as_str()
            .unwrap()
            .starts_with("vision::VisionModel::forward (examples/common/vision.rs:"),
        "{conv}"
    );
    let folded = std::fs::read_to_string(without.join("stacks.folded")).unwrap();
    assert!(
        folded
            .lines()
            .any(|line| line.contains(";vision::VisionModel::forward;conv2d ")),
        "{folded}"
    );
}
