//! Runs on disk: a session's output directory read back (`run.json`, and `ops.json` when the
//! run kept statistics), and two runs, or two sides of several runs each, compared op by op
//! with a verdict on the step time ([`diff`]; the `burn-profiled diff` command).
//!
//! ```no_run
//! # use burn_profiled_core as burn_profiled;
//! use burn_profiled::runs::{Run, diff};
//!
//! let before = Run::open("target/run-before").unwrap();
//! let after = Run::open("target/run-after").unwrap();
//! let comparison = diff::compare(&before, &after, diff::DiffSettings::default());
//! println!("{comparison}");
//!
//! // Several runs a side, taken in alternating order: a verdict from their spread.
//! let side = |dir: &str| Run::open_all(dir).unwrap(); // a folder of runs
//! let runs = diff::compare_runs(&side("target/runs/before"), &side("target/runs/after"), Default::default());
//! println!("{runs}");
//! ```

pub mod diff;
mod noise;
pub mod report;

use std::path::{Path, PathBuf};

use serde::Deserialize;

// The session writes its files in this version.
use crate::formats::{OLDEST_RUN_FORMAT_VERSION, RUN_FORMAT_VERSION};

/// A run read back from its output directory.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The directory.
    pub dir: PathBuf,
    /// The backend, as `run.json` names it.
    pub backend: String,
    /// Steps after warm-up.
    pub measured_steps: usize,
    /// Each measured step's time, in seconds.
    pub step_seconds: Vec<f64>,
    /// The op table by op and phase (`ops.json`); empty when the run kept no statistics.
    pub ops: Vec<OpRow>,
    /// Whether `ops.json` was there.
    pub has_ops: bool,
    /// Each device's peak memory in use at a step's end (`run.json`'s `memory`), with the
    /// host's resident size as `host RSS`.
    pub memory_peaks: Vec<(String, u64)>,
    /// `run.json` as read, for what the report shows beyond the above.
    pub summary: serde_json::Value,
    /// `ops.json`'s `work`: how much of the time has a count, the ops without a formula, the
    /// peaks (format 2, with `[roofline] counts`); `Null` otherwise.
    pub work: serde_json::Value,
    /// Host time per call stack, folded (`stacks.folded`, with `[stats] call_sites`).
    pub stacks: Option<String>,
    /// Device time per call stack, folded (`stacks_device.folded`), when recorded.
    pub stacks_device: Option<String>,
}

/// One row of `ops.json`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct OpRow {
    /// The op.
    pub op: String,
    /// Its phase (`-` outside any user range).
    #[serde(default = "no_phase")]
    pub phase: String,
    /// Calls.
    pub calls: u64,
    /// Host time of the calls, in ns.
    pub total_ns: u64,
    /// Device time of their kernels, in ns, when recorded.
    #[serde(default)]
    pub device_total_ns: Option<u64>,
    /// Share of all ops' host time, in percent.
    #[serde(default)]
    pub total_percent: f64,
    /// Mean, median, 95th percentile and longest call, in ns.
    #[serde(default)]
    pub mean_ns: u64,
    /// See `mean_ns`.
    #[serde(default)]
    pub p50_ns: u64,
    /// See `mean_ns`.
    #[serde(default)]
    pub p95_ns: u64,
    /// See `mean_ns`.
    #[serde(default)]
    pub max_ns: u64,
    /// Bytes the calls allocated, and the most memory in use at the end of one (per-op
    /// memory).
    #[serde(default)]
    pub alloc_bytes: Option<u64>,
    /// See `alloc_bytes`.
    #[serde(default)]
    pub peak_bytes: Option<u64>,
    /// The calls' FLOPs, when counted and known (format 2).
    #[serde(default)]
    pub flops: Option<u64>,
    /// The bytes they moved at least, when counted and known (format 2).
    #[serde(default)]
    pub bytes: Option<u64>,
    /// The rates achieved and the place on the roofline (format 2).
    #[serde(default)]
    pub roofline: Option<RooflineRow>,
}

/// A row's rates and its place on the roofline, as `ops.json` has them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RooflineRow {
    /// `device` or `host`: the time the rates are over.
    pub time: String,
    /// FLOPs per byte.
    pub intensity: f64,
    /// FLOP/s achieved.
    pub flops_per_s: f64,
    /// With the peaks: the share of the roofline's bound achieved, 0 to 1.
    #[serde(default)]
    pub share: Option<f64>,
    /// With the peaks: `compute` or `memory`.
    #[serde(default)]
    pub limit: Option<String>,
}

/// A time as the commands print it: `812.3 us`, `1.234 ms`, `2.000 s` (negative too).
fn time_text(ns: f64) -> String {
    match ns.abs() {
        abs if abs >= 1e9 => format!("{:.3} s", ns / 1e9),
        abs if abs >= 1e6 => format!("{:.3} ms", ns / 1e6),
        _ => format!("{:.1} us", ns / 1e3),
    }
}

fn no_phase() -> String {
    "-".to_owned()
}

/// Why a run directory cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The directory or `run.json` is missing.
    #[error("{}: not a burn-profiled run directory: {why}", .dir.display())]
    NotARun {
        /// The directory.
        dir: PathBuf,
        /// What is missing.
        why: String,
    },
    /// A file could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file is not the JSON this crate writes.
    #[error("{}: not a burn-profiled {kind}: {message}", .path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// `run.json` or `ops.json`.
        kind: &'static str,
        /// What is wrong, with the line and column.
        message: String,
    },
    /// A format version this crate does not read.
    #[error(
        "{}: format version {found} (this burn-profiled reads versions {OLDEST_RUN_FORMAT_VERSION} to {known}); compare it with the burn-profiled that wrote it",
        .path.display()
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// What the file says (`none` when it says nothing: written before versions).
        found: String,
        /// The newest version this crate reads.
        known: u32,
    },
}

