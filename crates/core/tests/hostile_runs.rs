//! `burn-profiled report` and `diff` under hostile input and at scale: impossible numbers,
//! special files, a full standard output, bad options and targets, tens of thousands of op
//! rows. The promise: exit 2 with a message naming the file, field or option at fault,
//! nothing written on an error, no panic, no hang.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use burn_profiled_core::runs::{Run, diff, report};
use serde_json::{Value, json};

mod support;

fn burn_profiled(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_burn-profiled"))
        .args(args)
        .output()
        .expect("burn-profiled runs")
}

/// `burn-profiled diff` of `before` and `after`, then `extra` arguments.
fn diff_of(before: &Path, after: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["diff".as_ref(), before.as_os_str(), after.as_os_str()];
    args.extend(extra.iter().map(|arg| std::ffi::OsStr::new(*arg)));
    burn_profiled(&args)
}

/// A run directory with these step times and op rows (`ops.json` fields as given).
fn write_run(dir: &Path, steps: &[f64], ops: Value) {
    std::fs::create_dir_all(dir).unwrap();
    let run = json!({
        "format_version": 2,
        "backend": "ndarray",
        "measured_steps": steps.len(),
        "step_seconds": steps,
    });
    std::fs::write(dir.join("run.json"), run.to_string()).unwrap();
    let mut file = json!({"format_version": 2, "total_calls": 0, "total_ns": 0, "rows": []});
    if let (Some(file), Some(ops)) = (file.as_object_mut(), ops.as_object()) {
        file.extend(ops.clone());
    }
    std::fs::write(dir.join("ops.json"), file.to_string()).unwrap();
}

/// 20 step times around `ms` milliseconds.
fn steps(ms: f64) -> Vec<f64> {
    (0..20)
        .map(|i| (ms + 0.01 * (i % 3) as f64) / 1e3)
        .collect()
}

