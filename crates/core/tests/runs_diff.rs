//! `burn-profiled diff`: runs written by hand, compared by the binary; the
//! verdict, the op rows, the ops one run has alone, exit codes, and the messages for input it
//! cannot use.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

mod support;

fn diff(before: &Path, after: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_burn-profiled"))
        .arg("diff")
        .args([before, after])
        .args(args)
        .output()
        .expect("burn-profiled runs")
}

/// A run directory with `steps` step times and op rows `(op, phase, total ms)`.
fn write_run(dir: &Path, steps: &[f64], ops: &[(&str, &str, f64)]) {
    std::fs::create_dir_all(dir).unwrap();
    let run = json!({
        "format_version": 1,
        "backend": "autodiff<profiled<ndarray>>",
        "measured_steps": steps.len(),
        "step_seconds": steps,
        "memory": {"host": {"peak_rss_bytes": 10 << 20}, "devices": []},
    });
    std::fs::write(dir.join("run.json"), run.to_string()).unwrap();
    let rows: Vec<_> = ops
        .iter()
        .map(|(op, phase, ms)| {
            json!({"op": op, "phase": phase, "calls": steps.len(), "total_ns": (ms * 1e6) as u64})
        })
        .collect();
    let ops = json!({"format_version": 1, "total_calls": 0, "total_ns": 0, "rows": rows});
    std::fs::write(dir.join("ops.json"), ops.to_string()).unwrap();
}

/// Step times around `ms` milliseconds, a little apart.
fn steps(ms: f64) -> Vec<f64> {
    (0..20)
        .map(|i| (ms + 0.05 * ((i * 7) % 5) as f64) / 1e3)
        .collect()
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_rewrite_that_fuses_ops_is_faster_with_the_ops_it_removed_and_added() {
    let root = tempfile::tempdir().unwrap();
    let (before, after) = (root.path().join("before"), root.path().join("after"));
    write_run(
        &before,
        &steps(10.0),
        &[
            ("float_exp", "forward", 40.0),
            ("float_mul", "forward", 60.0),
            ("float_matmul", "forward", 80.0),
        ],
    );
    write_run(
        &after,
        &steps(8.0),
        &[
            ("fused elementwise[exp, mul]", "forward", 30.0),
            ("float_matmul", "forward", 80.0),
        ],
    );
    // One run a side: 20% is a verdict only under a floor lowered from its default.
    let output = diff(&before, &after, &["--fail-if-slower", "1", "--noise", "5"]);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("step time: 19.")
            && lines[0].contains("% faster (95% interval ")
            && lines[0].ends_with(": 10.100 ms -> 8.100 ms per step (medians of 20 and 20 steps)"),
        "{stdout}"
    );
    assert_eq!(
        lines[1],
        "  one run a side: the drift between processes goes unseen, so only a change beyond 5% \
         is claimed. For a verdict, take 3 or more runs a side in alternating order (before, \
         after, before, ...) and give them all: burn-profiled diff B1 B2 B3 -- A1 A2 A3",
        "{stdout}"
    );
    assert_eq!(
        &lines[2..8],
        [
            "ops, host time per step, largest change first:",
            "                         op    phase        before         after        change    ratio",
            "                  float_mul  forward      3.000 ms             -     -3.000 ms  removed",
            "                  float_exp  forward      2.000 ms             -     -2.000 ms  removed",
            "fused elementwise[exp, mul]  forward             -      1.500 ms     +1.500 ms    added",
            "               float_matmul  forward      4.000 ms      4.000 ms        0.0 us    1.00x",
        ],
        "{stdout}"
    );
    assert_eq!(
        lines[8],
        "(one run a side: the changes are shown, none is claimed beyond noise)"
    );
    assert!(stdout.contains("only before: float_mul (forward), float_exp (forward)\n"));
    assert!(stdout.contains("only after: fused elementwise[exp, mul] (forward)\n"));
    assert!(stdout.contains("memory peak, host RSS: 10.00 MiB -> 10.00 MiB (+0.0%)"));

    // The same as one page: the verdict, every op and phase, names escaped.
    let page = root.path().join("diff.html");
    let output = diff(
        &before,
        &after,
        &["--html", page.to_str().unwrap(), "--noise", "5"],
    );
    assert_eq!(output.status.code(), Some(0));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<p id=\"verdict\">19."), "{html}");
    assert_eq!(html.matches("<tr data-phase=\"forward\">").count(), 4);
    assert!(
        html.contains("<td>-3.000 ms</td><td>removed</td>"),
        "{html}"
    );
    assert!(html.contains("<td>+1.500 ms</td><td>added</td>"), "{html}");
}

