//! Time per module: each forward phase (the innermost user range of forward ops), or each
//! forward call site, with the backward and optimizer ops linked to its forward ops
//! ([`lineage`]), as `ops_by_module.json` (`ops_by_forward_call_site.json`) and a table.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

use super::report::{Snapshot, phase_name};
use crate::call_sites;
use crate::context::lineage::{self, ForwardOp, Pass};
use crate::context::phase;

/// The module of backward and optimizer ops linked to no forward op.
pub const NOT_LINKED: &str = "(not linked)";

/// What the time per module is keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleKey {
    /// The forward module: the path of the user ranges the forward ops ran in, outermost
    /// first (`forward/attention`).
    Phase,
    /// The forward call site: the innermost function of the user's code the forward op was
    /// called from (needs [`StatsConfig::call_sites`](super::StatsConfig::call_sites)).
    CallSite,
}

/// One module's time: its forward ops', and the backward and optimizer ops' that work for them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModuleRow {
    /// The forward module (the path of the forward ops' user ranges, `forward/attention`, `-`
    /// outside any), or the forward call site (`-` where the stack has no frame of the user's), or [`NOT_LINKED`].
    pub module: String,
    /// Time of its forward ops, in nanoseconds: device time where it was recorded, else host.
    pub forward_ns: u64,
    /// Time of the backward ops linked to them.
    pub backward_ns: u64,
    /// Time of the optimizer ops linked to them.
    pub optimizer_ns: u64,
    /// The three together.
    pub total_ns: u64,
    /// Share of all ops' time, in percent.
    pub total_percent: f64,
}

impl Snapshot {
    /// The time per module, most first: forward, backward and optimizer time of each forward
    /// phase (recorded with [`StatsConfig::forward_links`](super::StatsConfig::forward_links)).
    /// Device time where it was recorded, host time otherwise.
    pub fn modules(&self) -> Vec<ModuleRow> {
        self.modules_by(ModuleKey::Phase)
    }

