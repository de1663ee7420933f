//! `burn-profiled`: commands on the runs a session leaves on disk.
//!
//! `burn-profiled report RUN_DIR [--out FILE]` writes a run's HTML report (default
//! `RUN_DIR/report.html`): one file, nothing loaded from the network.
//!
//! `burn-profiled diff BEFORE_DIR AFTER_DIR` compares two runs: the step time, with a verdict
//! that accounts for noise, and per op and phase the time per step before and after.
//!
//! Exit status: 0; 1 when `--fail-if-slower PCT` is given and the step got slower by more, beyond
//! noise; 2 on unusable input (a message names the file and why).

use std::path::PathBuf;
use std::process::ExitCode;

use burn_profiled::runs::{Run, diff};
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
    /// Compares two runs: step time with a verdict that accounts for noise, and each op's
    /// time per step before and after.
    Diff {
        /// The run before the change (a directory with run.json, and ops.json for the ops).
        before_dir: PathBuf,
        /// The run after it.
        after_dir: PathBuf,
        /// Exit with 1 when the step got slower by more than this many percent, beyond noise.
        #[arg(long, value_name = "PCT")]
        fail_if_slower: Option<f64>,
        /// Step-time changes under this many percent count as noise.
        #[arg(long, value_name = "PCT", default_value_t = 5.0)]
        noise: f64,
        /// Op rows shown.
        #[arg(long, default_value_t = 20)]
        rows: usize,
        /// Also write the comparison as one HTML page (every op and phase).
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    match Args::parse().command {
        Command::Report { run_dir, out } => report(run_dir, out),
        Command::Diff {
            before_dir,
            after_dir,
            fail_if_slower,
            noise,
            rows,
            html,
        } => diff(before_dir, after_dir, fail_if_slower, (noise, rows), html),
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
    match burn_profiled::runs::report::write(&run, &out) {
        Ok(()) => {
            println!("wrote {}", out.display());
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
    before_dir: PathBuf,
    after_dir: PathBuf,
    fail_if_slower: Option<f64>,
    (noise, rows): (f64, usize),
    html: Option<PathBuf>,
) -> ExitCode {
    let runs = Run::open(&before_dir).and_then(|before| Ok((before, Run::open(&after_dir)?)));
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
    let comparison = diff::compare(&before, &after, settings);
    print!("{comparison}");
    if let Some(html) = html {
        let page = burn_profiled::runs::report::diff_html(&comparison, &before, &after);
        if let Err(error) = burn_profiled::runs::report::write_page(&html, &page) {
            eprintln!(
                "burn-profiled diff: cannot write {}: {error}",
                html.display()
            );
            return ExitCode::from(2);
        }
        println!("wrote {}", html.display());
    }
    match fail_if_slower {
        Some(percent) if comparison.slower_than(percent) => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}
