//! `burn-profiled`: commands on the runs a session leaves on disk.
//!
//! `burn-profiled report RUN_DIR [--out FILE]` writes a run's HTML report (default
//! `RUN_DIR/report.html`): one file, nothing loaded from the network.
//!
//! `burn-profiled diff BEFORE AFTER` compares two runs, and `burn-profiled diff B1 B2 B3 -- A1
//! A2 A3` two sides of several runs each (a folder of runs stands for the runs in it): the step
//! time, with a verdict that accounts for the noise within and between processes, and per op
//! and phase the time per step before and after.
//!
//! `burn-profiled numerics BEFORE AFTER` compares two runs' `numerics.jsonl` op by op: the
//! culprit (the first op whose inputs agreed and whose outputs did not), how many ops after it
//! only carried the difference on, and the first divergences. Exit status 0 when the runs
//! agree within `--rtol`/`--atol`, 1 when they diverge, 2 on unusable input.
//!
//! Exit status (report, diff): 0; 1 when `--fail-if-slower PCT` is given and the verdict is slower by more;
//! 2 on unusable input (a message names the file and why), and when standard output or the
//! page cannot be written. The promise: on exit 2 a message on standard error names the file,
//! field or option at fault and nothing is written; no input makes the tool panic or hang.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use burn_profiled_core::cli_output::print_or_exit;
use burn_profiled_core::numerics::{self, Tolerance};
use burn_profiled_core::runs::{Run, diff, numerics_page, report};
use clap::{Parser, Subcommand};

/// What `--help` says of the exit status, and the promise behind exit 2.
const EXIT_STATUS: &str = "Exit status: 0 done; 1 slower than --fail-if-slower; 2 unusable \
input (a run directory or file that cannot be read, a number no run can have, an option out \
of range) or output that cannot be written (the report, the page, standard output). On exit \
2 a message names the file, field or option at fault, and nothing is written. No input makes \
it panic or hang; a closed pipe (| head) ends the output quietly.";

/// What `numerics --help` says of the exit status.
const NUMERICS_EXIT_STATUS: &str = "Exit status: 0 the runs agree (every aligned op identical \
or within --rtol/--atol); 1 they diverge (the culprit is printed); 2 unusable input (a file \
that cannot be read, is cut short, has another format version or a line that is not a \
record, runs of other steps, an option out of range), with a message naming the file and \
line at fault, or standard output that cannot be written.";

/// Commands on burn-profiled runs (a session's output directory).
#[derive(Debug, Parser)]
#[command(
    name = "burn-profiled",
    version,
    after_help = EXIT_STATUS
)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    #[command(after_help = EXIT_STATUS)]
    /// Writes a run's report: one HTML file that opens from disk (step times, time by phase,
    /// top ops, the op table, the stopwatch, memory).
    Report {
        /// The run (a directory with run.json, and ops.json for the ops).
        run_dir: PathBuf,
        /// Where the report goes (default: RUN_DIR/report.html).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    #[command(after_help = EXIT_STATUS)]
    /// Compares two runs, or two sides of several runs each: step time with a verdict that
    /// accounts for noise, and each op's time per step before and after.
    ///
    /// `diff BEFORE AFTER` (one run a side, or a folder of runs each), or
    /// `diff B1 B2 B3 -- A1 A2 A3`. One run a side cannot show the drift between processes:
    /// a verdict there needs a change beyond --noise. Three or more runs a side, taken in
    /// alternating order, give a verdict from their spread.
    Diff {
        /// The runs before the change (run directories, or folders of them); with `--`, all
        /// of them, else BEFORE and AFTER.
        #[arg(required = true, value_name = "BEFORE")]
        before: Vec<PathBuf>,
        /// The runs after the change, after `--`.
        #[arg(last = true, value_name = "AFTER")]
        after: Vec<PathBuf>,
        /// Exit with 1 when the verdict is slower by more than this many percent (no verdict,
        /// no failure).
        #[arg(long, value_name = "PCT", value_parser = parse_percent)]
        fail_if_slower: Option<f64>,
        /// With one run a side: step-time changes under this many percent count as noise (the
        /// default is what two processes of one program differed by, measured).
        #[arg(long, value_name = "PCT", default_value_t = diff::ONE_RUN_NOISE_PERCENT, value_parser = parse_percent)]
        noise: f64,
        /// Op rows shown.
        #[arg(long, default_value_t = 20)]
        rows: usize,
        /// Also write the comparison as one HTML page (every op and phase).
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
    #[command(after_help = NUMERICS_EXIT_STATUS)]
    /// Compares two runs' numerics (numerics.jsonl): their tensors paired along the dataflow
    /// (by op sequence where the files link no producers), each pair identical, within
    /// tolerance or diverged; the culprit (the earliest diverged op, or region of ops, whose
    /// inputs agreed), how many ops after it carried the difference on, and the first
    /// divergences.
    Numerics {
        /// The reference run: a run directory holding numerics.jsonl, or the file.
        before: PathBuf,
        /// The run compared with it.
        after: PathBuf,
        /// Relative tolerance, per element as numpy.isclose (each statistic compared with the
        /// bound that implies).
        #[arg(long, value_name = "X", default_value_t = Tolerance::default().rtol, value_parser = parse_tolerance)]
        rtol: f64,
        /// Absolute tolerance, per element.
        #[arg(long, value_name = "Y", default_value_t = Tolerance::default().atol, value_parser = parse_tolerance)]
        atol: f64,
        /// Divergences shown in the table.
        #[arg(long, default_value_t = 10)]
        rows: usize,
        /// Both runs ran on one backend: an input agreed only bit for bit (by default, also
        /// within the relative tolerance scaled to the tensor's magnitude).
        #[arg(long)]
        same_backend: bool,
        /// Also write the comparison as one HTML page: the two runs side by side by step and
        /// phase, the culprit marked, the records left unpaired.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
}

fn parse_tolerance(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(tolerance) if tolerance.is_finite() && tolerance >= 0.0 => Ok(tolerance),
        Ok(_) => Err("a tolerance of at least 0 (a finite number)".to_owned()),
        Err(error) => Err(error.to_string()),
    }
}

fn parse_percent(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        // Finite: `NaN` would pass no comparison, and a gate of `NaN` or `inf` never fails.
        Ok(percent) if percent.is_finite() && percent >= 0.0 => Ok(percent),
        Ok(_) => Err("a percentage of at least 0 (a finite number)".to_owned()),
        Err(error) => Err(error.to_string()),
    }
}

