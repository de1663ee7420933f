//! The two runs' op sequences aligned step by step: Myers' diff on the op names (the `similar`
//! crate), O((N+M)·D) for D ops inserted or removed, so linear where the runs agree.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};

use super::OpRecord;

/// How long the alignment may search for the fewest insertions and removals before it settles
/// for a coarser alignment: runs with nothing in common would otherwise take quadratic time.
const ALIGNMENT_BUDGET: Duration = Duration::from_secs(10);

/// Which records of two runs are the same op call, by index into each side's records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Alignment {
    /// `(reference, current)` index pairs of the same op, by step then in the reference's
    /// order.
    pub pairs: Vec<(usize, usize)>,
    /// Records of the reference no record of the current run was aligned with (removed ops).
    pub only_reference: Vec<usize>,
    /// Records of the current run no reference record was aligned with (inserted ops).
    pub only_current: Vec<usize>,
    /// Steps only the reference has.
    pub steps_only_reference: Vec<u64>,
    /// Steps only the current run has.
    pub steps_only_current: Vec<u64>,
}

/// Aligns `reference` and `current` within each step, by op name and input shapes, keeping
/// each side's order.
pub fn align(reference: &[OpRecord], current: &[OpRecord]) -> Alignment {
    let mut steps: BTreeMap<u64, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
    for (index, record) in reference.iter().enumerate() {
        steps.entry(record.step).or_default().0.push(index);
    }
    for (index, record) in current.iter().enumerate() {
        steps.entry(record.step).or_default().1.push(index);
    }
    let deadline = Instant::now() + ALIGNMENT_BUDGET;
    let mut alignment = Alignment::default();
    for (step, (ours, theirs)) in steps {
        match (ours.is_empty(), theirs.is_empty()) {
            (_, true) => alignment.steps_only_reference.push(step),
            (true, _) => alignment.steps_only_current.push(step),
            _ => {}
        }
        let (old, new) = (ops(&ours, reference), ops(&theirs, current));
        for op in capture_diff_slices_deadline(Algorithm::Myers, &old, &new, Some(deadline)) {
            let (old_range, new_range) = (op.old_range(), op.new_range());
            match op {
                DiffOp::Equal { .. } => alignment
                    .pairs
                    .extend(old_range.zip(new_range).map(|(a, b)| (ours[a], theirs[b]))),
                _ => {
                    alignment.only_reference.extend(old_range.map(|a| ours[a]));
                    alignment.only_current.extend(new_range.map(|b| theirs[b]));
                }
            }
        }
    }
    alignment
}

/// What makes two records the same op: its name and its inputs' shapes.
fn ops<'a>(indices: &[usize], records: &'a [OpRecord]) -> Vec<(&'a str, &'a [Vec<usize>])> {
    let ops = indices.iter().map(|&index| {
        let record = &records[index];
        (record.op.as_str(), record.input_shapes.as_slice())
    });
    ops.collect()
}
