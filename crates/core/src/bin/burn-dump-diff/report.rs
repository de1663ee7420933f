//! What the tool prints: the findings, the per-tensor summary table and the verdict.

use burn_profiled_core::dump::compare::python_repr;
use burn_profiled_core::dump::json::PyJson;

/// What the tool prints, and whether the directories agree.
pub(crate) struct Report {
    pub(crate) text: String,
    pub(crate) consistent: bool,
}

/// One row of the per-tensor summary.
pub(crate) struct TensorSummary {
    pub(crate) dump: usize,
    pub(crate) kind: &'static str,
    pub(crate) path: String,
    pub(crate) max_abs_error: f64,
    pub(crate) max_rel_error: f64,
    pub(crate) over_eps: usize,
    pub(crate) elements: usize,
    pub(crate) worst_index: Vec<usize>,
}

/// What the whole comparison found.
#[derive(Default)]
pub(crate) struct Findings {
    /// Report paragraphs, in order.
    pub(crate) blocks: Vec<String>,
    pub(crate) summaries: Vec<TensorSummary>,
    pub(crate) dumps_compared: usize,
    pub(crate) files_compared: usize,
    pub(crate) files_failed: usize,
    pub(crate) mismatches: usize,
    /// Missing or extra dumps and files that the allow flags do not excuse.
    missing: usize,
}

impl Findings {
    /// Records a dump or file present on one side only.
    pub(crate) fn absent(&mut self, line: String, allowed: bool, flag: &str) {
        if allowed {
            self.blocks.push(format!("{line} (allowed by {flag})"));
        } else {
            self.missing += 1;
            self.blocks.push(line);
        }
    }

    pub(crate) fn into_report(mut self, eps: f64) -> Report {
        if !self.summaries.is_empty() {
            self.blocks.push(summary_table(&self.summaries, eps));
        }
        let consistent = self.mismatches == 0 && self.missing == 0;
        let eps = python_repr(&PyJson::Float(eps));
        let verdict = if consistent {
            format!(
                "Verdict: consistent ({} in {} compared, eps {eps}).",
                count(self.files_compared, "file", "files"),
                count(self.dumps_compared, "dump", "dumps"),
            )
        } else {
            format!(
                "Verdict: INCONSISTENT ({} in {} of {} compared, {} missing or extra, eps {eps}).",
                count(self.mismatches, "mismatch", "mismatches"),
                self.files_failed,
                count(self.files_compared, "file", "files"),
                self.missing,
            )
        };
        self.blocks.push(verdict);
        Report {
            text: self.blocks.join("\n\n") + "\n",
            consistent,
        }
    }
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The per-tensor summary, as an aligned table.
fn summary_table(summaries: &[TensorSummary], eps: f64) -> String {
    let float = |value: f64| python_repr(&PyJson::Float(value));
    let header = [
        "dump",
        "data",
        "tensor",
        "max abs error",
        "max rel error",
        "over eps / total",
        "worst index",
    ]
    .map(str::to_owned);
    let mut rows = vec![header.to_vec()];
    for s in summaries {
        let worst = s
            .worst_index
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>();
        rows.push(vec![
            s.dump.to_string(),
            s.kind.to_owned(),
            s.path.clone(),
            float(s.max_abs_error),
            float(s.max_rel_error),
            format!("{} / {}", s.over_eps, s.elements),
            format!("[{}]", worst.join(",")),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|column| {
            rows.iter()
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut table = format!(
        "Tensors with mismatches (|current - reference| > {}):",
        float(eps)
    );
    for row in &rows {
        table.push('\n');
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        table.push_str(cells.join("  ").trim_end());
    }
    table
}