fn main() -> ExitCode {
    match Args::parse().command {
        Command::Report { run_dir, out } => report(run_dir, out),
        Command::Diff {
            before,
            after,
            fail_if_slower,
            noise,
            rows,
            html,
        } => diff(before, after, fail_if_slower, (noise, rows), html),
        Command::Numerics {
            before,
            after,
            rtol,
            atol,
            rows,
            same_backend,
            html,
        } => {
            let inputs = match same_backend {
                true => numerics::InputsAgree::Bitwise,
                false => numerics::InputsAgree::Scaled,
            };
            let sides = (before.as_path(), after.as_path());
            numerics(
                sides,
                (Tolerance { rtol, atol }, inputs),
                rows,
                html.as_deref(),
            )
        }
    }
}

/// Where a file will be written is usable: not a directory, and under no file (the writer
/// creates missing parent directories). Checked before any work, so that a bad target
/// leaves nothing printed.
fn check_target(option: &str, path: &Path) -> Result<(), String> {
    if path.is_dir() {
        return Err(format!("{option} {}: is a directory", path.display()));
    }
    let existing = path
        .ancestors()
        .skip(1)
        .filter(|dir| !dir.as_os_str().is_empty())
        .find(|dir| std::fs::symlink_metadata(dir).is_ok());
    match existing {
        Some(dir) if !dir.is_dir() => Err(format!(
            "{option} {}: {} is not a directory",
            path.display(),
            dir.display()
        )),
        _ => Ok(()),
    }
}

