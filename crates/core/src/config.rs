//! `RuntimeConfig`: one place that switches every tool on or off, from a preset, a TOML or JSON
//! file, or the environment variable `BURN_PROFILED`, the way the original tools are enabled
//! centrally from a training script.
//!
//! ```
//! # use burn_profiled_core as burn_profiled;
//! use burn_profiled::config::{Preset, RuntimeConfig};
//!
//! let profile = RuntimeConfig::preset(Preset::Profile);
//! assert!(profile.nvtx.op_ranges && !profile.nvtx.keep_track_of_range_order);
//!
//! let custom: RuntimeConfig = RuntimeConfig::from_toml_str("
//!     [stopwatch]
//!     enabled = true
//!     warmup_iters = 10
//! ").unwrap();
//! assert_eq!(custom.stopwatch.warmup_iters, 10);
//! assert!(RuntimeConfig::from_toml_str("[stopwatch]\nwarmup = 1").is_err()); // unknown key
//! ```

use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The stopwatch section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StopwatchSection {
    /// Enable the stopwatch.
    pub enabled: bool,
    /// Iterations before measuring.
    pub warmup_iters: usize,
    /// Print the report every this many measured iterations (never when absent; 0 is an
    /// error).
    pub print_every: Option<std::num::NonZeroUsize>,
    /// Sync the device before each timestamp.
    pub sync: bool,
    /// The measurement whose intervals sample CPU usage and memory.
    pub cpu_usage_name: Option<String>,
}

impl Default for StopwatchSection {
    fn default() -> Self {
        StopwatchSection {
            enabled: false,
            warmup_iters: 3,
            print_every: None,
            sync: true,
            cpu_usage_name: Some("step".to_owned()),
        }
    }
}

/// The NVTX section.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NvtxSection {
    /// User ranges (`nvtx::range`, `nvtx::scope`, stage markers).
    pub user_ranges: bool,
    /// One range per backend op of `Profiled` backends, after warm-up.
    pub op_ranges: bool,
    /// Sync the device before each user range push.
    pub sync_on_push: bool,
    /// Sync the device before each user range pop.
    pub sync_on_pop: bool,
    /// Check every pop against a per-thread stack (debugging).
    pub keep_track_of_range_order: bool,
    /// Sync the device around every op (attributes GPU time to ops; slow).
    pub per_op_sync: bool,
    /// `Session::run_step` runs steps on the device's launch thread, where CubeCL backends
    /// launch their kernels, so each op range contains its kernels. Only with a launch thread
    /// given to the session (`Session::set_launch_thread`; Burn 0.21's edition).
    pub steps_on_launch_thread: bool,
}

/// The op statistics section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StatsSection {
    /// Record per-op statistics after warm-up.
    pub enabled: bool,
    /// Also by input shapes.
    pub by_shapes: bool,
    /// Device time per op through CUPTI (cargo feature `cupti`): kernels and device time in
    /// the op table, `ops.json` and `run.json`. Where CUPTI cannot record, one line says why
    /// and the statistics keep host times only.
    pub device_time: bool,
    /// Each op's call site, the innermost function of your code it was called from (Burn
    /// 0.21's `Profiled<B>`): the op table by call site (`ops_by_call_site.json`), a flame
    /// graph of host time per call stack (`stacks.folded`, and in the report), and the phase
    /// (`backward`, `optimizer`) of ops run outside any user range. With `[numerics]`, also
    /// each numerics record's call site, from the first step (statistics need not be on).
    pub call_sites: bool,
    /// Each backward and optimizer op linked to the forward op it works for, from the tensors
    /// they share (Burn 0.21's `Profiled<B>`; on Burn 0.22 each block, from the IR's tensor
    /// ids): its forward phase in `ops.json`, and the time per module (forward phase: the
    /// innermost user range of the forward ops) with its backward and optimizer ops, printed
    /// and in `ops_by_module.json`.
    pub forward_links: bool,
    /// Rows of the op table printed at the end, longest first (`ops.json` has every row);
    /// 0 prints them all.
    pub table_rows: usize,
}