#[test]
fn a_slower_run_fails_the_check_and_the_same_steps_are_no_change() {
    let root = tempfile::tempdir().unwrap();
    let (before, after, same) = (
        root.path().join("before"),
        root.path().join("after"),
        root.path().join("same"),
    );
    write_run(&before, &steps(10.0), &[("float_exp", "forward", 40.0)]);
    write_run(&after, &steps(12.0), &[("float_exp", "forward", 80.0)]);
    write_run(&same, &steps(10.0), &[("float_exp", "forward", 40.0)]);

    let output = diff(&before, &after, &["--fail-if-slower", "10", "--noise", "5"]);
    let (stdout, _) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.starts_with("step time: 19."), "{stdout}");
    assert!(
        stdout.lines().next().unwrap().contains("% slower"),
        "{stdout}"
    );
    let output = diff(&before, &after, &["--fail-if-slower", "25", "--noise", "5"]);
    assert_eq!(output.status.code(), Some(0), "slower by less than 25%");
    // With the default floor for one run a side, 19% is no verdict, and no failure.
    let output = diff(&before, &after, &["--fail-if-slower", "10"]);
    let (stdout, _) = text(&output);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.starts_with("step time: no change beyond noise (+19."),
        "{stdout}"
    );

    let output = diff(&before, &same, &["--fail-if-slower", "0"]);
    let (stdout, _) = text(&output);
    assert_eq!(output.status.code(), Some(0));
    assert!(
        stdout.starts_with("step time: no change beyond noise (+0.0%, 95% interval "),
        "{stdout}"
    );

    // 3% slower on tight steps: beyond the steps' interval, within a floor of 5%.
    write_run(&after, &steps(10.3), &[("float_exp", "forward", 40.0)]);
    let (stdout, _) = text(&diff(&before, &after, &["--noise", "5"]));
    assert!(
        stdout.starts_with("step time: no change beyond noise (+3.0%"),
        "{stdout}"
    );
    assert!(
        stdout
            .contains("(under the 5% two processes of one program can differ by: --noise sets it)"),
        "{stdout}"
    );
    let (stdout, _) = text(&diff(&before, &after, &["--noise", "1"]));
    assert!(stdout.starts_with("step time: 3.0% slower"), "{stdout}");
}

/// Sets `fields` in the `run.json` of `dir`.
fn amend_run(dir: &Path, fields: serde_json::Value) {
    let path = dir.join("run.json");
    let mut run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for (key, value) in fields.as_object().unwrap() {
        run[key] = value.clone();
    }
    std::fs::write(&path, run.to_string()).unwrap();
}

#[test]
fn runs_of_another_backend_or_setting_say_so_before_the_ops() {
    let root = tempfile::tempdir().unwrap();
    let (before, after) = (root.path().join("before"), root.path().join("after"));
    write_run(&before, &steps(10.0), &[("float_exp", "forward", 40.0)]);
    write_run(&after, &steps(10.0), &[("float_exp", "forward", 40.0)]);
    amend_run(
        &before,
        json!({"burn_version": "0.21.0", "config": {
            "nvtx": {"per_op_sync": false, "op_ranges": true},
            "stats": {"by_shapes": false, "device_time": false},
            "memory": {"per_op": false},
        }}),
    );
    amend_run(
        &after,
        json!({"backend": "fusion<profiled<cubecl<wgpu>>>", "burn_version": "0.21.0", "config": {
            "nvtx": {"per_op_sync": true, "op_ranges": true},
            "stats": {"by_shapes": false},
            "memory": {"per_op": false, "device_limit_mib": 100},
        }}),
    );
    let (stdout, stderr) = text(&diff(&before, &after, &[]));
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[1].starts_with("  one run a side: "), "{stdout}");
    assert_eq!(
        &lines[2..5],
        [
            "the runs differ in:",
            "  backend: autodiff<profiled<ndarray>> -> fusion<profiled<cubecl<wgpu>>>",
            "  config nvtx.per_op_sync: false -> true",
        ],
        "settings only one run recorded are left out: {stdout}{stderr}"
    );
    assert!(lines[5].starts_with("ops, host time per step"), "{stdout}");

    let page = root.path().join("diff.html");
    diff(&before, &after, &["--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<tr><td class=\"name\">config nvtx.per_op_sync</td><td class=\"name\">false</td><td class=\"name\">true</td></tr>"),
        "{html}"
    );

    let (stdout, _) = text(&diff(&before, &before, &[]));
    assert!(
        !stdout.contains("differ in"),
        "a run against itself: {stdout}"
    );
}

