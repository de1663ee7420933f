//! The optimisation-check example: the correct variant passes, the wrong one is caught, and
//! `burn-dump-diff` says the same about the dumps it leaves.

use std::path::PathBuf;
use std::process::Command;

mod support;

fn example(name: &str) -> PathBuf {
    support::built(
        &format!("examples/{name}"),
        "run `cargo test` (it builds the examples)",
    )
}

/// Runs example `name` with `args` and `--out out`; its standard output, once it succeeded.
fn run_example(name: &str, args: &[&str], out: &std::path::Path) -> String {
    let output = Command::new(example(name))
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[test]
fn the_wrong_variant_is_caught_in_process_and_offline() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = run_example("compare_optimization", &[], dir.path());
    assert!(stdout.contains("2. The hand-written layer norm, compared with the reference:\n`TensorDumper:` Tensor data is consistent"), "{stdout}");
    assert!(stdout.contains("caught, as it should be:\nComparison of data with previously dumped data failed for [tensors] data for dump 0."), "{stdout}");
    assert!(
        stdout.contains("  Numerical mismatch at path: layer_norm.output["),
        "{stdout}"
    );

    let diff = |current: &str| {
        Command::new(support::cli("burn-dump-diff"))
            .arg(dir.path().join("reference"))
            .arg(dir.path().join(current))
            .output()
            .unwrap()
    };
    let consistent = diff("candidate");
    assert_eq!(
        consistent.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&consistent.stdout)
    );
    let wrong = diff("wrong");
    assert_eq!(wrong.status.code(), Some(1));
    let report = String::from_utf8_lossy(&wrong.stdout);
    assert!(
        report.contains("failed for [grads] data for dump 0.")
            && report.contains("layer_norm.gamma"),
        "{report}"
    );
}

/// The numerics example: its "optimised" layer norm's epsilon typo is named as the culprit,
/// with its call site, in one command; `burn-profiled numerics` says the same offline, exit 1.
#[test]
fn the_find_culprit_example_names_the_wrong_op_in_process_and_offline() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = run_example("find_culprit", &["--steps", "2"], dir.path());
    let culprit = "culprit: step 0, float_add_scalar (seq 11 before, 11 after), phase forward, \
                   at layer_norm (examples/find_culprit.rs:";
    assert!(stdout.contains(culprit), "{stdout}");
    let offline = Command::new(support::cli("burn-profiled"))
        .arg("numerics")
        .arg(dir.path().join("reference"))
        .arg(dir.path().join("optimised"))
        .output()
        .unwrap();
    let offline_stdout = String::from_utf8_lossy(&offline.stdout);
    assert_eq!(offline.status.code(), Some(1), "{offline_stdout}");
    assert!(offline_stdout.contains(culprit), "{offline_stdout}");
}