impl Default for StatsSection {
    fn default() -> Self {
        StatsSection {
            enabled: false,
            by_shapes: false,
            device_time: false,
            call_sites: false,
            forward_links: false,
            table_rows: 25,
        }
    }
}

/// The timeline section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TraceSection {
    /// Record the timeline after warm-up.
    pub enabled: bool,
    /// Events kept at most.
    pub max_events: usize,
}

impl Default for TraceSection {
    fn default() -> Self {
        TraceSection {
            enabled: false,
            max_events: 1_000_000,
        }
    }
}

/// The tensor dump section.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DumpSection {
    /// Dump tensors and gradients.
    pub enabled: bool,
    /// Where dumps go (default: `dumps/` in the output directory).
    pub dir: Option<PathBuf>,
    /// Compare with the dumps already there instead of writing.
    pub compare: bool,
}

impl DumpSection {
    /// Where dumps go for a run writing to `out_dir`: [`dir`](DumpSection::dir), else
    /// `out_dir/dumps`.
    ///
    /// ```
    /// # use burn_profiled_core as burn_profiled;
    /// use std::path::Path;
    /// use burn_profiled::config::DumpSection;
    ///
    /// let default = DumpSection::default();
    /// assert_eq!(default.dir_in(Path::new("run")), Path::new("run/dumps"));
    /// ```
    pub fn dir_in(&self, out_dir: &Path) -> PathBuf {
        self.dir.clone().unwrap_or_else(|| out_dir.join("dumps"))
    }
}

/// The capture section.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CaptureSection {
    /// Start the Nsight capture (NVTX range `capture`, `cuProfilerStart`) when warm-up ends.
    pub after_warmup: bool,
}

/// The host section.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostSection {
    /// Stop the run cleanly when resident memory passes this many MiB.
    pub memory_limit_mib: Option<u64>,
}

/// The memory section: where the memory goes (the edition's `memory` module).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemorySection {
    /// At each measured step's end: host RSS, and each device's memory in use and reserved
    /// (through the session's launch threads), in `run.json` and `trace.json`, with the peaks
    /// and the growth warning.
    pub per_step: bool,
    /// Per op, after warm-up: the bytes it allocated and the memory in use when it ended, as
    /// `Alloc` and `Peak` in the op table and `ops.json` (needs `[stats] enabled`).
    pub per_op: bool,
    /// Stop the run cleanly when a device's reserved memory passes this many MiB (read at each
    /// step's end, through the session's launch threads).
    pub device_limit_mib: Option<std::num::NonZeroU64>,
    /// Write `graph.json`: one step's ops in the order they ran, the tensors they read and made
    /// (shape, dtype, bytes), producer and consumer edges, when each tensor was made and freed,
    /// and each backward and optimizer op's forward op.
    pub graph: bool,
    /// The step `graph` records, counted from 0 with warm-up; by default the first measured
    /// step (`stopwatch.warmup_iters`).
    pub graph_step: Option<usize>,
}

/// The report section.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReportSection {
    /// Write `report.html` (the run as one HTML page, as `burn-profiled report` makes it) at
    /// the end.
    pub html: bool,
}

/// The roofline section: how far each op ran from its device's limits.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RooflineSection {
    /// Count each op's FLOPs and the bytes it moves at least, from its shapes and dtypes
    /// ([`work`](crate::work)), once per distinct shape: columns of `ops.json` and the report,
    /// and its achieved FLOP/s and bytes/s. Needs `stats.enabled`.
    pub counts: bool,
    /// The device's peak arithmetic rate at the dtype the ops run in, in TFLOP/s (the H200's
    /// datasheet: 67 for dense f32): with `peak_gbps`, each op's share of the roofline and the
    /// limit that binds it.
    pub peak_tflops: Option<f64>,
    /// The device's peak memory bandwidth, in GB/s (the H200's datasheet: 4800).
    pub peak_gbps: Option<f64>,
    /// Measure both peaks at the session's start through the run's backend and device (a
    /// matmul and an elementwise op over a large tensor, a fraction of a second), instead of
    /// giving them; the session says what it measured, or why it could not.
    pub calibrate: bool,
    /// Also print the roofline's columns in the op table at the end (`ops.json` and the report
    /// always have them).
    pub in_table: bool,
}

