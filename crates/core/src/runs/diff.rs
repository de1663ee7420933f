//! Two runs compared: the step time with a verdict that accounts for noise, and per op and
//! phase the time per step before and after, with the ops only one run has (what a fusion or a
//! rewrite removed or added), device time and memory peaks when both have them, and what the
//! runs were run with that differs (backend, versions, settings).

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde_json::Value;

use super::{OpRow, Run, noise, time_text};
use crate::units::bytes_text;

/// How far apart two processes of one program can be with nothing changed, in percent of the
/// step time: the default floor for a verdict from one run a side (the guide's
/// report-and-diff page has the measurements behind it).
pub const ONE_RUN_NOISE_PERCENT: f64 = 65.0;

/// How [`compare`] judges and what it shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffSettings {
    /// With one run on a side, a step time slower by less than this, in percent, or faster by
    /// less than the same factor (25: slower by under 1.25x, faster by under 1/1.25), is "no
    /// change beyond noise" even when the steps' interval excludes zero: one run cannot show the
    /// drift between processes (machine load, clocks, memory placement, caches), and two
    /// processes of one program differ by up to this much ([`ONE_RUN_NOISE_PERCENT`] measured).
    /// With several runs a side, their spread decides instead.
    pub noise_percent: f64,
    /// Op rows shown, largest change first.
    pub rows: usize,
}

