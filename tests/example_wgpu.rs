//! The NVTX half of `scripts/gpu-check.sh`, on CubeCL's real device thread without a GPU: the
//! `train` example on burn's `Wgpu` (Mesa's lavapipe; `.ci/run` installs it), fused (the
//! default) and `--unfused`, under the `profile` preset, with the NVTX recorder injected as
//! Nsight Systems would be; and the `learner` example, a burn-train `Learner` with a data
//! loader of several workers, on the fused backend. Run with
//! `cargo build --features wgpu,train --example train --example learner && cargo test
//! --features wgpu,train --test example_wgpu` (`cargo test` with a `--test` filter builds no
//! example).
#![cfg(feature = "wgpu")]

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

mod support;

/// One recorded NVTX event: the TSV's `tid`, `kind`, `domain` and `message` columns.
struct Row {
    ts_ns: u64,
    tid: String,
    kind: String,
    domain: String,
    message: String,
}

fn rows(tsv: &str) -> Vec<Row> {
    tsv.lines()
        .filter(|line| !line.starts_with("ts_ns") && !line.starts_with('#'))
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            assert!(cells.len() >= 7, "a short TSV row: {line:?}");
            Row {
                ts_ns: cells[0].parse().expect("a timestamp"),
                tid: cells[1].to_owned(),
                kind: cells[2].to_owned(),
                domain: cells[3].to_owned(),
                message: cells[6].to_owned(),
            }
        })
        .collect()
}

#[test]
fn fused_every_op_range_is_on_the_device_thread_and_every_range_is_closed() {
    let blocks =
        every_op_range_is_on_the_device_thread(&[], "autodiff<fusion<profiled<cubecl<wgpu", 200);
    assert!(
        blocks
            .iter()
            .any(|name| name.starts_with("fused elementwise[")),
        "fused blocks are ops: {blocks:?}"
    );
}

#[test]
fn unfused_every_op_range_is_on_the_device_thread_and_every_range_is_closed() {
    let blocks = every_op_range_is_on_the_device_thread(
        &["--unfused"],
        "autodiff<profiled<cubecl<wgpu",
        500,
    );
    assert_eq!(
        blocks,
        Vec::<String>::new(),
        "no fused block without fusion"
    );
}

/// Runs the example `name` with `args` and `--out out` under the NVTX recorder and checks that
/// it succeeded on the backend `backend` names; the events recorded.
fn run_recorded(name: &str, args: &[&str], backend: &str, out: &Path) -> Vec<Row> {
    let build = "run `cargo build --features wgpu,train --example train --example learner`";
    let example = support::built(&format!("examples/{name}"), build);
    let recorder = support::built("deps/libnvtx_recorder.so", "run `cargo test`");
    let tsv = out.join("nvtx.tsv");
    let output = Command::new(&example)
        .args(args)
        .arg("--out")
        .arg(out)
        .env_remove("BURN_PROFILED")
        .env("NVTX_INJECTION64_PATH", &recorder)
        .env("NVTX_RECORDER_OUT", &tsv)
        .output()
        .expect("the example runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains(backend),
        "{} is not the Wgpu build: {build}\n{stdout}",
        example.display()
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("no NVTX tool"),
        "the recorder is the tool: {stderr}"
    );
    rows(&std::fs::read_to_string(&tsv).unwrap())
}

/// Checks that every range of `rows` is closed on its thread and every op range is on CubeCL's
/// (named) device thread; returns the number of op ranges.
fn op_ranges_on_the_device_thread(rows: &[Row]) -> usize {
    let device_thread: Vec<&str> = rows
        .iter()
        .filter(|r| r.kind == "name_thread" && r.message.starts_with("cubecl wgpu"))
        .map(|r| r.tid.as_str())
        .collect();
    assert!(!device_thread.is_empty(), "the device thread is named");
    let mut depth: HashMap<(&str, &str), i64> = HashMap::new();
    let (mut op_ranges, mut elsewhere) = (0, Vec::new());
    for row in rows {
        let key = (row.tid.as_str(), row.domain.as_str());
        match row.kind.as_str() {
            "push" => {
                *depth.entry(key).or_default() += 1;
                if row.domain == "burn" {
                    op_ranges += 1;
                    if !device_thread.contains(&row.tid.as_str()) {
                        elsewhere.push(row.message.clone());
                    }
                }
            }
            "pop" => {
                let open = depth.entry(key).or_default();
                *open -= 1;
                assert!(*open >= 0, "a pop without a push on {key:?}");
            }
            _ => {}
        }
    }
    assert!(
        depth.values().all(|open| *open == 0),
        "ranges left open: {depth:?}"
    );
    assert_eq!(
        elsewhere,
        Vec::<String>::new(),
        "op ranges off the device thread"
    );
    op_ranges
}