/// Writes the `ops.json` of `dir` with rows `(op, phase, host ms, device ms)` per step, of
/// 20 measured steps.
fn write_ops_with_device_time(dir: &Path, ops: &[(&str, &str, f64, Option<f64>)]) {
    let rows: Vec<_> = ops
        .iter()
        .map(|(op, phase, host, device)| {
            json!({"op": op, "phase": phase, "calls": 20, "total_ns": (host * 20e6) as u64,
                   "device_total_ns": device.map(|ms| (ms * 20e6) as u64)})
        })
        .collect();
    let ops = json!({"format_version": 1, "total_calls": 0, "total_ns": 0, "rows": rows});
    std::fs::write(dir.join("ops.json"), ops.to_string()).unwrap();
}

#[test]
fn with_device_time_in_both_runs_the_ops_are_also_compared_by_it() {
    let root = tempfile::tempdir().unwrap();
    let (before, after) = (root.path().join("before"), root.path().join("after"));
    write_run(&before, &steps(10.0), &[]);
    write_run(&after, &steps(8.5), &[]);
    // A faster matmul kernel: its launch takes as long, the host waits less in `sync`.
    write_ops_with_device_time(
        &before,
        &[
            ("sync", "step", 8.0, None),
            ("float_matmul", "forward", 0.5, Some(6.0)),
            ("conv2d", "forward", 0.5, Some(2.0)),
        ],
    );
    write_ops_with_device_time(
        &after,
        &[
            ("sync", "step", 6.5, None),
            ("float_matmul", "forward", 0.5, Some(4.5)),
            ("conv2d", "forward", 0.5, Some(2.0)),
        ],
    );
    let (stdout, stderr) = text(&diff(&before, &after, &[]));
    let device = &stdout[stdout
        .find("device time per step")
        .unwrap_or_else(|| panic!("no device time: {stdout}{stderr}"))..];
    assert_eq!(
        device.lines().take(5).collect::<Vec<_>>(),
        [
            "device time per step, ops in both runs: 8.000 ms -> 6.500 ms",
            "ops, device time per step, largest change first:",
            "          op    phase        before         after        change    ratio",
            "float_matmul  forward      6.000 ms      4.500 ms     -1.500 ms    0.75x",
            "      conv2d  forward      2.000 ms      2.000 ms        0.0 us    1.00x",
        ],
        "{stdout}"
    );
    assert!(
        stdout.contains("        sync     step      8.000 ms      6.500 ms     -1.500 ms    0.81x"),
        "the host table has every op: {stdout}"
    );

    let page = root.path().join("diff.html");
    diff(&before, &after, &["--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    let table = &html[html
        .find("<table id=\"device-ops\">")
        .expect("the device table")..];
    assert!(
        table.contains("<td class=\"name\">float_matmul</td><td class=\"name\">forward</td><td>6.000 ms</td><td>4.500 ms</td><td>-1.500 ms</td><td>0.75x</td>"),
        "{table}"
    );

    // Only one run with device time: nothing to compare it with.
    write_ops_with_device_time(&after, &[("float_matmul", "forward", 0.5, None)]);
    let (stdout, _) = text(&diff(&before, &after, &[]));
    assert!(!stdout.contains("device time"), "{stdout}");
}

#[test]
fn unusable_input_exits_2_naming_the_file_and_why() {
    let root = tempfile::tempdir().unwrap();
    let good = root.path().join("good");
    write_run(&good, &steps(10.0), &[("float_exp", "forward", 40.0)]);
    let message = |dir: &Path| {
        let output = diff(&good, dir, &[]);
        assert_eq!(output.status.code(), Some(2), "{dir:?}");
        let (stdout, stderr) = text(&output);
        assert_eq!(stdout, "", "nothing half-printed");
        stderr.trim_end().to_owned()
    };
    let missing = root.path().join("missing");
    assert_eq!(
        message(&missing),
        format!(
            "burn-profiled diff: {}: not a burn-profiled run directory: no such directory",
            missing.display()
        )
    );
    let other_tool = root.path().join("other");
    std::fs::create_dir_all(&other_tool).unwrap();
    std::fs::write(other_tool.join("trace.json"), "{}").unwrap();
    assert_eq!(
        message(&other_tool),
        format!(
            "burn-profiled diff: {}: not a burn-profiled run directory: it has no run.json, and \
             no subdirectory has one",
            other_tool.display()
        )
    );

    let broken: PathBuf = root.path().join("broken");
    write_run(&broken, &steps(10.0), &[]);
    let run = std::fs::read_to_string(broken.join("run.json")).unwrap();
    std::fs::write(broken.join("run.json"), &run[..run.len() / 2]).unwrap();
    let text = message(&broken);
    assert!(
        text.starts_with(&format!(
            "burn-profiled diff: {}: not a burn-profiled run.json: EOF while parsing",
            broken.join("run.json").display()
        )),
        "{text}"
    );

    write_run(&broken, &steps(10.0), &[]);
    std::fs::write(broken.join("ops.json"), "\u{0}\u{1}garbage").unwrap();
    let text = message(&broken);
    assert!(
        text.contains("ops.json: not a burn-profiled ops.json: "),
        "{text}"
    );
    std::fs::write(broken.join("ops.json"), "[1, 2]").unwrap();
    assert!(
        message(&broken).ends_with("ops.json: not a burn-profiled ops.json: not a JSON object")
    );
    std::fs::write(
        broken.join("ops.json"),
        r#"{"format_version": 1, "rows": [{"op": 3}]}"#,
    )
    .unwrap();
    assert!(
        message(&broken)
            .contains("ops.json: not a burn-profiled ops.json: invalid type: integer `3`"),
    );

    std::fs::write(
        broken.join("ops.json"),
        r#"{"format_version": 99, "rows": []}"#,
    )
    .unwrap();
    assert_eq!(
        message(&broken),
        format!(
            "burn-profiled diff: {}: format version 99 (this burn-profiled reads versions 1 to {}); compare it with the burn-profiled that wrote it",
            broken.join("ops.json").display(),
            burn_profiled_core::formats::RUN_FORMAT_VERSION
        )
    );
    std::fs::write(broken.join("ops.json"), r#"{"rows": []}"#).unwrap();
    assert!(message(&broken).contains("ops.json: format version none (this burn-profiled"));
}

/// `burn-profiled diff B1 B2 .. -- A1 A2 ..`.
fn diff_sides(before: &[PathBuf], after: &[PathBuf], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_burn-profiled"))
        .arg("diff")
        .args(args)
        .args(before)
        .arg("--")
        .args(after)
        .output()
        .expect("burn-profiled runs")
}

/// 20 step times within 0.2% of `ms`: a run whose steps agree closely.
fn tight(ms: f64) -> Vec<f64> {
    (0..20)
        .map(|i| ms * (1.0 + 0.001 * (i % 3) as f64) / 1e3)
        .collect()
}

/// Runs `{side}/1`, `{side}/2`, ... under `root`, one a level (ms a step), each with the op
/// rows `ops(run index)`.
fn write_side(
    root: &Path,
    side: &str,
    levels: &[f64],
    ops: impl Fn(usize) -> Vec<(&'static str, &'static str, f64)>,
) -> Vec<PathBuf> {
    levels
        .iter()
        .enumerate()
        .map(|(index, ms)| {
            let dir = root.join(side).join((index + 1).to_string());
            write_run(&dir, &tight(*ms), &ops(index));
            dir
        })
        .collect()
}

fn first_line(output: &Output) -> String {
    text(output).0.lines().next().unwrap_or_default().to_owned()
}

/// Two processes of one program drift apart as a whole (load, clocks, memory placement):
/// steps tight within each run, runs 15-20% apart. One run a side cannot see that drift, so
/// it claims nothing under its floor; three a side see it in their spread.
#[test]
fn runs_of_one_configuration_shifted_apart_get_no_verdict_with_one_run_a_side_and_with_three() {
    let root = tempfile::tempdir().unwrap();
    let exp = |_| vec![("float_exp", "forward", 40.0)];
    let before = write_side(root.path(), "before", &[10.0, 11.8, 11.5], exp);
    let after = write_side(root.path(), "after", &[11.7, 10.0, 12.0], exp);

    let output = diff(&before[0], &after[0], &["--fail-if-slower", "5"]);
    assert_eq!(output.status.code(), Some(0), "no verdict, no failure");
    let line = first_line(&output);
    assert!(
        line.starts_with("step time: no change beyond noise (+17.0%")
            && line.ends_with("(medians of 20 and 20 steps)"),
        "{line}"
    );
    assert!(
        text(&output)
            .0
            .contains("(under the 65% two processes of one program can differ by"),
        "{}",
        text(&output).0
    );

    let output = diff_sides(&before, &after, &["--fail-if-slower", "5"]);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    let line = first_line(&output);
    assert!(
        line.starts_with("step time: no change beyond noise (")
            && line.ends_with(
                "per step (geometric means of the medians of 3 and 3 runs, 60 and 60 steps)"
            ),
        "{line}"
    );
    assert!(
        stdout.contains(
            "  3 and 3 runs: the interval holds the spread between runs (Welch's, on their medians)"
        ),
        "{stdout}"
    );

    // One run against three is one run a side: the steps of the three together, the floor.
    let output = diff_sides(&before[..1], &after, &[]);
    let (stdout, _) = text(&output);
    let line = first_line(&output);
    assert!(
        line.starts_with("step time: no change beyond noise (")
            && line.ends_with("per step (medians of 20 and 60 steps)"),
        "{line}"
    );
    assert!(stdout.contains("  one run a side: "), "{stdout}");
}

/// A real change, the step doubled (the example's batch 4 against batch 8), is beyond any
/// floor and any spread: detected with one run a side and with three, and it fails the check.
#[test]
fn a_doubled_step_is_slower_with_one_run_a_side_and_with_three() {
    let root = tempfile::tempdir().unwrap();
    let before = write_side(root.path(), "batch 4", &[10.0, 11.5, 10.6], |_| {
        vec![("conv2d", "forward", 40.0)]
    });
    let after = write_side(root.path(), "batch 8", &[20.4, 22.0, 19.6], |_| {
        vec![("conv2d", "forward", 80.0)]
    });
    let output = diff(&before[0], &after[0], &["--fail-if-slower", "50"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output).0);
    assert!(first_line(&output).starts_with("step time: 104.0% slower (95% interval "));

    let output = diff_sides(&before, &after, &["--fail-if-slower", "50"]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output).0);
    let line = first_line(&output);
    assert!(
        line.starts_with("step time: 93.") && line.contains("% slower (95% interval "),
        "{line}"
    );
    // A folder of runs stands for the runs in it.
    let output = diff(
        &root.path().join("batch 4"),
        &root.path().join("batch 8"),
        &[],
    );
    assert_eq!(
        first_line(&output),
        line,
        "the folders give the same verdict"
    );
}

/// With three runs a side an op is judged against the spread of its own time between runs;
/// with one run a side its change is shown and not judged.
#[test]
fn with_several_runs_an_op_is_beyond_noise_only_beyond_the_spread_between_runs() {
    let root = tempfile::tempdir().unwrap();
    let noisy = [30.0, 36.0, 33.0, 34.0, 31.0, 35.0];
    let before = write_side(root.path(), "before", &[10.0, 10.1, 9.9], |run| {
        vec![
            ("float_matmul", "forward", 40.0),
            ("float_exp", "forward", noisy[run]),
        ]
    });
    let after = write_side(root.path(), "after", &[12.0, 12.1, 11.9], |run| {
        vec![
            ("float_matmul", "forward", 80.0 + run as f64),
            ("float_exp", "forward", noisy[run + 3]),
        ]
    });
    let output = diff_sides(&before, &after, &[]);
    let (stdout, _) = text(&output);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        &lines[2..5],
        [
            "ops, host time per step, largest change first:",
            "          op    phase        before         after        change    ratio  beyond noise",
            "float_matmul  forward      2.000 ms      4.050 ms     +2.050 ms    2.02x  yes",
        ],
        "{stdout}"
    );
    assert_eq!(
        lines[5], "   float_exp  forward      1.650 ms      1.667 ms      +16.7 us    1.01x  no",
        "{stdout}"
    );
    assert!(!stdout.contains("none is claimed"), "{stdout}");

    let page = root.path().join("diff.html");
    let mut args = vec!["--html", page.to_str().unwrap()];
    args.push("--rows");
    args.push("5");
    let output = diff_sides(&before, &after, &args);
    assert_eq!(output.status.code(), Some(0));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<th>beyond noise</th>"), "{html}");
    assert!(html.contains("<td>2.02x</td><td>yes</td>"), "{html}");
    assert!(
        html.contains("geometric means of the medians of 3 and 3 runs"),
        "{html}"
    );
}

