//! Two runs compared: the step time with a verdict that accounts for noise, and per op and
//! phase the time per step before and after, with the ops only one run has (what a fusion or a
//! rewrite removed or added), device time and memory peaks when both have them, and what the
//! runs were run with that differs (backend, versions, settings).

use std::fmt;

use serde_json::Value;

use super::{OpRow, Run, noise, time_text};
use crate::sinks::stats::bytes_text;

/// How [`compare`] judges and what it shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffSettings {
    /// Changes of the step time smaller than this, in percent, are "no change beyond noise"
    /// even when the steps' interval excludes zero: two runs of one program on one machine
    /// differ by that much (clocks, caches, other processes).
    pub noise_percent: f64,
    /// Op rows shown, largest change first.
    pub rows: usize,
}

impl Default for DiffSettings {
    fn default() -> Self {
        DiffSettings {
            noise_percent: 5.0,
            rows: 20,
        }
    }
}

/// The verdict on the step time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// After is faster by `percent` (the interval from `low` to `high` percent).
    Faster {
        /// How much less time a step takes, in percent.
        percent: f64,
        /// The 95% interval of that, in percent.
        low: f64,
        /// See `low`.
        high: f64,
    },
    /// After is slower by `percent`.
    Slower {
        /// How much more time a step takes, in percent.
        percent: f64,
        /// The 95% interval of that, in percent.
        low: f64,
        /// See `low`.
        high: f64,
    },
    /// The change (`percent`, positive when slower) is within the noise.
    NoChange {
        /// The change, in percent (positive: slower).
        percent: f64,
        /// Its 95% interval.
        low: f64,
        /// See `low`.
        high: f64,
    },
    /// A run has no step times (fewer measured steps than needed, or an older `run.json`).
    Unknown,
}

/// One op and phase in both runs, or in one.
#[derive(Debug, Clone, PartialEq)]
pub struct OpChange {
    /// The op.
    pub op: String,
    /// Its phase.
    pub phase: String,
    /// Host time per measured step before and after, in ns (`None`: not in that run).
    pub before_ns: Option<f64>,
    /// See `before_ns`.
    pub after_ns: Option<f64>,
    /// Device time per measured step, when both runs recorded it.
    pub before_device_ns: Option<f64>,
    /// See `before_device_ns`.
    pub after_device_ns: Option<f64>,
}

impl OpChange {
    /// The host time per step before and after.
    pub fn host(&self) -> BeforeAfter {
        BeforeAfter {
            before: self.before_ns,
            after: self.after_ns,
        }
    }

    /// The device time per step before and after.
    pub fn device(&self) -> BeforeAfter {
        BeforeAfter {
            before: self.before_device_ns,
            after: self.after_device_ns,
        }
    }
}

/// A time per step in the two runs, in ns (`None`: not in that run, or not recorded there).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BeforeAfter {
    /// Before.
    pub before: Option<f64>,
    /// After.
    pub after: Option<f64>,
}

impl BeforeAfter {
    /// After less before (a run without it counts 0).
    pub fn change_ns(self) -> f64 {
        self.after.unwrap_or(0.0) - self.before.unwrap_or(0.0)
    }

    /// Before, after, the change signed (`+1.500 ms`) and after over before (`1.25x`, or
    /// `added` or `removed` where one run lacks it), as text; `-` for what is missing.
    pub fn texts(self) -> [String; 4] {
        let cell = |ns: Option<f64>| ns.map_or_else(|| "-".to_owned(), time_text);
        let change = self.change_ns();
        let sign = if change > 0.0 { "+" } else { "" };
        let ratio = match (self.before, self.after) {
            (Some(b), Some(a)) if b > 0.0 => format!("{:.2}x", a / b),
            (None, Some(_)) => "added".to_owned(),
            (Some(_), None) => "removed".to_owned(),
            _ => "-".to_owned(),
        };
        [
            cell(self.before),
            cell(self.after),
            format!("{sign}{}", time_text(change)),
            ratio,
        ]
    }
}

/// Orders ops by the largest change of `time` (either way) first, then by op and phase.
fn largest_change_first(
    a: &OpChange,
    b: &OpChange,
    time: fn(&OpChange) -> BeforeAfter,
) -> std::cmp::Ordering {
    time(b)
        .change_ns()
        .abs()
        .total_cmp(&time(a).change_ns().abs())
        .then_with(|| a.op.cmp(&b.op))
        .then_with(|| a.phase.cmp(&b.phase))
}

/// Two runs compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// The step-time verdict.
    pub verdict: Verdict,
    /// Median step time before and after, in seconds (when known).
    pub step_seconds: Option<(f64, f64)>,
    /// Measured steps with times before and after.
    pub steps: (usize, usize),
    /// Every op and phase of either run, largest change (either way) first.
    pub ops: Vec<OpChange>,
    /// Whether both runs have op tables.
    pub both_have_ops: bool,
    /// Memory peaks both runs have: name, before, after (bytes).
    pub memory: Vec<(String, u64, u64)>,
    /// What the runs were run with that differs: the backend, device and versions, and each
    /// setting of the configuration both runs recorded.
    pub differences: Vec<Difference>,
    settings: DiffSettings,
}