impl RooflineSection {
    /// The peaks, when both are given.
    pub fn peaks(&self) -> Option<crate::roofline::Peaks> {
        Some(crate::roofline::Peaks {
            flops_per_s: self.peak_tflops? * 1e12,
            bytes_per_s: self.peak_gbps? * 1e9,
        })
    }
}

/// The numerics section: which op changed the numbers, and which op made a NaN
/// ([`numerics`](crate::numerics)).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NumericsSection {
    /// Each op's output tensors get a [`Fingerprint`](crate::numerics::Fingerprint) (NaN and
    /// Inf counts, min, max, sums), written to `numerics.jsonl` for `burn-profiled numerics`
    /// to compare with another run. Each output is read to the host as the op returns: on a
    /// GPU, a sync per op.
    pub fingerprints: bool,
    /// Look for the first op whose output holds a NaN or an Inf: reported on stderr and in
    /// `run.json` (`non_finite`), and with `stop` the run stops at that step's end.
    pub check_finite: CheckFinite,
    /// The first and last step (from 0, warm-up steps included) whose ops are fingerprinted
    /// and checked; every step when absent.
    pub steps: Option<[u64; 2]>,
    /// `[step, seq]`: keep the inputs of that op call (its `seq` in `numerics.jsonl`, as
    /// `burn-profiled numerics` names a culprit) in `captured/`, and, on Burn 0.21 on another
    /// backend than NdArray, run it again on NdArray: `run.json`'s `captured` says whether
    /// NdArray computes the same outputs. Needs `fingerprints` (which numbers the calls).
    pub capture: Option<[u64; 2]>,
}

impl NumericsSection {
    /// Whether an op's outputs are read at all.
    pub fn enabled(&self) -> bool {
        self.fingerprints || self.check_finite != CheckFinite::Off
    }
}

/// What `[numerics] check_finite` does with the first op that made a NaN or an Inf.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckFinite {
    /// No check.
    #[default]
    Off,
    /// Say which op it was, on stderr and in `run.json`, and go on.
    Warn,
    /// Say it, and stop the run at that step's end as a memory limit does: the session's
    /// `finish_iter` returns the error, `run.json` has `stopped_by` (the examples exit 3).
    Stop,
}

/// What every tool does in a run. Missing keys take their defaults (everything off); unknown
/// keys are errors.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RuntimeConfig {
    /// The stopwatch.
    pub stopwatch: StopwatchSection,
    /// NVTX ranges.
    pub nvtx: NvtxSection,
    /// Per-op statistics.
    pub stats: StatsSection,
    /// The timeline.
    pub trace: TraceSection,
    /// Tensor dumps.
    pub dump: DumpSection,
    /// Nsight capture control.
    pub capture: CaptureSection,
    /// Host memory.
    pub host: HostSection,
    /// Memory per step and per op.
    pub memory: MemorySection,
    /// The HTML report.
    pub report: ReportSection,
    /// Work per op and the roofline.
    pub roofline: RooflineSection,
    /// Per-op numerics: fingerprints and the first NaN.
    pub numerics: NumericsSection,
}

/// The presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// Everything off: training at full speed.
    Train,
    /// The stopwatch only.
    Eval,
    /// Everything on (stopwatch, user and op ranges, statistics, timeline, capture after
    /// warm-up), no order checks and no dumps.
    Profile,
    /// Everything on, with range order checks, tensor dumps, per-op fingerprints and the
    /// first NaN or Inf reported (`[numerics] check_finite = "warn"`).
    Debug,
}

impl std::fmt::Display for Preset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Preset::Train => "train",
            Preset::Eval => "eval",
            Preset::Profile => "profile",
            Preset::Debug => "debug",
        })
    }
}

impl FromStr for Preset {
    type Err = ConfigError;

