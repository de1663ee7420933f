//! Holistic Trace Analysis (HTA), PyTorch's trace analysis tool, reads the train example's
//! `trace.json` as it reads a PyTorch run's: one profiler step per measured step, and the ops of
//! the steps as CPU ops, as many of each as `ops.json` counts; its trace diff compares two runs
//! op by op. (The GPU half, kernels and their breakdowns, is in `tests/device_time_standin.rs`,
//! on the stand-in CUPTI's kernels.)
//!
//! Needs HTA: `scripts/hta-venv.sh` makes it a virtual environment; `.ci/run` runs these with
//! `cargo test --test hta -- --ignored`.

use std::collections::BTreeMap;

use serde_json::Value;

mod support;

fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
#[ignore = "needs HTA: scripts/hta-venv.sh, then cargo test --test hta -- --ignored"]
fn hta_finds_each_measured_step_and_every_op_of_the_steps() {
    let out = tempfile::tempdir().unwrap();
    support::train_example_succeeds(&["--preset", "profile", "--steps", "6"], out.path());
    let hta = support::hta::analyse(out.path());
    let run = read_json(&out.path().join("run.json"));
    let ops = read_json(&out.path().join("ops.json"));

    let (steps, measured) = (
        run["steps"].as_u64().unwrap(),
        run["measured_steps"].as_u64().unwrap(),
    );
    let expected_steps: Vec<u64> = (steps - measured..steps).collect();
    assert_eq!(hta["profiler_steps"], serde_json::json!(expected_steps));

    let mut calls: BTreeMap<String, u64> = BTreeMap::new();
    for row in ops["rows"].as_array().unwrap() {
        *calls
            .entry(row["op"].as_str().unwrap().to_owned())
            .or_default() += row["calls"].as_u64().unwrap();
    }
    let in_steps: BTreeMap<String, u64> = hta["cpu_ops_in_steps"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(op, n)| (op.clone(), n.as_u64().unwrap()))
        .collect();
    // The session's closing syncs come after the last step: HTA puts them in no step.
    let syncs = calls.remove("sync").unwrap_or(0);
    let mut in_steps_but_sync = in_steps.clone();
    let syncs_in_steps = in_steps_but_sync.remove("sync").unwrap_or(0);
    assert!(
        syncs_in_steps <= syncs,
        "{syncs_in_steps} syncs in steps, {syncs} in all"
    );
    assert_eq!(in_steps_but_sync, calls);
    // Without a kernel in the trace (NdArray runs none), HTA has no GPU time to break down.
    assert_eq!(hta["kernels"], 0);
}

/// HTA's trace diff compares two runs op by op: the example at two batch sizes runs the same ops
/// as often in a step, each of `ops.json`'s ops among them.
#[test]
#[ignore = "needs HTA: scripts/hta-venv.sh, then cargo test --test hta -- --ignored"]
fn htas_trace_diff_compares_two_runs_op_by_op() {
    let (before, after) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    support::train_example_succeeds(&["--preset", "profile", "--steps", "4"], before.path());
    support::train_example_succeeds(
        &["--preset", "profile", "--steps", "4", "--batch", "4"],
        after.path(),
    );
    let diff = support::hta::diff(before.path(), after.path());
    let diff = diff.as_object().unwrap();
    let unchanged = |name: &str| {
        let entry = diff
            .get(name)
            .unwrap_or_else(|| panic!("{name} not in HTA's diff"));
        assert_eq!(
            (&entry["change"], &entry["before"]),
            (&"=".into(), &entry["after"]),
            "{name}: {entry}"
        );
    };
    let ops = read_json(&before.path().join("ops.json"));
    for row in ops["rows"].as_array().unwrap() {
        match row["op"].as_str().unwrap() {
            "sync" => {}
            op => unchanged(op),
        }
    }
    for range in ["ProfilerStep#3", "forward", "backward"] {
        unchanged(range);
    }
    assert!(
        diff.values().all(|entry| entry["change"] == "="),
        "{diff:?}"
    );
}