/// One thing two runs were run with that differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// What it is: `backend`, `device`, `burn`, `burn-profiled`, or a setting as
    /// `config <section>.<key>`.
    pub what: String,
    /// Its value before and after, as `run.json` has it.
    pub before: String,
    /// See `before`.
    pub after: String,
}

/// What `before` and `after` (`run.json` as read) were run with that differs. A setting only
/// one run recorded (a run of an older version) is left out: its absence says nothing of
/// what that run did.
fn differences(before: &Value, after: &Value) -> Vec<Difference> {
    let text = |value: &Value| match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let mut found = Vec::new();
    for (key, what) in [
        ("backend", "backend"),
        ("device", "device"),
        ("burn_version", "burn"),
        ("crate_version", "burn-profiled"),
    ] {
        if let (Some(b), Some(a)) = (before.get(key), after.get(key))
            && b != a
        {
            found.push(Difference {
                what: what.to_owned(),
                before: text(b),
                after: text(a),
            });
        }
    }
    let (Some(before), Some(after)) = (
        before.get("config").and_then(Value::as_object),
        after.get("config").and_then(Value::as_object),
    ) else {
        return found;
    };
    for (section, settings) in before {
        let (Some(settings), Some(other)) = (
            settings.as_object(),
            after.get(section).and_then(Value::as_object),
        ) else {
            continue;
        };
        for (key, b) in settings {
            if let Some(a) = other.get(key)
                && a != b
            {
                found.push(Difference {
                    what: format!("config {section}.{key}"),
                    before: text(b),
                    after: text(a),
                });
            }
        }
    }
    found
}

/// Compares `after` with `before`.
pub fn compare(before: &Run, after: &Run, settings: DiffSettings) -> Diff {
    let step_seconds =
        (!before.step_seconds.is_empty() && !after.step_seconds.is_empty()).then(|| {
            (
                noise::median(&mut before.step_seconds.clone()),
                noise::median(&mut after.step_seconds.clone()),
            )
        });
    let verdict = match noise::ratio_of_medians(&before.step_seconds, &after.step_seconds) {
        None => Verdict::Unknown,
        Some((ratio, low, high)) => {
            let (percent, low, high) = (
                (ratio - 1.0) * 100.0,
                (low - 1.0) * 100.0,
                (high - 1.0) * 100.0,
            );
            if low <= 0.0 && high >= 0.0 || percent.abs() < settings.noise_percent {
                Verdict::NoChange { percent, low, high }
            } else if percent < 0.0 {
                Verdict::Faster {
                    percent: -percent,
                    low: -high,
                    high: -low,
                }
            } else {
                Verdict::Slower { percent, low, high }
            }
        }
    };
    let per_step = |run: &Run, row: &OpRow| {
        let steps = run.measured_steps.max(1) as f64;
        (
            row.total_ns as f64 / steps,
            row.device_total_ns.map(|ns| ns as f64 / steps),
        )
    };
    let mut ops: Vec<OpChange> = Vec::new();
    for row in &before.ops {
        let (host, device) = per_step(before, row);
        ops.push(OpChange {
            op: row.op.clone(),
            phase: row.phase.clone(),
            before_ns: Some(host),
            after_ns: None,
            before_device_ns: device,
            after_device_ns: None,
        });
    }
    for row in &after.ops {
        let (host, device) = per_step(after, row);
        match ops
            .iter_mut()
            .find(|o| o.op == row.op && o.phase == row.phase)
        {
            Some(both) => {
                both.after_ns = Some(host);
                both.after_device_ns = device;
            }
            None => ops.push(OpChange {
                op: row.op.clone(),
                phase: row.phase.clone(),
                before_ns: None,
                after_ns: Some(host),
                before_device_ns: None,
                after_device_ns: device,
            }),
        }
    }
    ops.sort_by(|a, b| largest_change_first(a, b, OpChange::host));
    let memory = before
        .memory_peaks
        .iter()
        .filter_map(|(name, b)| {
            after
                .memory_peaks
                .iter()
                .find(|(other, _)| other == name)
                .map(|(_, a)| (name.clone(), *b, *a))
        })
        .collect();
    Diff {
        verdict,
        step_seconds,
        steps: (before.step_seconds.len(), after.step_seconds.len()),
        ops,
        both_have_ops: before.has_ops && after.has_ops,
        memory,
        differences: differences(&before.summary, &after.summary),
        settings,
    }
}

impl Diff {
    /// Whether the step got slower by more than `percent`, beyond noise.
    pub fn slower_than(&self, percent: f64) -> bool {
        matches!(self.verdict, Verdict::Slower { percent: p, .. } if p > percent)
    }