/// Runs given without `--` are two, one a side: any other count is refused, saying how to give
/// them.
#[test]
fn three_runs_without_a_separator_are_refused_with_the_syntax() {
    let root = tempfile::tempdir().unwrap();
    let runs = write_side(root.path(), "runs", &[10.0, 10.0, 10.0], |_| Vec::new());
    let output = Command::new(env!("CARGO_BIN_EXE_burn-profiled"))
        .arg("diff")
        .args(&runs)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        text(&output).1,
        "burn-profiled diff: 3 run directories and no `--`: give BEFORE AFTER, or the runs \
         before, `--`, and the runs after (burn-profiled diff B1 B2 B3 -- A1 A2 A3)\n"
    );
    let output = diff(&runs[0], &runs[1], &["--noise=-5"]);
    assert_eq!(output.status.code(), Some(2), "a negative floor is refused");
    assert!(
        text(&output).1.contains("a percentage of at least 0"),
        "{}",
        text(&output).1
    );
    let empty = root.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let output = diff(&empty, &runs[0], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output)
            .1
            .ends_with("empty: not a burn-profiled run directory: it has no run.json, and no subdirectory has one\n"),
        "{}",
        text(&output).1
    );
}

/// `burn-profiled diff A B | head -1`: the reader closes the pipe, and the command stops
/// quietly with the status of its verdict (it panicked in `print!`).
#[test]
fn a_closed_pipe_ends_the_comparison_quietly() {
    let root = tempfile::tempdir().unwrap();
    let (before, after) = (root.path().join("before"), root.path().join("after"));
    write_run(&before, &steps(10.0), &[("float_exp", "forward", 40.0)]);
    write_run(&after, &steps(30.0), &[("float_exp", "forward", 80.0)]);
    let output = support::output_into_a_closed_pipe(
        Command::new(env!("CARGO_BIN_EXE_burn-profiled"))
            .arg("diff")
            .args([&before, &after])
            .args(["--fail-if-slower", "10"]),
    );
    assert_eq!(text(&output).1, "", "nothing on stderr, no panic");
    assert_eq!(output.status.code(), Some(1), "the verdict's status");
}

