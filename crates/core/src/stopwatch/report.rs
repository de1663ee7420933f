//! The stopwatch report: data (`Report`, serialisable to JSON) and the original's text layout.

use std::fmt;
use std::time::Duration;

use serde::Serialize;

use crate::python::repr;

/// What a stopwatch measured; `Display` prints the original's report layout, and it
/// serialises to JSON with serde. All times are in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Where the run stands.
    pub state: State,
    /// The one-time measurements, in the order they were started.
    pub one_time: Vec<OneTime>,
}

/// Where the run stands when the report is made.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum State {
    /// Still in warm-up.
    WarmupNotFinished {
        /// Iterations finished so far.
        iterations_finished: usize,
        /// Warm-up iterations configured.
        warmup_iterations: usize,
    },
    /// Warm-up is over, but no iteration has finished since.
    NoMeasuredIterations {
        /// Warm-up iterations configured.
        warmup_iterations: usize,
    },
    /// Measured iterations.
    Measured {
        /// Iterations finished after warm-up.
        iterations: usize,
        /// The repeated measurements, in the order their names were first seen.
        entries: Vec<Entry>,
        /// The CPU-usage measurement, if one was selected.
        cpu_usage: Option<CpuUsage>,
    },
}

/// A repeated measurement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// Its name.
    pub name: String,
    /// Total time divided by the measured iterations.
    pub per_iteration: f64,
    /// Total time divided by the number of intervals; `None` when there were none (the
    /// original crashes with a ZeroDivisionError there; this port prints `n/a`).
    pub per_interval: Option<f64>,
    /// Total time.
    pub total: f64,
    /// Number of intervals measured.
    pub intervals: usize,
}

impl Entry {
    #[doc(hidden)]
    pub fn new(name: &str, total: Duration, intervals: usize, iterations: usize) -> Self {
        let total = total.as_secs_f64();
        Entry {
            name: name.to_owned(),
            per_iteration: total / iterations as f64,
            per_interval: (intervals > 0).then(|| total / intervals as f64),
            total,
            intervals,
        }
    }
}

/// The CPU-usage measurement's results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuUsage {
    /// The measurement's name.
    pub name: String,
    /// System-wide CPU usage in percent, time-weighted over the measured intervals; `None`
    /// before any interval.
    pub mean_percent: Option<f64>,
    /// Highest resident memory of the process seen at the end of an interval, in bytes.
    pub peak_rss_bytes: Option<u64>,
    /// Mean of those samples, in bytes.
    pub mean_rss_bytes: Option<u64>,
}

/// A one-time measurement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OneTime {
    /// Its name.
    pub name: String,
    /// Its length; `None` while it is still running.
    pub seconds: Option<f64>,
}

impl Report {
    /// The report as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

const TILDES: &str = "~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~";
const DOTS: &str = ". . . . . . . . . . . . . . . . . . . . . . . . . ";

fn seconds(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_owned(), repr)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{0} Stopwatch {0}", "#".repeat(25))?;
        writeln!(f, "{TILDES}")?;
        match &self.state {
            State::WarmupNotFinished {
                iterations_finished,
                warmup_iterations,
            } => writeln!(
                f,
                "warmup not finished ({iterations_finished} out of {warmup_iterations} warmup iterations finished)"
            )?,
            State::NoMeasuredIterations { warmup_iterations } => writeln!(
                f,
                "warmup finished ({warmup_iterations} iterations), but no iterations were performed after that"
            )?,
            State::Measured {
                iterations,
                entries,
                cpu_usage,
            } => {
                writeln!(f, "Num. measured iterations: {iterations}")?;
                type Column = fn(&Entry) -> Option<f64>;
                let sections: [(&str, Column); 3] = [
                    ("Average runtime per iteration:", |e| Some(e.per_iteration)),
                    ("Average runtime per measured interval:", |e| e.per_interval),
                    ("Total runtime:", |e| Some(e.total)),
                ];
                for (title, value) in sections {
                    writeln!(f, "{DOTS}")?;
                    writeln!(f, "{title}")?;
                    for entry in entries {
                        writeln!(f, "  `{}`: {}", entry.name, seconds(value(entry)))?;
                    }
                }
                writeln!(f, "{DOTS}")?;
                if let Some(cpu) = cpu_usage {
                    writeln!(
                        f,
                        "Mean CPU usage during `{}`: {}",
                        cpu.name,
                        seconds(cpu.mean_percent)
                    )?;
                    if let (Some(peak), Some(mean)) = (cpu.peak_rss_bytes, cpu.mean_rss_bytes) {
                        writeln!(
                            f,
                            "Peak / mean host memory (RSS) during `{}`: {} / {}",
                            cpu.name,
                            mib(peak),
                            mib(mean)
                        )?;
                    }
                }
            }
        }
        if !self.one_time.is_empty() {
            writeln!(f, "{TILDES}")?;
            writeln!(f, "One-time measurements:")?;
            for one in &self.one_time {
                let value = one.seconds.map_or_else(|| "running".to_owned(), repr);
                writeln!(f, "  `{}`: {value}", one.name)?;
            }
        }
        writeln!(f, "{TILDES}")?;
        write!(f, "{}", "#".repeat(61))
    }
}