/// Runs the example with `args` (its backend named `backend` on stdout) and checks its NVTX
/// events, at least `min_op_ranges` op ranges among them (fusion makes fewer); returns the
/// fused blocks' names.
fn every_op_range_is_on_the_device_thread(
    args: &[&str],
    backend: &str,
    min_op_ranges: usize,
) -> Vec<String> {
    let out = tempfile::tempdir().unwrap();
    let mut args = args.to_vec();
    args.extend(["--steps", "5", "--batch", "4", "--preset", "profile"]);
    let rows = run_recorded("train", &args, backend, out.path());
    let op_ranges = op_ranges_on_the_device_thread(&rows);
    assert!(op_ranges > min_op_ranges, "{op_ranges} op ranges");
    for user in ["step", "forward", "backward", "optimizer", "load batch"] {
        assert!(
            rows.iter()
                .any(|r| r.kind == "push" && r.domain == "-" && r.message == user),
            "the user range {user}"
        );
    }
    assert!(
        rows.iter()
            .any(|r| r.kind == "start" && r.message == "capture"),
        "the capture range"
    );
    // Op ranges (fused blocks' too) start after the profile preset's 3 warm-up steps.
    let first_op_range = rows
        .iter()
        .filter(|r| r.kind == "push" && r.domain == "burn")
        .map(|r| r.ts_ns)
        .min()
        .expect("op ranges");
    let steps_before = rows
        .iter()
        .filter(|r| r.kind == "push" && r.domain == "-" && r.message == "step")
        .filter(|r| r.ts_ns < first_op_range)
        .count();
    assert!(
        steps_before >= 3,
        "an op range in warm-up: {steps_before} steps before the first"
    );
    let mut blocks: Vec<String> = rows
        .iter()
        .filter(|r| r.kind == "push" && r.domain == "burn" && r.message.starts_with("fused "))
        .map(|r| r.message.clone())
        .collect();
    blocks.sort_unstable();
    blocks.dedup();
    blocks
}

/// burn-train's `Learner` on `Autodiff<fused::Wgpu>`, its data-loader workers putting batches on
/// the device while the training thread runs, under the `profile` preset: every artefact
/// written, every range closed, every op range on the device thread, fused blocks among them.
#[cfg(feature = "train")]
#[test]
fn a_learner_on_the_fused_backend_with_loader_workers_writes_everything_and_balanced_ranges() {
    let out = tempfile::tempdir().unwrap();
    let args = [
        "--epochs",
        "1",
        "--items",
        "48",
        "--batch",
        "4",
        "--workers",
        "3",
        "--preset",
        "profile",
    ];
    let backend = "autodiff<fusion<profiled<cubecl<wgpu";
    let rows = run_recorded("learner", &args, backend, out.path());
    for artefact in ["ops.json", "run.json", "trace.json"] {
        assert!(
            out.path().join(artefact).is_file(),
            "{artefact} was not written"
        );
    }
    op_ranges_on_the_device_thread(&rows);
    assert!(
        rows.iter()
            .any(|r| r.kind == "push" && r.domain == "burn" && r.message.starts_with("fused ")),
        "no fused block among the op ranges"
    );
}

/// Gradients of intermediate activations come from identity ops whose backward records them
/// (grad taps): under fusion their backward runs fused with the rest, and the dump must still
/// hold every activation and its gradient.
#[test]
fn the_debug_preset_on_the_fused_backend_dumps_activations_and_their_gradients() {
    let out = tempfile::tempdir().unwrap();
    let args = ["--steps", "3", "--batch", "2", "--preset", "debug"];
    run_recorded(
        "train",
        &args,
        "autodiff<fusion<profiled<cubecl<wgpu",
        out.path(),
    );
    let json = |file: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(out.path().join("dumps/0").join(file))
            .unwrap_or_else(|error| panic!("dumps/0/{file}: {error}"));
        serde_json::from_str(&text).unwrap()
    };
    let (tensors, grads) = (json("tensors.json"), json("grads.json"));
    for key in ["features", "attention", "logits"] {
        assert!(tensors["activations"][key].is_array(), "activation {key}");
        assert!(
            grads["activations"][key].is_array(),
            "gradient of activation {key}"
        );
    }
}
