//! A [`Comparison`] as `burn-profiled numerics` prints it.

use std::fmt::Write;

use super::{Agreement, Comparison, OpRecord, StatDiff, StatValue};

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
    let [covered_before, covered_after] = comparison.alignment.covered();
    let in_regions = covered_before + covered_after > 2 * aligned;
    if in_regions {
        let percent = |covered: usize, total: usize| match total {
            0 => 100.0,
            total => 100.0 * covered as f64 / total as f64,
        };
        let _ = writeln!(
            text,
            "paired by dataflow: {:.1}% of {} records before, {:.1}% of {} after (paired, or \
             inside a paired region: ops between paired tensors that compute them otherwise)",
            percent(covered_before, reference.len()),
            reference.len(),
            percent(covered_after, current.len()),
            current.len(),
        );
    }
    let (repeats_before, repeats_after) = (
        comparison.alignment.repeats_reference.len(),
        comparison.alignment.repeats_current.len(),
    );
    if repeats_before + repeats_after > 0 {
        let _ = writeln!(
            text,
            "repeats: {repeats_before} records before, {repeats_after} after repeat an op on the \
             same inputs and were read by no op (autotune's trial runs): not compared"
        );
    }
    if only_before + only_after > 0 {
        let _ = writeln!(
            text,
            "not aligned: {only_before} ops only before, {only_after} only after"
        );
    }
    if let Some(culprit) = comparison.culprit {
        let pair = &comparison.pairs[culprit.pair];
        let record = &reference[pair.reference];
        let after = &current[pair.current];
        let region = comparison.alignment.regions.get(culprit.pair);
        let ops = |records: &[OpRecord], inside: Option<&Vec<usize>>, own: &OpRecord| {
            let mut names: Vec<&str> = inside
                .into_iter()
                .flatten()
                .map(|&at| records[at].op.as_str())
                .collect();
            names.push(own.op.as_str());
            names.join(", ")
        };
        let (ops_before, ops_after) = (
            ops(reference, region.map(|region| &region.reference), record),
            ops(current, region.map(|region| &region.current), after),
        );
        let named = match ops_before == ops_after {
            true => ops_before,
            false => format!("{ops_before} before, {ops_after} after"),
        };
        let _ = writeln!(
            text,
            "{}: step {}, {} (seq {} before, {} after), phase {}, at {}",
            if record.is_value() {
                "first diverged value"
            } else {
                "culprit"
            },
            record.step,
            named,
            record.seq,
            after.seq,
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
        } else if culprit.moved_within_tolerance {
            let _ = writeln!(
                text,
                "  (its outputs are within the tolerance but moved beyond their own magnitude's, \
                 while its inputs agreed; the ops after it scaled the difference up until it \
                 diverged)"
            );
        } else if !culprit.inputs_agreed {
            let nearest: Vec<String> = comparison
                .agreeing_ancestors
                .iter()
                .map(|&at| {
                    let pair = &comparison.pairs[at];
                    let record = &reference[pair.reference];
                    format!(
                        "{} (seq {} before, {} after)",
                        record.op, record.seq, current[pair.current].seq
                    )
                })
                .collect();
            let _ = writeln!(
                text,
                "  (its inputs could not be shown to agree: no diverged op's inputs all agreed \
                 (an input moved within the tolerance, or a producer only one run has); this is \
                 the first diverged op; the nearest inputs that agreed: {})",
                match nearest.is_empty() {
                    true => "none".to_owned(),
                    false => nearest.join(", "),
                }
            );
        }
        for input in &comparison.culprit_inputs {
            let side = |records: &[OpRecord], at: Option<usize>| match at {
                Some(at) => format!("{} seq {}", records[at].op, records[at].seq),
                None => "-".to_owned(),
            };
            let agreement = match input.agreement {
                None => "no recorded op made it",
                Some(Agreement::Identical) => "identical",
                Some(Agreement::WithinTolerance) => "within tolerance",
                Some(Agreement::Diverged) => "diverged",
                Some(Agreement::NotObserved) => "not observed",
            };
            if input.reference.is_none() && input.current.is_none() {
                continue;
            }
            let _ = writeln!(
                text,
                "  input: {} before, {} after: {agreement}",
                side(reference, input.reference),
                side(current, input.current),
            );
        }
        for StatDiff {
            output,
            stat,
            before,
            after,
        } in &pair.differences
        {
            let _ = match (before, after) {
                (StatValue::Number(x), StatValue::Number(y)) => {
                    let abs = (y - x).abs();
                    writeln!(
                        text,
                        "  output {output} {stat}: {before} -> {after} (abs {abs:.3e}, rel {:.3e})",
                        abs / x.abs()
                    )
                }
                _ => writeln!(text, "  output {output} {stat}: {before} -> {after}"),
            };
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