/// A run of format 2 whose ops have a share of the roofline: `(op, total ms, share)`.
fn write_run_with_shares(dir: &Path, steps: &[f64], ops: &[(&str, f64, f64)]) {
    write_run(dir, steps, &[]);
    let rows: Vec<_> = ops
        .iter()
        .map(|(op, ms, share)| {
            json!({"op": op, "phase": "forward", "calls": steps.len(), "total_ns": (ms * 1e6) as u64,
                   "flops": 1000, "bytes": 100,
                   "roofline": {"time": "host", "intensity": 10.0, "flops_per_s": 1e9,
                                "bytes_per_s": 1e8, "bound_flops_per_s": 1e10,
                                "share": share, "limit": "compute"}})
        })
        .collect();
    let ops = json!({"format_version": 2, "total_calls": 0, "total_ns": 0, "rows": rows});
    std::fs::write(dir.join("ops.json"), ops.to_string()).unwrap();
}

#[test]
fn ops_placed_on_the_roofline_in_both_runs_show_their_share_before_and_after() {
    let root = tempfile::tempdir().unwrap();
    let (before, after) = (root.path().join("before"), root.path().join("after"));
    write_run_with_shares(
        &before,
        &steps(10.0),
        &[("float_matmul", 160.0, 0.125), ("float_add", 20.0, 0.5)],
    );
    write_run_with_shares(
        &after,
        &steps(6.0),
        &[("float_matmul", 80.0, 0.25), ("float_add", 20.0, 0.5)],
    );
    let output = diff(&before, &after, &[]);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains(
            "share of the roofline, ops above placed in both runs:\n  float_matmul (forward): 12.5% -> 25.0%\n  float_add (forward): 50.0% -> 50.0%\n"
        ),
        "{stdout}"
    );
    let page = root.path().join("diff.html");
    diff(&before, &after, &["--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<th>roofline % before</th><th>roofline % after</th>"),
        "{html}"
    );
    assert!(
        html.contains("<td>0.50x</td><td>12.5%</td><td>25.0%</td></tr>"),
        "the matmul's row: {html}"
    );
    // A run of format 1 has no shares: nothing to say.
    write_run(&before, &steps(10.0), &[("float_matmul", "forward", 160.0)]);
    let (stdout, _) = text(&diff(&before, &after, &[]));
    assert!(!stdout.contains("share of the roofline"), "{stdout}");
    diff(&before, &after, &["--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<td>0.50x</td><td>-</td><td>25.0%</td></tr>"),
        "a side without a share says so: {html}"
    );
}

