//! The NVTX half of `scripts/gpu-check.sh`, on CubeCL's real device thread without a GPU: the
//! `train` example on burn's `Wgpu` (Mesa's lavapipe; `.ci/run` installs it), fused (the
//! default) and `--unfused`, under the `profile` preset, with the NVTX recorder injected as
//! Nsight Systems would be. Run with
//! `cargo build --features wgpu --example train && cargo test --features wgpu --test
//! example_wgpu` (`cargo test` with a `--test` filter builds no example).
#![cfg(feature = "wgpu")]

use std::collections::HashMap;
use std::process::Command;

mod support;

/// One recorded NVTX event: the TSV's `tid`, `kind`, `domain` and `message` columns.
struct Row {
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

/// Runs the example with `args` (its backend named `backend` on stdout) and checks its NVTX
/// events, at least `min_op_ranges` op ranges among them (fusion makes fewer); returns the
/// fused blocks' names.
fn every_op_range_is_on_the_device_thread(
    args: &[&str],
    backend: &str,
    min_op_ranges: usize,
) -> Vec<String> {
    let example = support::built("examples/train", "run `cargo test`");
    let recorder = support::built("deps/libnvtx_recorder.so", "run `cargo test`");
    let out = tempfile::tempdir().unwrap();
    let tsv = out.path().join("nvtx.tsv");
    let output = Command::new(&example)
        .args(args)
        .args(["--steps", "5", "--batch", "4", "--out"])
        .arg(out.path())
        .env("BURN_PROFILED", "profile")
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
        "{} is not the Wgpu build: run `cargo build --features wgpu --example train` first\n{stdout}",
        example.display()
    );

    let rows = rows(&std::fs::read_to_string(&tsv).unwrap());
    let device_thread: Vec<&str> = rows
        .iter()
        .filter(|r| r.kind == "name_thread" && r.message.starts_with("cubecl wgpu"))
        .map(|r| r.tid.as_str())
        .collect();
    assert!(!device_thread.is_empty(), "the device thread is named");
    let mut depth: HashMap<(&str, &str), i64> = HashMap::new();
    let (mut op_ranges, mut elsewhere) = (0, Vec::new());
    for row in &rows {
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
    assert!(op_ranges > min_op_ranges, "{op_ranges} op ranges");
    assert_eq!(
        elsewhere,
        Vec::<String>::new(),
        "op ranges off the device thread"
    );
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
    let mut blocks: Vec<String> = rows
        .iter()
        .filter(|r| r.kind == "push" && r.domain == "burn" && r.message.starts_with("fused "))
        .map(|r| r.message.clone())
        .collect();
    blocks.sort_unstable();
    blocks.dedup();
    blocks
}
