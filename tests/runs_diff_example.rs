//! `burn-profiled diff` on two runs of the train example (the command is burn-profiled-core's,
//! built by `cargo test --workspace`).

use std::path::Path;
use std::process::{Command, Output};

mod support;

fn diff(before: &Path, after: &Path, args: &[&str]) -> Output {
    Command::new(support::cli("burn-profiled"))
        .arg("diff")
        .args([before, after])
        .args(args)
        .output()
        .expect("burn-profiled runs")
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The example, built by `cargo test` next to this test's binary.
fn train(batch: &str, out: &Path) {
    support::train_example_succeeds(
        &["--steps", "12", "--batch", batch, "--preset", "profile"],
        out,
    );
}

#[test]
fn the_example_with_its_batch_doubled_is_slower_in_its_convolutions() {
    let root = tempfile::tempdir().unwrap();
    let (before, after) = (root.path().join("batch 2"), root.path().join("batch 8"));
    train("2", &before);
    train("8", &after);
    // One run a side: a verdict needs a change beyond the floor. On NdArray the step takes
    // about four times as long; the example built with `wgpu` (lavapipe) only about 1.4 times,
    // so the floor is lowered to what either clears.
    let output = diff(&before, &after, &["--rows", "3", "--noise", "25"]);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let first = stdout.lines().next().unwrap();
    assert!(first.contains("% slower (95% interval "), "{stdout}");
    assert!(first.ends_with("(medians of 9 and 9 steps)"), "{stdout}");
    // On NdArray, a step of four times the images spends most of its extra time in the
    // convolutions (the example built with `wgpu` syncs and fuses instead).
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(after.join("run.json")).unwrap()).unwrap();
    if run["backend"].as_str().unwrap().contains("ndarray") {
        let top = stdout.lines().nth(4).unwrap();
        assert!(top.trim_start().starts_with("conv2d"), "{stdout}");
    }
    assert!(stdout.contains("... "), "the rest is counted: {stdout}");
}