impl Default for DiffSettings {
    fn default() -> Self {
        DiffSettings {
            noise_percent: ONE_RUN_NOISE_PERCENT,
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
    /// With several runs a side: whether its host time per step changed beyond the spread
    /// between runs (`None` with one run a side, or for an op of one side only).
    pub beyond_noise: Option<bool>,
    /// Its share of the roofline (0 to 1), the mean over the side's runs that placed it
    /// (`ops.json` format 2 with peaks); `None` where no run of the side did.
    pub before_share: Option<f64>,
    /// See `before_share`.
    pub after_share: Option<f64>,
}

impl OpChange {
    /// The host time per step before and after.
    pub fn host(&self) -> BeforeAfter {
        BeforeAfter {
            before: self.before_ns,
            after: self.after_ns,
        }
    }

    /// `yes` or `no`: whether its host time changed beyond the noise between runs, where that
    /// was judged ([`beyond_noise`](OpChange::beyond_noise)).
    pub fn beyond_noise_text(&self) -> Option<&'static str> {
        self.beyond_noise
            .map(|beyond| if beyond { "yes" } else { "no" })
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
    /// Step time before and after, in seconds (when known): the median step of a run (of its
    /// runs' steps together, where one side has one run), and with several runs a side the
    /// geometric mean of their medians.
    pub step_seconds: Option<(f64, f64)>,
    /// Measured steps with times before and after (all runs of a side).
    pub steps: (usize, usize),
    /// Runs before and after.
    pub runs: (usize, usize),
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

/// Compares `after` with `before`: one run a side.
pub fn compare(before: &Run, after: &Run, settings: DiffSettings) -> Diff {
    compare_runs(
        std::slice::from_ref(before),
        std::slice::from_ref(after),
        settings,
    )
}

/// Compares the runs `after` with the runs `before` (each side at least one run, of one
/// program and configuration): the step time from the spread between runs with several a
/// side (Welch's interval on their medians), from the steps and a floor with one, each op's time per step as the mean over its side's runs, memory peaks as the
/// highest of a side, and what the first runs of the sides were run with that differs.
///
/// # Panics
/// If a side has no run.
pub fn compare_runs(before: &[Run], after: &[Run], settings: DiffSettings) -> Diff {
    let (Some(first_before), Some(first_after)) = (before.first(), after.first()) else {
        panic!("compare_runs needs at least one run a side");
    };
    let one_run_a_side = before.len() == 1 || after.len() == 1;
    // One run a side: the steps (of all its runs, where the other side has several), and the
    // runs' medians with several a side.
    let pooled = |runs: &[Run]| -> Vec<f64> {
        runs.iter()
            .flat_map(|run| run.step_seconds.iter().copied())
            .collect()
    };
    let medians = |runs: &[Run]| -> Vec<f64> {
        runs.iter()
            .filter(|run| !run.step_seconds.is_empty())
            .map(|run| noise::median(&mut run.step_seconds.clone()))
            .collect()
    };
    let (ratio, step_seconds) = if one_run_a_side {
        let (b, a) = (pooled(before), pooled(after));
        let ratio = noise::ratio_of_medians(&b, &a);
        let level = |mut steps: Vec<f64>| noise::median(&mut steps);
        (ratio, ratio.map(|_| (level(b), level(a))))
    } else {
        let (b, a) = (medians(before), medians(after));
        let ratio = noise::ratio_of_run_levels(&b, &a);
        let levels = (!b.is_empty() && !a.is_empty())
            .then(|| (noise::geometric_mean(&b), noise::geometric_mean(&a)));
        (ratio, levels.filter(|_| ratio.is_some()))
    };
    let verdict = match ratio {
        None => Verdict::Unknown,
        Some((ratio, low, high)) => {
            let (percent, low, high) = (
                (ratio - 1.0) * 100.0,
                (low - 1.0) * 100.0,
                (high - 1.0) * 100.0,
            );
            // The floor holds both ways as a factor: 25% slower, or 1/1.25 (20% faster).
            let floor = 1.0 + settings.noise_percent / 100.0;
            let under_floor = one_run_a_side && ratio < floor && ratio > 1.0 / floor;
            if low <= 0.0 && high >= 0.0 || under_floor {
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
    let ops = op_changes(before, after);
    let memory = first_before
        .memory_peaks
        .iter()
        .filter_map(|(name, _)| Some((name.clone(), peak(before, name)?, peak(after, name)?)))
        .collect();
    let steps = |runs: &[Run]| runs.iter().map(|run| run.step_seconds.len()).sum();
    Diff {
        verdict,
        step_seconds,
        steps: (steps(before), steps(after)),
        runs: (before.len(), after.len()),
        ops,
        both_have_ops: before.iter().chain(after).all(|run| run.has_ops),
        memory,
        differences: differences(&first_before.summary, &first_after.summary),
        settings,
    }
}

/// The highest peak of memory `name` over `runs`, when every run has it.
fn peak(runs: &[Run], name: &str) -> Option<u64> {
    runs.iter()
        .map(|run| {
            run.memory_peaks
                .iter()
                .find(|(other, _)| other == name)
                .map(|(_, bytes)| *bytes)
        })
        .try_fold(0, |highest, bytes| Some(highest.max(bytes?)))
}

/// Every op and phase of either side: its host and device time per step in each run of a
/// side (0 in a run without it), their means, and with several runs a side whether the host
/// time changed beyond the spread between runs; largest change first.
/// A side's runs, each with its rows by op and phase.
struct Indexed<'a> {
    runs: &'a [Run],
    rows: Vec<HashMap<(&'a str, &'a str), usize>>,
}

impl<'a> Indexed<'a> {
    fn new(runs: &'a [Run]) -> Self {
        let rows = runs
            .iter()
            .map(|run| {
                let mut rows = HashMap::with_capacity(run.ops.len());
                for (at, row) in run.ops.iter().enumerate() {
                    rows.entry((row.op.as_str(), row.phase.as_str()))
                        .or_insert(at);
                }
                rows
            })
            .collect();
        Indexed { runs, rows }
    }

    /// Each run's row of `key`, `None` where the run lacks it.
    fn rows_of(&self, key: (&str, &str)) -> impl Iterator<Item = (&'a Run, Option<&'a OpRow>)> {
        self.runs
            .iter()
            .zip(&self.rows)
            .map(move |(run, rows)| (run, rows.get(&key).map(|&at| &run.ops[at])))
    }
}

fn op_changes(before: &[Run], after: &[Run]) -> Vec<OpChange> {
    // Each run's rows by op and phase, and every key in the order first met: one pass over
    // the rows, a lookup per key and run (a search of the rows per key was quadratic: 100k
    // rows a side took minutes).
    let (before_rows, after_rows) = (Indexed::new(before), Indexed::new(after));
    let mut seen: HashSet<(&str, &str)> = HashSet::new();
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for row in before.iter().chain(after).flat_map(|run| &run.ops) {
        let key = (row.op.as_str(), row.phase.as_str());
        if seen.insert(key) {
            keys.push(key);
        }
    }
    // Per run: the op's host and device time per step, `None` when the run lacks it.
    let per_run = |side: &Indexed, key: (&str, &str)| -> Vec<Option<(f64, Option<f64>)>> {
        side.rows_of(key)
            .map(|(run, row)| {
                let steps = run.measured_steps.max(1) as f64;
                row.map(|row| {
                    (
                        row.total_ns as f64 / steps,
                        row.device_total_ns.map(|ns| ns as f64 / steps),
                    )
                })
            })
            .collect()
    };
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len() as f64;
    let share = |side: &Indexed, key: (&str, &str)| -> Option<f64> {
        let shares: Vec<f64> = side
            .rows_of(key)
            .filter_map(|(_, row)| row?.roofline.as_ref()?.share)
            .collect();
        (!shares.is_empty()).then(|| mean(&shares))
    };
    let mut ops: Vec<OpChange> = keys
        .into_iter()
        .map(|key| {
            let (b, a) = (per_run(&before_rows, key), per_run(&after_rows, key));
            let side = |runs: &[Option<(f64, Option<f64>)>]| {
                if runs.iter().all(Option::is_none) {
                    return (None, None, Vec::new());
                }
                let host: Vec<f64> = runs.iter().map(|r| r.map_or(0.0, |(h, _)| h)).collect();
                let device: Option<Vec<f64>> =
                    runs.iter().map(|r| r.and_then(|(_, d)| d)).collect();
                (Some(mean(&host)), device.map(|d| mean(&d)), host)
            };
            let (before_ns, before_device_ns, b_host) = side(&b);
            let (after_ns, after_device_ns, a_host) = side(&a);
            let beyond_noise = match (before_ns, after_ns) {
                (Some(_), Some(_)) => noise::welch_difference(&b_host, &a_host)
                    .map(|(_, low, high)| low > 0.0 || high < 0.0),
                _ => None,
            };
            OpChange {
                op: key.0.to_owned(),
                phase: key.1.to_owned(),
                before_ns,
                after_ns,
                before_device_ns,
                after_device_ns,
                beyond_noise,
                before_share: share(&before_rows, key),
                after_share: share(&after_rows, key),
            }
        })
        .collect();
    ops.sort_by(|a, b| largest_change_first(a, b, OpChange::host));
    ops
}

impl Diff {
    /// Whether a side has one run: then the step time's verdict needs a change beyond
    /// [`DiffSettings::noise_percent`], and no op's change is judged.
    pub fn one_run_a_side(&self) -> bool {
        self.runs.0 == 1 || self.runs.1 == 1
    }

    /// What the step times of [`step_seconds`](Diff::step_seconds) are: `medians of 20 and
    /// 60 steps` (one run a side: of all a side's steps), or `geometric means of the medians of
    /// 3 and 3 runs, 60 and 60 steps`.
    pub fn levels_text(&self) -> String {
        let (steps_before, steps_after) = self.steps;
        match self.one_run_a_side() {
            true => format!("medians of {steps_before} and {steps_after} steps"),
            false => format!(
                "geometric means of the medians of {} and {} runs, {steps_before} and \
                 {steps_after} steps",
                self.runs.0, self.runs.1
            ),
        }
    }

    /// The settings it was compared with.
    pub fn settings(&self) -> DiffSettings {
        self.settings
    }

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
            let (b, a) = (time_text(before * 1e9), time_text(after * 1e9));
            write!(f, ": {b} -> {a} per step ({})", self.levels_text())?;
        }
        writeln!(f)?;
        if self.one_run_a_side() {
            if matches!(self.verdict, Verdict::NoChange { low, high, .. } if low > 0.0 || high < 0.0)
            {
                writeln!(
                    f,
                    "  (under the {}% two processes of one program can differ by: --noise sets it)",
                    self.settings.noise_percent
                )?;
            }
            writeln!(
                f,
                "  one run a side: the drift between processes goes unseen, so only a change \
                 beyond {}% is claimed. For a verdict, take 3 or more runs a side in \
                 alternating order (before, after, before, ...) and give them all: \
                 burn-profiled diff B1 B2 B3 -- A1 A2 A3",
                self.settings.noise_percent
            )?;
        } else {
            writeln!(
                f,
                "  {} and {} runs: the interval holds the spread between runs (Welch's, on \
                 their medians)",
                self.runs.0, self.runs.1
            )?;
        }
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
            !self.one_run_a_side(),
        )?;
        if self.one_run_a_side() {
            writeln!(
                f,
                "(one run a side: the changes are shown, none is claimed beyond noise)"
            )?;
        }
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
                false,
            )?;
        }
        let placed: Vec<(&OpChange, f64, f64)> = self
            .ops
            .iter()
            .take(self.settings.rows)
            .filter_map(|o| Some((o, o.before_share?, o.after_share?)))
            .collect();
        if !placed.is_empty() {
            writeln!(f, "share of the roofline, ops above placed in both runs:")?;
            for (op, before, after) in placed {
                writeln!(
                    f,
                    "  {} ({}): {:.1}% -> {:.1}%",
                    op.op,
                    op.phase,
                    100.0 * before,
                    100.0 * after
                )?;
            }
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
/// `time` before and after, its change and ratio (and, `judged`, whether it is beyond the
/// noise between runs), then how many more there are.
fn write_table(
    f: &mut fmt::Formatter<'_>,
    title: &str,
    ops: &[&OpChange],
    rows: usize,
    time: fn(&OpChange) -> BeforeAfter,
    judged: bool,
) -> fmt::Result {
    let shown = &ops[..rows.min(ops.len())];
    let name_width = shown.iter().map(|o| o.op.len()).max().unwrap_or(0).max(2);
    let phase_width = shown
        .iter()
        .map(|o| o.phase.len())
        .max()
        .unwrap_or(0)
        .max(5);
    write!(
        f,
        "{title}\n{:>name_width$}  {:>phase_width$}  {:>12}  {:>12}  {:>12}  {:>7}",
        "op", "phase", "before", "after", "change", "ratio"
    )?;
    writeln!(f, "{}", if judged { "  beyond noise" } else { "" })?;
    for op in shown {
        let [before, after, change, ratio] = time(op).texts();
        write!(
            f,
            "{:>name_width$}  {:>phase_width$}  {before:>12}  {after:>12}  {change:>12}  {ratio:>7}",
            op.op, op.phase
        )?;
        match (judged, op.beyond_noise_text()) {
            (true, Some(beyond)) => writeln!(f, "  {beyond}")?,
            _ => writeln!(f)?,
        }
    }
    if ops.len() > shown.len() {
        writeln!(f, "... {} more (--rows)", ops.len() - shown.len())?;
    }
    Ok(())
}