#[derive(Deserialize)]
struct RunFile {
    backend: String,
    measured_steps: usize,
    #[serde(default)]
    step_seconds: Vec<f64>,
    #[serde(default)]
    memory: Option<MemoryFile>,
}

#[derive(Deserialize)]
struct MemoryFile {
    host: HostFile,
    #[serde(default)]
    devices: Vec<DeviceFile>,
}

#[derive(Deserialize)]
struct HostFile {
    peak_rss_bytes: u64,
}

#[derive(Deserialize)]
struct DeviceFile {
    device: String,
    peak_in_use_bytes: u64,
}

#[derive(Deserialize)]
struct OpsFile {
    rows: Vec<OpRow>,
    #[serde(default)]
    work: serde_json::Value,
}

impl Run {
    /// Reads the run in `dir`: its `run.json`, and its `ops.json` when there is one.
    pub fn open(dir: impl AsRef<Path>) -> Result<Run, RunError> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            return Err(RunError::NotARun {
                dir: dir.to_owned(),
                why: "no such directory".to_owned(),
            });
        }
        let run_path = dir.join("run.json");
        if !run_path.is_file() {
            return Err(RunError::NotARun {
                dir: dir.to_owned(),
                why: "it has no run.json".to_owned(),
            });
        }
        let summary: serde_json::Value = read_versioned(&run_path, "run.json")?;
        let run: RunFile =
            serde_json::from_value(summary.clone()).map_err(|error| RunError::Malformed {
                path: run_path.clone(),
                kind: "run.json",
                message: error.to_string(),
            })?;
        let ops_path = dir.join("ops.json");
        let (ops, work) = match ops_path.is_file() {
            true => {
                let file = read_versioned::<OpsFile>(&ops_path, "ops.json")?;
                (Some(file.rows), file.work)
            }
            false => (None, serde_json::Value::Null),
        };
        let memory_peaks = run
            .memory
            .map(|memory| {
                std::iter::once(("host RSS".to_owned(), memory.host.peak_rss_bytes))
                    .chain(
                        memory
                            .devices
                            .into_iter()
                            .map(|d| (d.device, d.peak_in_use_bytes)),
                    )
                    .collect()
            })
            .unwrap_or_default();
        let folded = |file: &str| -> Result<Option<String>, RunError> {
            let path = dir.join(file);
            if !path.is_file() {
                return Ok(None);
            }
            std::fs::read_to_string(&path)
                .map(Some)
                .map_err(|source| RunError::Read { path, source })
        };
        Ok(Run {
            stacks: folded("stacks.folded")?,
            stacks_device: folded("stacks_device.folded")?,
            dir: dir.to_owned(),
            backend: run.backend,
            measured_steps: run.measured_steps,
            step_seconds: run.step_seconds,
            has_ops: ops.is_some(),
            ops: ops.unwrap_or_default(),
            memory_peaks,
            summary,
            work,
        })
    }
}

impl Run {
    /// The runs `dir` holds: itself when it is a run (has `run.json`), else each of its
    /// subdirectories that is a run, in name order (a folder of runs of one side of a
    /// comparison: `runs/before/1`, `runs/before/2`, ...).
    pub fn open_all(dir: impl AsRef<Path>) -> Result<Vec<Run>, RunError> {
        let dir = dir.as_ref();
        if !dir.is_dir() || dir.join("run.json").is_file() {
            return Ok(vec![Run::open(dir)?]);
        }
        let entries = std::fs::read_dir(dir).map_err(|source| RunError::Read {
            path: dir.to_owned(),
            source,
        })?;
        let mut runs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.join("run.json").is_file())
            .collect();
        if runs.is_empty() {
            return Err(RunError::NotARun {
                dir: dir.to_owned(),
                why: "it has no run.json, and no subdirectory has one".to_owned(),
            });
        }
        runs.sort();
        runs.iter().map(Run::open).collect()
    }
}

/// Reads `path` as JSON of `kind`, after checking its `format_version`.
fn read_versioned<T: serde::de::DeserializeOwned>(
    path: &Path,
    kind: &'static str,
) -> Result<T, RunError> {
    let text = std::fs::read_to_string(path).map_err(|source| RunError::Read {
        path: path.to_owned(),
        source,
    })?;
    let malformed = |message: String| RunError::Malformed {
        path: path.to_owned(),
        kind,
        message,
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|error| malformed(error.to_string()))?;
    let version = value.get("format_version");
    let known = u64::from(OLDEST_RUN_FORMAT_VERSION)..=u64::from(RUN_FORMAT_VERSION);
    if !version
        .and_then(serde_json::Value::as_u64)
        .is_some_and(|version| known.contains(&version))
    {
        if !value.is_object() {
            return Err(malformed("not a JSON object".to_owned()));
        }
        return Err(RunError::Version {
            path: path.to_owned(),
            found: version.map_or_else(|| "none".to_owned(), ToString::to_string),
            known: RUN_FORMAT_VERSION,
        });
    }
    serde_json::from_value(value).map_err(|error| malformed(error.to_string()))
}