    fn from_str(name: &str) -> Result<Self, ConfigError> {
        match name {
            "train" => Ok(Preset::Train),
            "eval" => Ok(Preset::Eval),
            "profile" => Ok(Preset::Profile),
            "debug" => Ok(Preset::Debug),
            _ => Err(ConfigError::UnknownPreset(name.to_owned())),
        }
    }
}

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Not a preset name.
    #[error(
        "unknown preset `{0}`: expected train, eval, profile or debug, or the path of a .toml or .json file"
    )]
    UnknownPreset(String),
    /// The file could not be read.
    #[error("cannot read the configuration file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The TOML is malformed or has an unknown key or a bad value.
    #[error("invalid configuration{}: {message}", origin(.path))]
    Toml {
        /// The file, if there is one.
        path: Option<PathBuf>,
        /// toml's message: the key, the line and column, and what is wrong.
        message: String,
    },
    /// The JSON is malformed or has an unknown key or a bad value.
    #[error("invalid configuration{}: {message}", origin(.path))]
    Json {
        /// The file, if there is one.
        path: Option<PathBuf>,
        /// serde_json's message, with the line and column.
        message: String,
    },
    /// Keys whose values cannot go together.
    #[error("invalid configuration{}: `{key}` {message}", origin(.path))]
    Invalid {
        /// The file, if there is one.
        path: Option<PathBuf>,
        /// The key at fault, as `section.key`.
        key: &'static str,
        /// What is wrong.
        message: &'static str,
    },
    /// A file that is neither `.toml` nor `.json`.
    #[error("configuration file {0} must end in .toml or .json")]
    Extension(PathBuf),
}

fn origin(path: &Option<PathBuf>) -> String {
    path.as_ref()
        .map(|p| format!(" in {}", p.display()))
        .unwrap_or_default()
}

/// The environment variable [`RuntimeConfig::from_env_or`] reads.
pub const ENV_VAR: &str = "BURN_PROFILED";

impl RuntimeConfig {
    /// A preset.
    pub fn preset(preset: Preset) -> Self {
        let mut config = RuntimeConfig::default();
        match preset {
            Preset::Train => {}
            Preset::Eval => {
                config.stopwatch.enabled = true;
                config.memory.per_step = true;
            }
            Preset::Profile | Preset::Debug => {
                config.stopwatch.enabled = true;
                config.nvtx.user_ranges = true;
                config.nvtx.op_ranges = true;
                config.nvtx.steps_on_launch_thread = true;
                config.stats.enabled = true;
                // Where the build can record it (CUDA with the `cupti` feature).
                config.stats.device_time = cfg!(feature = "cupti");
                config.trace.enabled = true;
                config.capture.after_warmup = true;
                config.memory.per_step = true;
                config.report.html = true;
                config.roofline.counts = true;
                config.stats.forward_links = true;
                if preset == Preset::Debug {
                    config.memory.per_op = true;
                    config.memory.graph = true;
                    config.nvtx.keep_track_of_range_order = true;
                    config.dump.enabled = true;
                    config.stats.by_shapes = true;
                    config.stats.call_sites = true;
                    config.numerics.fingerprints = true;
                    config.numerics.check_finite = CheckFinite::Warn;
                }
            }
        }
        config
    }

    /// Parses TOML text.
    pub fn from_toml_str(text: &str) -> Result<Self, ConfigError> {
        toml::from_str::<Self>(text)
            .map_err(|error| ConfigError::Toml {
                path: None,
                message: error.to_string().trim_end().to_owned(),
            })?
            .validated()
    }

    /// Parses JSON text.
    pub fn from_json_str(text: &str) -> Result<Self, ConfigError> {
        serde_json::from_str::<Self>(text)
            .map_err(|error| ConfigError::Json {
                path: None,
                message: error.to_string(),
            })?
            .validated()
    }

