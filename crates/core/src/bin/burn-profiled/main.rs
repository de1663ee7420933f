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
//! Exit status: 0; 1 when `--fail-if-slower PCT` is given and the verdict is slower by more;
//! 2 on unusable input (a message names the file and why).

use std::path::PathBuf;
use std::process::ExitCode;

use burn_profiled_core::runs::{Run, diff};
use clap::{Parser, Subcommand};

/// Commands on burn-profiled runs (a session's output directory).
#[derive(Debug, Parser)]
#[command(
    name = "burn-profiled",
    version,
    after_help = "Exit status: 0; 1 slower than --fail-if-slower; 2 unusable input."
)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Writes a run's report: one HTML file that opens from disk (step times, time by phase,
    /// top ops, the op table, the stopwatch, memory).
    Report {
        /// The run (a directory with run.json, and ops.json for the ops).
        run_dir: PathBuf,
        /// Where the report goes (default: RUN_DIR/report.html).
        #[arg(long)]
        out: Option<PathBuf>,
    },
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
        #[arg(long, value_name = "PCT")]
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
}

fn parse_percent(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(percent) if percent >= 0.0 => Ok(percent),
        Ok(_) => Err("a percentage of at least 0".to_owned()),
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
    }
}

fn report(run_dir: PathBuf, out: Option<PathBuf>) -> ExitCode {
    let run = match Run::open(&run_dir) {
        Ok(run) => run,
        Err(error) => {
            eprintln!("burn-profiled report: {error}");
            return ExitCode::from(2);
        }
    };
    let out = out.unwrap_or_else(|| run_dir.join("report.html"));
    match burn_profiled_core::runs::report::write(&run, &out) {
        Ok(()) => {
            burn_profiled_core::cli_output::print(&format!("wrote {}\n", out.display()));
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!(
                "burn-profiled report: cannot write {}: {error}",
                out.display()
            );
            ExitCode::from(2)
        }
    }
}

fn diff(
    before: Vec<PathBuf>,
    after: Vec<PathBuf>,
    fail_if_slower: Option<f64>,
    (noise, rows): (f64, usize),
    html: Option<PathBuf>,
) -> ExitCode {
    let (before, after) = match (before, after) {
        (before, after) if !after.is_empty() => (before, after),
        (mut both, _) if both.len() == 2 => {
            let after = both.split_off(1);
            (both, after)
        }
        (given, _) => {
            eprintln!(
                "burn-profiled diff: {} run directories and no `--`: give BEFORE AFTER, or the \
                 runs before, `--`, and the runs after (burn-profiled diff B1 B2 B3 -- A1 A2 A3)",
                given.len()
            );
            return ExitCode::from(2);
        }
    };
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
            eprintln!("burn-profiled diff: {error}");
            return ExitCode::from(2);
        }
    };
    let settings = diff::DiffSettings {
        noise_percent: noise,
        rows,
    };
    let comparison = diff::compare_runs(&before, &after, settings);
    burn_profiled_core::cli_output::print(&comparison.to_string());
    if let Some(html) = html {
        let page = burn_profiled_core::runs::report::diff_html(&comparison, &before, &after);
        if let Err(error) = burn_profiled_core::runs::report::write_page(&html, &page) {
            eprintln!(
                "burn-profiled diff: cannot write {}: {error}",
                html.display()
            );
            return ExitCode::from(2);
        }
        burn_profiled_core::cli_output::print(&format!("wrote {}\n", html.display()));
    }
    match fail_if_slower {
        Some(percent) if comparison.slower_than(percent) => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}