    /// [`modules`](Self::modules) keyed by `key`: by forward call site, each line of the
    /// model's code with the backward and optimizer time of the ops it called.
    pub fn modules_by(&self, by: ModuleKey) -> Vec<ModuleRow> {
        let module_of = |forward: &ForwardOp| match by {
            ModuleKey::Phase => phase::path_name(forward.path),
            ModuleKey::CallSite => call_sites::call_site(forward.stack)
                .map_or_else(|| "-".to_owned(), |site| site.to_string()),
        };
        let device = self.has_device_time();
        let mut by_module: HashMap<String, [Duration; 3]> = HashMap::new();
        for (key, aggregate) in &self.rows {
            let time = if device {
                aggregate.device
            } else {
                aggregate.total
            };
            let phase = phase_name(key);
            let forward = lineage::forward_op(key.forward);
            let (module, pass) = match Pass::of_range(&phase) {
                // A forward op is its own forward op, with its range path and call site.
                None => match (forward, by) {
                    (Some(forward), _) => (module_of(&forward), 0),
                    (None, ModuleKey::Phase) => (phase, 0),
                    (None, ModuleKey::CallSite) => (
                        call_sites::call_site(key.stack)
                            .map_or_else(|| "-".to_owned(), |site| site.to_string()),
                        0,
                    ),
                },
                Some(pass) => {
                    let module = forward
                        .as_ref()
                        .map_or_else(|| NOT_LINKED.to_owned(), module_of);
                    (module, if pass == Pass::Backward { 1 } else { 2 })
                }
            };
            by_module.entry(module).or_default()[pass] += time;
        }
        let all: Duration = by_module.values().flatten().sum();
        let mut rows: Vec<ModuleRow> = by_module
            .into_iter()
            .map(|(module, [forward, backward, optimizer])| {
                let total = forward + backward + optimizer;
                ModuleRow {
                    module,
                    forward_ns: forward.as_nanos() as u64,
                    backward_ns: backward.as_nanos() as u64,
                    optimizer_ns: optimizer.as_nanos() as u64,
                    total_ns: total.as_nanos() as u64,
                    total_percent: match all.is_zero() {
                        true => 0.0,
                        false => 100.0 * total.as_secs_f64() / all.as_secs_f64(),
                    },
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then_with(|| a.module.cmp(&b.module))
        });
        rows
    }

    /// [`modules_by`](Self::modules_by) as `ops_by_module.json`'s text (by phase) or
    /// `ops_by_forward_call_site.json`'s (by call site).
    pub fn modules_json(&self, key: ModuleKey) -> String {
        let json = serde_json::json!({
            "format_version": super::FORMAT_VERSION,
            "time": if self.has_device_time() { "device" } else { "host" },
            "modules": self.modules_by(key),
        });
        serde_json::to_string_pretty(&json).unwrap_or_default()
    }

    /// [`modules_by`](Self::modules_by) as a table, with a title that names `json`.
    pub fn modules_table(&self, key: ModuleKey, json: &str) -> String {
        let rows = self.modules_by(key);
        let (what, column) = match key {
            ModuleKey::Phase => ("module", "Module"),
            ModuleKey::CallSite => ("forward call site", "Forward Call Site"),
        };
        let width = rows
            .iter()
            .map(|row| row.module.len())
            .max()
            .unwrap_or(0)
            .max(column.len());
        let time = if self.has_device_time() {
            "device"
        } else {
            "host"
        };
        let mut out = format!(
            "Time per {what} ({time} time; backward and optimizer ops by the forward op they \
             work for; {json}):\n"
        );
        let _ = writeln!(
            out,
            "{:<width$}  {:>12}  {:>12}  {:>12}  {:>12}  {:>8}",
            column, "Forward", "Backward", "Optimizer", "Total", "Total %"
        );
        for row in &rows {
            let _ = writeln!(
                out,
                "{:<width$}  {:>12}  {:>12}  {:>12}  {:>12}  {:>7.2}%",
                row.module,
                super::report::time_text(row.forward_ns),
                super::report::time_text(row.backward_ns),
                super::report::time_text(row.optimizer_ns),
                super::report::time_text(row.total_ns),
                row.total_percent,
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::context::lineage::{self, ForwardOp, Pass};
    use crate::context::op::Op;
    use crate::context::phase;
    use crate::sinks::{TEST_SERIAL, stats};

    static CONV: Op = Op::new("modules_conv2d\0");
    static CONV_BACKWARD: Op = Op::new("modules_conv2d_x_backward\0");
    static LINEAR: Op = Op::new("modules_linear\0");
    static SUB: Op = Op::new("modules_float_sub\0");
    static ONES: Op = Op::new("modules_float_ones\0");

    /// `op` run in the user ranges `ranges` (`forward/conv`: `conv` inside `forward`) for `us`
    /// µs, linked as the probe links it.
    fn run(op: &'static Op, ranges: &str, us: u64, inputs: &[u64], outputs: &[u64]) {
        for range in ranges.split('/') {
            phase::push(range.to_owned());
        }
        let phase = phase::current();
        let pass = lineage::pass_of_phase(phase).unwrap_or(Pass::Forward);
        let forward = ForwardOp {
            op,
            phase,
            path: phase::current_path(),
            stack: 0,
        };
        let link = lineage::link(forward, pass, inputs);
        lineage::made(link, pass, outputs);
        stats::record(
            op,
            Duration::from_micros(us),
            None,
            (0, 0, link.forward),
            None,
            None,
        );
        for _ in ranges.split('/') {
            phase::pop();
        }
    }

    #[test]
    fn the_time_per_module_is_pinned_as_a_table_and_as_json() {
        let _serial = TEST_SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let _lineage = lineage::tests_lock();
        stats::reset();
        stats::start(stats::StatsConfig {
            forward_links: true,
            ..stats::StatsConfig::default()
        });
        // A module is the path of its ranges: the model's `forward` holds `conv` and `head`.
        // conv: x (1), kernel (2) -> y (3); head: y, weight (4) -> logits (5).
        run(&CONV, "forward/conv", 100, &[1, 2], &[3]);
        run(&LINEAR, "forward/head", 40, &[3, 4], &[5]);
        run(&CONV_BACKWARD, "backward", 300, &[2, 6], &[7]);
        run(&SUB, "optimizer", 20, &[4, 8], &[9]);
        // Nothing in any module reads what it reads: the op before it was the forward's last.
        run(&ONES, "backward", 0, &[], &[10]);
        stats::stop();
        let snapshot = stats::snapshot();
        stats::reset();
        assert_eq!(
            snapshot.modules_table(super::ModuleKey::Phase, "ops_by_module.json"),
            "Time per module (host time; backward and optimizer ops by the forward op they work \
             for; ops_by_module.json):\n\
             Module             Forward      Backward     Optimizer         Total   Total %\n\
             forward/conv     100.000us     300.000us       0.000us     400.000us    86.96%\n\
             forward/head      40.000us       0.000us      20.000us      60.000us    13.04%\n"
        );
        let json: serde_json::Value =
            serde_json::from_str(&snapshot.modules_json(super::ModuleKey::Phase))
                .expect("ops_by_module.json is JSON");
        assert_eq!(
            json,
            serde_json::json!({
                "format_version": super::super::FORMAT_VERSION,
                "time": "host",
                "modules": [
                    {"module": "forward/conv", "forward_ns": 100_000, "backward_ns": 300_000,
                     "optimizer_ns": 0, "total_ns": 400_000, "total_percent": 400.0 / 460.0 * 100.0},
                    {"module": "forward/head", "forward_ns": 40_000, "backward_ns": 0,
                     "optimizer_ns": 20_000, "total_ns": 60_000, "total_percent": 60.0 / 460.0 * 100.0},
                ],
            })
        );
    }
}