/// Where both runs wrote `numerics.jsonl`, `diff --html` compares them op by op too: the
/// culprit on the page; a side whose file cannot be read is named, and the timing diff stands.
#[test]
fn the_html_diff_names_the_culprit_where_both_runs_have_numerics() {
    use burn_profiled_core::numerics::{Fingerprint, OpRecord, file};

    let root = tempfile::tempdir().unwrap();
    let (before, after) = (root.path().join("before"), root.path().join("after"));
    write_run(&before, &steps(10.0), &[("float_exp", "forward", 40.0)]);
    write_run(&after, &steps(10.0), &[("float_exp", "forward", 40.0)]);
    let record = |seq: u64, op: &str, value: f32| OpRecord {
        seq,
        step: 0,
        thread: "main".into(),
        op: op.into(),
        phase: "forward".into(),
        call_site: Some("src/model.rs:7".into()),
        input_shapes: vec![vec![2]],
        producers: Some(vec![seq.checked_sub(1)]),
        outputs: vec![Fingerprint::of(&[value, 1.0], &[2])],
    };
    let run = |exp: f32| [record(0, "float_mul", 2.0), record(1, "float_exp", exp)];
    file::write(&before.join("numerics.jsonl"), &run(3.0)).unwrap();
    file::write(&after.join("numerics.jsonl"), &run(3.5)).unwrap();
    let page = root.path().join("diff.html");
    let output = diff(&before, &after, &["--html", page.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{:?}", text(&output));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<pre id=\"numerics\">diverged (rtol 0.0001, atol 0.00001): 1 of 2 aligned ops in 1 step\nculprit: step 0, float_exp (seq 1 before, 1 after), phase forward, at src/model.rs:7\n"),
        "{html}"
    );

    std::fs::write(
        after.join("numerics.jsonl"),
        "{\"format\": \"burn-profiled-numerics\", \"version\": 9}\n",
    )
    .unwrap();
    diff(&before, &after, &["--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<pre id=\"numerics\">not compared: ") && html.contains("version 9"),
        "{html}"
    );
}