    /// The configuration, or the first pair of keys that cannot go together.
    pub fn validated(self) -> Result<Self, ConfigError> {
        if self.memory.per_op && !self.stats.enabled {
            return Err(ConfigError::Invalid {
                path: None,
                key: "memory.per_op",
                message: "needs `stats.enabled = true`: per-op memory is columns of the op table",
            });
        }
        if self.roofline.counts && !self.stats.enabled {
            return Err(ConfigError::Invalid {
                path: None,
                key: "roofline.counts",
                message: "needs `stats.enabled = true`: an op's work is columns of the op table",
            });
        }
        if self.roofline.peak_tflops.is_some() != self.roofline.peak_gbps.is_some() {
            return Err(ConfigError::Invalid {
                path: None,
                key: "roofline.peak_tflops",
                message: "goes with `roofline.peak_gbps`: a roofline has both roofs",
            });
        }
        for (key, peak) in [
            ("roofline.peak_tflops", self.roofline.peak_tflops),
            ("roofline.peak_gbps", self.roofline.peak_gbps),
        ] {
            if peak.is_some_and(|peak| !(peak.is_finite() && peak > 0.0)) {
                return Err(ConfigError::Invalid {
                    path: None,
                    key,
                    message: "must be a positive number",
                });
            }
        }
        let needs_counts = [
            ("roofline.in_table", self.roofline.in_table),
            ("roofline.calibrate", self.roofline.calibrate),
            ("roofline.peak_tflops", self.roofline.peak_tflops.is_some()),
        ];
        if let Some((key, _)) = needs_counts.iter().find(|(_, set)| *set)
            && !self.roofline.counts
        {
            return Err(ConfigError::Invalid {
                path: None,
                key,
                message: "needs `roofline.counts = true`: the roofline places each op by its counts",
            });
        }
        if self.roofline.calibrate && self.roofline.peak_tflops.is_some() {
            return Err(ConfigError::Invalid {
                path: None,
                key: "roofline.calibrate",
                message: "measures what `roofline.peak_tflops` and `peak_gbps` give: set one or the other",
            });
        }
        if let Some([step, _]) = self.numerics.capture {
            if !self.numerics.fingerprints {
                return Err(ConfigError::Invalid {
                    path: None,
                    key: "numerics.capture",
                    message: "names an op call by its `seq` in numerics.jsonl, which `numerics.fingerprints` numbers: set it",
                });
            }
            if let Some([first, last]) = self.numerics.steps
                && !(first..=last).contains(&step)
            {
                return Err(ConfigError::Invalid {
                    path: None,
                    key: "numerics.capture",
                    message: "names a step outside `numerics.steps`, whose ops are not recorded",
                });
            }
        }
        if let Some([first, last]) = self.numerics.steps {
            if first > last {
                return Err(ConfigError::Invalid {
                    path: None,
                    key: "numerics.steps",
                    message: "is [first, last]: the first step cannot come after the last",
                });
            }
            if !self.numerics.enabled() {
                return Err(ConfigError::Invalid {
                    path: None,
                    key: "numerics.steps",
                    message: "bounds `numerics.fingerprints` and `numerics.check_finite`: set one of them",
                });
            }
        }
        Ok(self)
    }

    /// Reads a `.toml` or `.json` file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        let with_path = |error: ConfigError| match error {
            ConfigError::Toml { message, .. } => ConfigError::Toml {
                path: Some(path.to_owned()),
                message,
            },
            ConfigError::Json { message, .. } => ConfigError::Json {
                path: Some(path.to_owned()),
                message,
            },
            ConfigError::Invalid { key, message, .. } => ConfigError::Invalid {
                path: Some(path.to_owned()),
                key,
                message,
            },
            other => other,
        };
        match path.extension().and_then(|e| e.to_str()) {
            Some("toml") => Self::from_toml_str(&text).map_err(with_path),
            Some("json") => Self::from_json_str(&text).map_err(with_path),
            _ => Err(ConfigError::Extension(path.to_owned())),
        }
    }

    /// A preset name or a file path.
    pub fn from_name_or_path(value: &str) -> Result<Self, ConfigError> {
        if value.ends_with(".toml") || value.ends_with(".json") {
            Self::from_file(value)
        } else {
            value.parse().map(Self::preset)
        }
    }

    /// The configuration named by `BURN_PROFILED` (a preset name or a file path), or `default`
    /// when the variable is unset.
    pub fn from_env_or(default: Preset) -> Result<Self, ConfigError> {
        match std::env::var(ENV_VAR) {
            Ok(value) if !value.is_empty() => Self::from_name_or_path(&value),
            _ => Ok(Self::preset(default)),
        }
    }

    /// The configuration as TOML, e.g. to start a file from a preset.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_default()
    }
}