fn report(run_dir: PathBuf, out: Option<PathBuf>) -> ExitCode {
    const TOOL: &str = "burn-profiled report";
    let out = out.unwrap_or_else(|| run_dir.join("report.html"));
    let opened = Run::open(&run_dir).map_err(|error| error.to_string());
    let run = match opened.and_then(|run| check_target("--out", &out).map(|()| run)) {
        Ok(run) => run,
        Err(error) => {
            eprintln!("{TOOL}: {error}");
            return ExitCode::from(2);
        }
    };
    if let Err(error) = burn_profiled_core::runs::report::write(&run, &out) {
        eprintln!("{TOOL}: cannot write {}: {error}", out.display());
        return ExitCode::from(2);
    }
    match print_or_exit(TOOL, &format!("wrote {}\n", out.display())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

fn diff(
    before: Vec<PathBuf>,
    after: Vec<PathBuf>,
    fail_if_slower: Option<f64>,
    (noise, rows): (f64, usize),
    html: Option<PathBuf>,
) -> ExitCode {
    const TOOL: &str = "burn-profiled diff";
    // `diff A --`: clap gives no runs after `--` either way; the message must not say there
    // was none.
    let separator = std::env::args_os().any(|arg| arg == "--");
    let (before, after) = match (before, after) {
        (before, after) if !after.is_empty() => (before, after),
        (mut both, _) if both.len() == 2 => {
            let after = both.split_off(1);
            (both, after)
        }
        (given, _) => {
            let count = match given.len() {
                1 => "1 run directory".to_owned(),
                n => format!("{n} run directories"),
            };
            let what = match separator {
                true => format!("{count} before `--` and none after it"),
                false => format!("{count} and no `--`"),
            };
            eprintln!(
                "{TOOL}: {what}: give BEFORE AFTER, or the runs before, `--`, and the runs \
                 after (burn-profiled diff B1 B2 B3 -- A1 A2 A3)"
            );
            return ExitCode::from(2);
        }
    };
    if let Some(Err(error)) = html.as_deref().map(|html| check_target("--html", html)) {
        eprintln!("{TOOL}: {error}");
        return ExitCode::from(2);
    }
    let open = |dirs: &[PathBuf]| -> Result<Vec<Run>, burn_profiled_core::runs::RunError> {
        let mut runs = Vec::new();
        for dir in dirs {
            runs.extend(Run::open_all(dir)?);
        }
        Ok(runs)
    };
    let runs = open(&before).and_then(|before| Ok((before, open(&after)?)));
    let (before, after) = match runs {
        Ok(runs) => runs,
        Err(error) => {
            eprintln!("{TOOL}: {error}");
            return ExitCode::from(2);
        }
    };
    let settings = diff::DiffSettings {
        noise_percent: noise,
        rows,
    };
    let comparison = diff::compare_runs(&before, &after, settings);
    let mut text = comparison.to_string();
    // The page first: a page that cannot be written leaves nothing printed.
    if let Some(html) = html {
        let page = burn_profiled_core::runs::report::diff_html(&comparison, &before, &after);
        if let Err(error) = burn_profiled_core::runs::report::write_page(&html, &page) {
            eprintln!("{TOOL}: cannot write {}: {error}", html.display());
            return ExitCode::from(2);
        }
        text.push_str(&format!("wrote {}\n", html.display()));
    }
    if let Err(code) = print_or_exit(TOOL, &text) {
        return code;
    }
    match fail_if_slower {
        Some(percent) if comparison.slower_than(percent) => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}

fn numerics(
    (before, after): (&Path, &Path),
    (tolerance, inputs): (Tolerance, numerics::InputsAgree),
    rows: usize,
    html: Option<&Path>,
) -> ExitCode {
    const TOOL: &str = "burn-profiled numerics";
    if let Some(Err(error)) = html.map(|path| check_target("--html", path)) {
        eprintln!("{TOOL}: {error}");
        return ExitCode::from(2);
    }
    let read = |path: &Path| numerics::file::read(path).map_err(|error| error.to_string());
    let (reference, current) = match read(before).and_then(|before| Ok((before, read(after)?))) {
        Ok(sides) => sides,
        Err(error) => {
            eprintln!("{TOOL}: {error}");
            return ExitCode::from(2);
        }
    };
    let comparison = numerics::compare_with(&reference, &current, tolerance, inputs);
    let alignment = &comparison.alignment;
    if !alignment.steps_only_reference.is_empty() || !alignment.steps_only_current.is_empty() {
        let file = |path: &Path| match path.is_dir() {
            true => path.join(numerics::NUMERICS_FILE),
            false => path.to_path_buf(),
        };
        let steps = |steps: &[u64]| {
            let shown: Vec<String> = steps.iter().take(5).map(u64::to_string).collect();
            let more = if steps.len() > 5 { ", ..." } else { "" };
            format!("[{}{more}]", shown.join(", "))
        };
        let sides = [
            (before, &alignment.steps_only_reference),
            (after, &alignment.steps_only_current),
        ];
        let only: Vec<String> = sides
            .iter()
            .filter(|(_, only)| !only.is_empty())
            .map(|(path, only)| format!("{} alone has steps {}", file(path).display(), steps(only)))
            .collect();
        eprintln!(
            "{TOOL}: the runs hold other steps: {}; compare runs of the same steps",
            only.join(", ")
        );
        return ExitCode::from(2);
    }
    let text = numerics::render(&comparison, &reference, &current, rows);
    if let Some(path) = html {
        let names = (before.display().to_string(), after.display().to_string());
        let page = numerics_page::page(&comparison, &reference, &current, (&names.0, &names.1));
        if let Err(error) = report::write_page(path, &page) {
            eprintln!("{TOOL}: --html {}: {error}", path.display());
            return ExitCode::from(2);
        }
    }
    if let Err(code) = print_or_exit(TOOL, &text) {
        return code;
    }
    match comparison.agrees() {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    }
}