    /// When both runs recorded device time: the ops with device time in either, largest
    /// change of device time first.
    pub fn device_ops(&self) -> Vec<&OpChange> {
        let recorded = |o: &&OpChange| o.before_device_ns.is_some() || o.after_device_ns.is_some();
        let both_recorded = self.ops.iter().any(|o| o.before_device_ns.is_some())
            && self.ops.iter().any(|o| o.after_device_ns.is_some());
        if !both_recorded {
            return Vec::new();
        }
        let mut ops: Vec<&OpChange> = self.ops.iter().filter(recorded).collect();
        ops.sort_by(|a, b| largest_change_first(a, b, OpChange::device));
        ops
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Verdict::Faster { percent, low, high } => write!(
                f,
                "{percent:.1}% faster (95% interval {low:.1}% to {high:.1}%)"
            ),
            Verdict::Slower { percent, low, high } => write!(
                f,
                "{percent:.1}% slower (95% interval {low:.1}% to {high:.1}%)"
            ),
            Verdict::NoChange { percent, low, high } => write!(
                f,
                "no change beyond noise ({percent:+.1}%, 95% interval {low:+.1}% to {high:+.1}%)"
            ),
            Verdict::Unknown => f.write_str("unknown: a run has no step times"),
        }
    }
}

impl fmt::Display for Diff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step time: {}", self.verdict)?;
        if let Some((before, after)) = self.step_seconds {
            write!(
                f,
                ": {} -> {} per step (medians of {} and {} steps)",
                time_text(before * 1e9),
                time_text(after * 1e9),
                self.steps.0,
                self.steps.1
            )?;
        }
        if matches!(self.verdict, Verdict::NoChange { percent, low, high }
            if percent.abs() < self.settings.noise_percent && (low > 0.0 || high < 0.0))
        {
            write!(
                f,
                "\n  (under the {}% two runs of one program differ by: --noise sets it)",
                self.settings.noise_percent
            )?;
        }
        writeln!(f)?;
        if !self.differences.is_empty() {
            writeln!(f, "the runs differ in:")?;
            for difference in &self.differences {
                writeln!(
                    f,
                    "  {}: {} -> {}",
                    difference.what, difference.before, difference.after
                )?;
            }
        }
        if !self.both_have_ops {
            return writeln!(
                f,
                "ops: not compared, a run has no ops.json (run with [stats] enabled)"
            );
        }
        write_table(
            f,
            "ops, host time per step, largest change first:",
            &self.ops.iter().collect::<Vec<_>>(),
            self.settings.rows,
            OpChange::host,
        )?;
        let only = |before: bool| -> Vec<String> {
            self.ops
                .iter()
                .filter(|o| match before {
                    true => o.after_ns.is_none(),
                    false => o.before_ns.is_none(),
                })
                .map(|o| format!("{} ({})", o.op, o.phase))
                .collect()
        };
        for (label, names) in [("only before", only(true)), ("only after", only(false))] {
            if !names.is_empty() {
                writeln!(f, "{label}: {}", names.join(", "))?;
            }
        }
        let device = self.device_ops();
        if !device.is_empty() {
            let (b, a) = device
                .iter()
                .filter_map(|o| Some((o.before_device_ns?, o.after_device_ns?)))
                .fold((0.0, 0.0), |(b, a), (x, y)| (b + x, a + y));
            writeln!(
                f,
                "device time per step, ops in both runs: {} -> {}",
                time_text(b),
                time_text(a)
            )?;
            write_table(
                f,
                "ops, device time per step, largest change first:",
                &device,
                self.settings.rows,
                OpChange::device,
            )?;
        }
        for (name, before, after) in &self.memory {
            writeln!(
                f,
                "memory peak, {name}: {} -> {} ({:+.1}%)",
                bytes_text(*before),
                bytes_text(*after),
                100.0 * (*after as f64 / (*before).max(1) as f64 - 1.0)
            )?;
        }
        Ok(())
    }
}

/// A table of `ops` under `title`: the first `rows` of them, each with its op, phase and
/// `time` before and after, its change and ratio, then how many more there are.
fn write_table(
    f: &mut fmt::Formatter<'_>,
    title: &str,
    ops: &[&OpChange],
    rows: usize,
    time: fn(&OpChange) -> BeforeAfter,
) -> fmt::Result {
    let shown = &ops[..rows.min(ops.len())];
    let name_width = shown.iter().map(|o| o.op.len()).max().unwrap_or(0).max(2);
    let phase_width = shown
        .iter()
        .map(|o| o.phase.len())
        .max()
        .unwrap_or(0)
        .max(5);
    writeln!(
        f,
        "{title}\n{:>name_width$}  {:>phase_width$}  {:>12}  {:>12}  {:>12}  {:>7}",
        "op", "phase", "before", "after", "change", "ratio"
    )?;
    for op in shown {
        let [before, after, change, ratio] = time(op).texts();
        writeln!(
            f,
            "{:>name_width$}  {:>phase_width$}  {before:>12}  {after:>12}  {change:>12}  {ratio:>7}",
            op.op, op.phase
        )?;
    }
    if ops.len() > shown.len() {
        writeln!(f, "... {} more (--rows)", ops.len() - shown.len())?;
    }
    Ok(())
}