fn stdout_stderr(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Asserts exit 2, nothing on standard output, and a message holding each of `names`;
/// returns the message.
fn refused(output: &Output, names: &[&str]) -> String {
    let (stdout, stderr) = stdout_stderr(output);
    assert_eq!(output.status.code(), Some(2), "exit 2: {stderr}");
    assert_eq!(stdout, "", "nothing printed on an error");
    for name in names {
        assert!(stderr.contains(name), "the message names {name}: {stderr}");
    }
    stderr
}

/// A run whose steps all took 0 s measured nothing: a verdict from it (`inf% slower`, exit 1)
/// or against another such (`NaN% slower`, exit 0) would be a figure with no meaning.
#[test]
fn step_times_of_zero_are_refused_naming_the_run_and_the_field() {
    let root = tempfile::tempdir().unwrap();
    let (zero, good, zero_too) = (
        root.path().join("zero"),
        root.path().join("good"),
        root.path().join("zero-too"),
    );
    write_run(&zero, &[0.0; 20], json!({}));
    write_run(&zero_too, &[0.0; 20], json!({}));
    write_run(&good, &steps(10.0), json!({}));
    let run_json = zero.join("run.json");
    let message = refused(
        &diff_of(&zero, &good, &["--fail-if-slower", "5"]),
        &[
            &run_json.display().to_string(),
            "step_seconds",
            "all 20 step times are 0 s",
        ],
    );
    assert!(!message.contains("inf"), "{message}");
    refused(&diff_of(&zero, &zero_too, &[]), &["step_seconds"]);
}

/// A negative step time (`199.0% faster ... -> -10.000 ms`) and times 616 decades apart
/// (`inf% slower`) are corrupt files, not results.
#[test]
fn negative_and_absurd_step_times_are_refused_naming_the_step() {
    let root = tempfile::tempdir().unwrap();
    let (good, bad) = (root.path().join("good"), root.path().join("bad"));
    write_run(&good, &steps(10.0), json!({}));
    let mut negative = steps(10.0);
    negative[3] = -0.01;
    write_run(&bad, &negative, json!({}));
    refused(
        &diff_of(&good, &bad, &[]),
        &["run.json", "step_seconds[3]", "-0.01"],
    );
    write_run(&good, &[1e-308; 20], json!({}));
    write_run(&bad, &[1e308; 20], json!({}));
    let message = refused(
        &diff_of(&good, &bad, &["--fail-if-slower", "5"]),
        &["step_seconds[0]", "from 1 ns to a year"],
    );
    assert!(
        message.contains(&good.join("run.json").display().to_string()),
        "{message}"
    );
}

/// With three runs a side, one of them empty of real steps said `unknown: a run has no step
/// times` though every run had 20: the run at fault is named instead.
#[test]
fn one_run_of_several_with_impossible_steps_is_named() {
    let root = tempfile::tempdir().unwrap();
    let mut args: Vec<PathBuf> = Vec::new();
    for (side, index) in [("b", 0), ("b", 1), ("b", 2), ("a", 0), ("a", 1), ("a", 2)] {
        let dir = root.path().join(format!("{side}{index}"));
        let times = match (side, index) {
            ("a", 1) => vec![0.0; 20],
            _ => steps(10.0),
        };
        write_run(&dir, &times, json!({}));
        if side == "a" && index == 0 {
            args.push("--".into());
        }
        args.push(dir);
    }
    let mut command: Vec<&std::ffi::OsStr> = vec!["diff".as_ref()];
    command.extend(args.iter().map(|arg| arg.as_os_str()));
    let a1 = root.path().join("a1").join("run.json");
    refused(
        &burn_profiled(&command),
        &[&a1.display().to_string(), "step_seconds"],
    );
}

/// `--noise NaN` was refused but `--fail-if-slower NaN` was taken, and a gate of NaN can
/// never fail: a CI check that passes whatever happens.
#[test]
fn a_gate_of_nan_or_infinity_is_refused_like_the_noise_floor() {
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (root.path().join("a"), root.path().join("b"));
    write_run(&a, &steps(10.0), json!({}));
    write_run(&b, &steps(30.0), json!({}));
    for value in ["NaN", "inf", "-5"] {
        let output = diff_of(&a, &b, &[&format!("--fail-if-slower={value}")]);
        assert_eq!(output.status.code(), Some(2), "--fail-if-slower {value}");
        let (_, stderr) = stdout_stderr(&output);
        assert!(
            stderr.contains("--fail-if-slower") && stderr.contains("a percentage of at least 0"),
            "{stderr}"
        );
    }
    assert_eq!(
        diff_of(&a, &b, &["--fail-if-slower", "5"]).status.code(),
        Some(1)
    );
}

/// `--html` at a directory, or under a file, failed only after the comparison was printed:
/// the target is checked first, and nothing is printed.
#[test]
fn an_html_target_that_cannot_be_a_file_is_refused_before_anything_is_printed() {
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (root.path().join("a"), root.path().join("b"));
    write_run(&a, &steps(10.0), json!({}));
    write_run(&b, &steps(10.0), json!({}));
    let directory = root.path().join("pages");
    std::fs::create_dir_all(&directory).unwrap();
    refused(
        &diff_of(&a, &b, &["--html", directory.to_str().unwrap()]),
        &["--html", "is a directory"],
    );
    let file = root.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    let under_file = file.join("deeper").join("diff.html");
    refused(
        &diff_of(&a, &b, &["--html", under_file.to_str().unwrap()]),
        &["--html", &format!("{} is not a directory", file.display())],
    );
    let output = diff_of(
        &a,
        &b,
        &[
            "--html",
            root.path().join("new/diff.html").to_str().unwrap(),
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        stdout_stderr(&output).1
    );
}

/// `>/dev/full`: the comparison is lost, and exit 0 told CI all was well. Exit 2 now, for
/// each command; a closed pipe stays quiet (`a_closed_pipe_ends_the_comparison_quietly`).
#[cfg(target_os = "linux")]
#[test]
fn a_full_standard_output_exits_2() {
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (root.path().join("a"), root.path().join("b"));
    write_run(&a, &steps(10.0), json!({}));
    write_run(&b, &steps(10.0), json!({}));
    let into_full = |args: &[&std::ffi::OsStr]| {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        Command::new(env!("CARGO_BIN_EXE_burn-profiled"))
            .args(args)
            .stdout(full)
            .output()
            .unwrap()
    };
    for args in [
        vec!["diff".as_ref(), a.as_os_str(), b.as_os_str()],
        vec!["report".as_ref(), a.as_os_str()],
    ] {
        let output = into_full(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("cannot write to standard output: No space left on device"),
            "{stderr}"
        );
    }
}

/// A peak rate of 0 put `log10(0)` on the roofline's axis and its grid loop ran 2^31 times,
/// ending in an allocation abort: the peak is refused where `ops.json` is read.
#[test]
fn a_peak_of_zero_is_refused_naming_the_field() {
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("run");
    for field in ["bytes_per_s", "flops_per_s"] {
        let mut peaks = json!({"flops_per_s": 1e12, "bytes_per_s": 1e11});
        peaks[field] = json!(0.0);
        write_run(
            &run,
            &steps(10.0),
            json!({"work": {"peaks": peaks, "counted_percent": 100.0}}),
        );
        let output = burn_profiled(&["report".as_ref(), run.as_os_str()]);
        refused(&output, &["ops.json", &format!("work.peaks.{field}")]);
        assert!(!run.join("report.html").exists(), "nothing written");
    }
}

/// Peaks and points that are finite but 600 decades apart (an infinite ridge) cannot be
/// drawn a grid line a decade: the chart is left out with a line saying why, the page
/// written.
#[test]
fn a_roofline_too_wide_to_draw_is_left_out_saying_why() {
    let mut run = Run::open_all(write_tiny_run().path()).unwrap().remove(0);
    run.work = json!({"peaks": {"flops_per_s": 1e300, "bytes_per_s": 1e-300}});
    run.ops = vec![
        serde_json::from_value(json!({
            "op": "float_matmul", "calls": 1, "total_ns": 1000,
            "roofline": {"time": "host", "intensity": 1.0, "flops_per_s": 1e9}
        }))
        .unwrap(),
    ];
    run.has_ops = true;
    let page = report::html(&run);
    assert!(page.contains("<p id=\"no-chart\">No chart: "), "the reason");
    assert!(!page.contains("<svg id=\"roofline\""), "no chart");
}

fn write_tiny_run() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    write_run(root.path(), &steps(10.0), json!({}));
    root
}

/// Two rows of 2^63 ns added up to 0 (`0.0 us of op time`): a sum that wraps is a wrong
/// figure, so the file is refused where it is read.
#[test]
fn op_times_that_overflow_their_sum_are_refused() {
    let root = tempfile::tempdir().unwrap();
    let run = root.path().join("run");
    let row = json!({"op": "float_add", "phase": "-", "calls": 1, "total_ns": 1u64 << 63});
    write_run(&run, &steps(10.0), json!({"rows": [row.clone(), row]}));
    refused(
        &burn_profiled(&["report".as_ref(), run.as_os_str()]),
        &["ops.json", "rows[].total_ns", "2^64"],
    );
}

/// `diff A --` said "1 run directories and no `--`", though `--` was given.
#[test]
fn a_separator_with_no_runs_after_it_is_named_as_given() {
    let root = tempfile::tempdir().unwrap();
    let a = root.path().join("a");
    write_run(&a, &steps(10.0), json!({}));
    let output = burn_profiled(&["diff".as_ref(), a.as_os_str(), "--".as_ref()]);
    let message = refused(&output, &["1 run directory before `--` and none after it"]);
    assert!(!message.contains("directories"), "{message}");
}

/// A `run.json` that is a directory, a FIFO (whose read would block for ever) or a symlink
/// loop was reported as missing ("it has no run.json"): each is named for what it is.
#[cfg(unix)]
#[test]
fn a_run_json_that_is_no_file_is_named_for_what_it_is() {
    let root = tempfile::tempdir().unwrap();
    let good = root.path().join("good");
    write_run(&good, &steps(10.0), json!({}));
    let run = root.path().join("run");
    std::fs::create_dir_all(run.join("run.json")).unwrap();
    refused(
        &diff_of(&good, &run, &[]),
        &["its run.json is a directory, not a file"],
    );
    std::fs::remove_dir(run.join("run.json")).unwrap();
    let status = Command::new("mkfifo")
        .arg(run.join("run.json"))
        .status()
        .unwrap();
    assert!(status.success());
    refused(
        &diff_of(&good, &run, &[]),
        &["its run.json is a FIFO, socket or device"],
    );
    std::fs::remove_file(run.join("run.json")).unwrap();
    std::os::unix::fs::symlink("run.json", run.join("run.json")).unwrap();
    let message = refused(&diff_of(&good, &run, &[]), &["run.json"]);
    assert!(!message.contains("it has no run.json"), "{message}");
    assert!(message.contains("symbolic links"), "the loop: {message}");
}

/// Op matching was a search of the rows per op: 100k rows a side took minutes. It is an
/// index now; this holds the result on rows enough to show a quadratic path (the time is
/// the benchmark's, `benches/tools.rs`).
#[test]
fn tens_of_thousands_of_op_rows_are_matched_one_to_one() {
    let root = tempfile::tempdir().unwrap();
    let rows = 20_000;
    let mut before = Run::open_all(write_tiny_run().path()).unwrap().remove(0);
    before.dir = root.path().join("before");
    before.has_ops = true;
    let row = |i: usize, ns: u64| -> burn_profiled_core::runs::OpRow {
        serde_json::from_value(json!({
            "op": format!("op_{}", i % 100), "phase": format!("shape {i}"),
            "calls": 20, "total_ns": ns
        }))
        .unwrap()
    };
    before.ops = (0..rows).map(|i| row(i, 1000)).collect();
    let mut after = before.clone();
    // The same keys in reverse, each twice as long, and one op only after.
    after.ops = (0..rows).rev().map(|i| row(i, 2000)).collect();
    after.ops.push(row(rows, 5));
    let comparison = diff::compare(&before, &after, diff::DiffSettings::default());
    assert_eq!(comparison.ops.len(), rows + 1, "every key once");
    let matched = comparison
        .ops
        .iter()
        .filter(|op| op.before_ns.is_some() && op.after_ns.is_some())
        .count();
    assert_eq!(matched, rows, "every row matched to its own");
    assert!(
        comparison
            .ops
            .iter()
            .filter(|op| op.before_ns.is_some())
            .all(|op| op
                .after_ns
                .zip(op.before_ns)
                .is_some_and(|(a, b)| a == 2.0 * b)),
        "each matched to the row of its own key"
    );
}

/// A user reads what exit 2 means where they look first: each command's `--help` states the
/// exit codes and the promise.
#[test]
fn every_commands_help_states_the_exit_codes_and_the_promise() {
    for command in [&["--help"][..], &["report", "--help"], &["diff", "--help"]] {
        let args: Vec<&std::ffi::OsStr> = command.iter().map(std::ffi::OsStr::new).collect();
        let (help, _) = stdout_stderr(&burn_profiled(&args));
        for promise in [
            "Exit status: 0",
            "2 unusable input",
            "names the file",
            "panic or hang",
        ] {
            assert!(
                help.contains(promise),
                "{command:?} says {promise:?}: {help}"
            );
        }
    }
}
