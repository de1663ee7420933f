//! A [`Comparison`] as `burn-profiled numerics` prints it.

use std::fmt::Write;

use super::{Agreement, Comparison, OpRecord, StatDiff};

/// The comparison for people: the verdict, the culprit with the statistics that differ
/// (before -> after) and the propagators, then the first `rows` divergences as a table.
pub fn render(
    comparison: &Comparison,
    reference: &[OpRecord],
    current: &[OpRecord],
    rows: usize,
) -> String {
    let mut text = String::new();
    let [identical, within, diverged] = comparison.counts();
    let steps = {
        let mut steps: Vec<u64> = comparison
            .pairs
            .iter()
            .map(|pair| reference[pair.reference].step)
            .collect();
        steps.dedup();
        match steps.len() {
            1 => "1 step".to_owned(),
            n => format!("{n} steps"),
        }
    };
    let tolerance = comparison.tolerance;
    let aligned = comparison.pairs.len();
    let _ = match comparison.culprit {
        None if within == 0 => writeln!(
            text,
            "identical: {identical} ops aligned in {steps}, every statistic bit for bit"
        ),
        None => writeln!(
            text,
            "within tolerance (rtol {}, atol {}): {aligned} ops aligned in {steps}, {identical} bit for bit, {within} within tolerance",
            tolerance.rtol, tolerance.atol
        ),
        Some(_) => writeln!(
            text,
            "diverged (rtol {}, atol {}): {diverged} of {aligned} aligned ops in {steps}",
            tolerance.rtol, tolerance.atol
        ),
    };
    let not_observed = comparison.not_observed();
    if not_observed > 0 {
        let _ = writeln!(
            text,
            "not observed: {not_observed} aligned ops ran inside a fused block in one run (their outputs stayed in its registers)"
        );
    }
    let (only_before, only_after) = (
        comparison.alignment.only_reference.len(),
        comparison.alignment.only_current.len(),
    );
    if only_before + only_after > 0 {
        let _ = writeln!(
            text,
            "not aligned: {only_before} ops only before, {only_after} only after"
        );
    }
    if let Some(culprit) = comparison.culprit {
        let pair = &comparison.pairs[culprit.pair];
        let record = &reference[pair.reference];
        let _ = writeln!(
            text,
            "{}: step {}, {} (seq {} before, {} after), phase {}, at {}",
            if record.is_value() {
                "first diverged value"
            } else {
                "culprit"
            },
            record.step,
            record.op,
            record.seq,
            current[pair.current].seq,
            record.phase,
            record.call_site.as_deref().unwrap_or("-"),
        );
        if record.is_value() {
            let _ = writeln!(
                text,
                "  (a value the program handed over, not an op: the ops that made it were not \
                 aligned, or not recorded (Burn 0.22 records values only); dump tensors nearer \
                 the step's start, or compare two Burn 0.21 runs, to find the op)"
            );
        } else if !culprit.inputs_agreed {
            let _ = writeln!(
                text,
                "  (no diverged op's inputs all agreed: a producer only one run has; this is the first diverged op)"
            );
        }
        for StatDiff {
            output,
            stat,
            before,
            after,
        } in &pair.differences
        {
            let _ = writeln!(text, "  output {output} {stat}: {before} -> {after}");
        }
        let _ = writeln!(
            text,
            "propagators: {} ops after it carried the difference on",
            comparison.propagators
        );
        if !record.is_value() {
            let _ = writeln!(
                text,
                "to keep its inputs and re-run it on NdArray, run the current program again \
                 with `[numerics] capture = [{}, {}]`",
                record.step, current[pair.current].seq
            );
        }
        let _ = writeln!(text, "\nfirst divergences:");
        let first = comparison
            .pairs
            .iter()
            .filter(|pair| pair.agreement == Agreement::Diverged);
        let mut table = vec![[
            "step".to_owned(),
            "seq".to_owned(),
            "op".to_owned(),
            "phase".to_owned(),
            "elements".to_owned(),
            "differs in".to_owned(),
            "call site".to_owned(),
        ]];
        for pair in first.take(rows) {
            let record = &reference[pair.reference];
            let mut stats: Vec<&str> = pair.differences.iter().map(|diff| diff.stat).collect();
            stats.dedup();
            table.push([
                record.step.to_string(),
                record.seq.to_string(),
                record.op.clone(),
                record.phase.clone(),
                record.elements().to_string(),
                stats.join(", "),
                record.call_site.clone().unwrap_or_else(|| "-".to_owned()),
            ]);
        }
        // Each column as wide as its widest cell; numbers to the right, the call site last
        // and unpadded.
        let width = |column: usize| table.iter().map(|row| row[column].len()).max();
        let widths: Vec<usize> = (0..7).map(|column| width(column).unwrap_or(0)).collect();
        for [step, seq, op, phase, elements, differs, call_site] in &table {
            let _ = writeln!(
                text,
                "{step:>w0$}  {seq:>w1$}  {op:<w2$}  {phase:<w3$}  {elements:>w4$}  {differs:<w5$}  {call_site}",
                w0 = widths[0],
                w1 = widths[1],
                w2 = widths[2],
                w3 = widths[3],
                w4 = widths[4],
                w5 = widths[5],
            );
        }
    }
    text
}
