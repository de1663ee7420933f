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
mod html_text;
mod noise;
pub mod numerics_page;
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
    /// The time per module (`ops_by_module.json`, with `[stats] forward_links`).
    pub modules: Option<Modules>,
}

/// `ops_by_module.json`: each forward phase's time with the backward and optimizer ops linked
/// to it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Modules {
    /// Whose time it is: `device` or `host`.
    pub time: String,
    /// The modules, most time first.
    pub modules: Vec<ModuleTime>,
}

/// One module of [`Modules`], in nanoseconds over the run's measured steps.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ModuleTime {
    /// The forward phase, or `(not linked)`.
    pub module: String,
    /// Its forward ops' time.
    pub forward_ns: u64,
    /// The backward ops' linked to them.
    pub backward_ns: u64,
    /// The optimizer ops' linked to them.
    pub optimizer_ns: u64,
    /// The three together.
    pub total_ns: u64,
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
    /// A number in a file that no run can have (a negative or non-finite step time, a peak of
    /// 0, times that add up past what 64 bits hold): the comparison or the report would show
    /// a figure that means nothing.
    #[error("{}: {field}: {why}", .path.display())]
    Impossible {
        /// The file.
        path: PathBuf,
        /// The field at fault, as the file names it (`step_seconds[3]`).
        field: String,
        /// What is wrong with it, and what a run has instead.
        why: String,
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
        if !regular_file(dir, "run.json")? {
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
        check_step_seconds(&run_path, &run.step_seconds)?;
        let ops_path = dir.join("ops.json");
        let (ops, work) = match regular_file(dir, "ops.json")? {
            true => {
                let file = read_versioned::<OpsFile>(&ops_path, "ops.json")?;
                check_ops(&ops_path, &file)?;
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
            if !regular_file(dir, file)? {
                return Ok(None);
            }
            std::fs::read_to_string(&path)
                .map(Some)
                .map_err(|source| RunError::Read { path, source })
        };
        let modules = match regular_file(dir, "ops_by_module.json")? {
            true => Some(read_versioned::<Modules>(
                &dir.join("ops_by_module.json"),
                "ops_by_module.json",
            )?),
            false => None,
        };
        Ok(Run {
            modules,
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
        if !dir.is_dir() || something_at(&dir.join("run.json")) {
            return Ok(vec![Run::open(dir)?]);
        }
        let entries = std::fs::read_dir(dir).map_err(|source| RunError::Read {
            path: dir.to_owned(),
            source,
        })?;
        let mut runs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.is_dir() && something_at(&path.join("run.json")))
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

/// Whether `dir` has the file `name`: `false` when nothing is there, `true` for a regular file
/// (through symlinks), and an error naming it for anything else (a directory, a FIFO that
/// would block the read, a symlink loop): "it has no run.json" would be wrong there.
fn regular_file(dir: &Path, name: &str) -> Result<bool, RunError> {
    let path = dir.join(name);
    let not_a_file = |what: &str| RunError::NotARun {
        dir: dir.to_owned(),
        why: format!("its {name} is {what}, not a file"),
    };
    match std::fs::metadata(&path) {
        Ok(metadata) if metadata.is_file() => Ok(true),
        Ok(metadata) if metadata.is_dir() => Err(not_a_file("a directory")),
        Ok(_) => Err(not_a_file("a FIFO, socket or device")),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            match std::fs::symlink_metadata(&path) {
                Ok(_) => Err(not_a_file("a symlink to nothing")),
                Err(_) => Ok(false),
            }
        }
        Err(source) => Err(RunError::Read { path, source }),
    }
}

/// Whether anything, even a broken symlink, is at `path`.
fn something_at(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// The longest step a run can report, in seconds (a year): beyond it a time is corrupt, and
/// two sides' ratio could overflow.
const LONGEST_STEP_SECONDS: f64 = 365.0 * 24.0 * 3600.0;
/// The shortest: the clock's resolution, one nanosecond. A step of 0 s was not measured.
const SHORTEST_STEP_SECONDS: f64 = 1e-9;

/// Checks `run.json`'s step times, once, where they are read: every one finite, from 1 ns to
/// a year. The comparison divides by them and takes their logarithms.
fn check_step_seconds(path: &Path, steps: &[f64]) -> Result<(), RunError> {
    let impossible = |field: String, why: String| RunError::Impossible {
        path: path.to_owned(),
        field,
        why,
    };
    if steps.len() > 1 && steps.iter().all(|step| *step == 0.0) {
        return Err(impossible(
            "step_seconds".to_owned(),
            format!(
                "all {} step times are 0 s: no step was measured (a step takes at least 1 ns)",
                steps.len()
            ),
        ));
    }
    match steps
        .iter()
        .position(|step| !(SHORTEST_STEP_SECONDS..=LONGEST_STEP_SECONDS).contains(step))
    {
        Some(at) => Err(impossible(
            format!("step_seconds[{at}]"),
            format!(
                "{} s is no step time: a step takes from 1 ns to a year",
                steps[at]
            ),
        )),
        None => Ok(()),
    }
}

/// Checks `ops.json`'s numbers, once, where they are read: the rows' times and calls add up
/// within 64 bits, the roofline's rates are finite and not negative, and the peaks, when
/// given, finite and positive (the chart's axes are their logarithms).
fn check_ops(path: &Path, file: &OpsFile) -> Result<(), RunError> {
    let impossible = |field: String, why: &str| RunError::Impossible {
        path: path.to_owned(),
        field,
        why: why.to_owned(),
    };
    type Field = fn(&OpRow) -> u64;
    let sums: [(&str, Field); 3] = [
        ("total_ns", |row| row.total_ns),
        ("device_total_ns", |row| row.device_total_ns.unwrap_or(0)),
        ("calls", |row| row.calls),
    ];
    for (field, value) in sums {
        let sum = file
            .rows
            .iter()
            .try_fold(0u64, |sum, row| sum.checked_add(value(row)));
        if sum.is_none() {
            return Err(impossible(
                format!("rows[].{field}"),
                "the rows add up to more than 2^64: no run is that long",
            ));
        }
    }
    for (at, row) in file.rows.iter().enumerate() {
        if let Some(point) = &row.roofline {
            let rates = [
                ("intensity", point.intensity),
                ("flops_per_s", point.flops_per_s),
                ("share", point.share.unwrap_or(0.0)),
            ];
            if let Some((field, _)) = rates.iter().find(|(_, v)| !(v.is_finite() && *v >= 0.0)) {
                return Err(impossible(
                    format!("rows[{at}].roofline.{field}"),
                    "a rate is a finite number, 0 or more",
                ));
            }
        }
    }
    for field in ["flops_per_s", "bytes_per_s"] {
        let peak = &file.work["peaks"][field];
        if !peak.is_null() && !peak.as_f64().is_some_and(|v| v.is_finite() && v > 0.0) {
            return Err(impossible(
                format!("work.peaks.{field}"),
                "a peak rate is a finite number above 0",
            ));
        }
    }
    Ok(())
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
