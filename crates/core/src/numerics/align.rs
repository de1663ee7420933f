//! Which records of two runs are the same op call. Runs whose records link their inputs to
//! their producers are paired along their dataflow ([`dataflow`](super::dataflow)); runs
//! without links by their op sequences, as follows.
//!
//! The op sequences aligned step by step: Myers' diff (the `similar` crate),
//! O((N+M)·D) for D ops inserted or removed, so linear where the runs agree.
//!
//! Two records are the same op call when they have the same op name and input shapes, and
//! their inputs came from the same ops: first the ops whose producers also have the same names
//! are matched; between those anchors, the ops of the same name and input shapes. A pair whose
//! linked producers are already paired with other ops (two reshapes of other tensors) is
//! refused. Last, the records left unaligned are matched by their producers alone, in any
//! order: an op of the current run whose inputs came from ops paired with the reference's is
//! paired with the reference's op of the same name and shapes on those inputs (a backward
//! pass that runs two branches in the other order).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap as HashMap, FxHashSet, FxHasher};
use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};

use super::alignment::Alignment;
use super::{OpRecord, Tolerance};

/// How long the alignment may search for the fewest insertions and removals before it settles
/// for a coarser alignment: runs with nothing in common would otherwise take quadratic time.
const ALIGNMENT_BUDGET: Duration = Duration::from_secs(10);

/// Which records of `reference` and `current` made the same tensors, under the default
/// tolerance ([`align_with`]).
pub fn align(reference: &[OpRecord], current: &[OpRecord]) -> Alignment {
    align_with(reference, current, Tolerance::default())
}

/// Which records of `reference` and `current` made the same tensors: along their dataflow
/// where either run links its records' inputs to their producers (outputs within `tolerance`
/// are evidence of a pair), else by their op sequences within each step.
pub fn align_with(reference: &[OpRecord], current: &[OpRecord], tolerance: Tolerance) -> Alignment {
    let linked = |records: &[OpRecord]| {
        (records.iter()).any(|record| (record.producers.iter().flatten()).any(Option::is_some))
    };
    match linked(reference) || linked(current) {
        true => super::dataflow::by_dataflow(reference, current, tolerance),
        false => by_names(reference, current),
    }
}

/// Aligns `reference` and `current` within each step, keeping each side's order: by op name,
/// input shapes and the names of the ops that made the inputs, then by op name and input
/// shapes, never pairing two ops whose linked inputs came from ops paired elsewhere.
fn by_names(reference: &[OpRecord], current: &[OpRecord]) -> Alignment {
    let mut steps: BTreeMap<u64, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
    for (index, record) in reference.iter().enumerate() {
        steps.entry(record.step).or_default().0.push(index);
    }
    for (index, record) in current.iter().enumerate() {
        steps.entry(record.step).or_default().1.push(index);
    }
    let mut aligner = Aligner {
        sides: [Side::new(reference), Side::new(current)],
        deadline: Instant::now() + ALIGNMENT_BUDGET,
        alignment: Alignment::default(),
    };
    for (step, (ours, theirs)) in steps {
        match (ours.is_empty(), theirs.is_empty()) {
            (_, true) => aligner.alignment.steps_only_reference.push(step),
            (true, _) => aligner.alignment.steps_only_current.push(step),
            _ => {}
        }
        aligner.step(&ours, &theirs);
    }
    let mut alignment = aligner.alignment;
    alignment.pairs.sort_unstable();
    alignment.only_reference.sort_unstable();
    alignment.only_current.sort_unstable();
    alignment
}

/// One run's records, and what the alignment knows of them so far.
struct Side<'a> {
    records: &'a [OpRecord],
    /// Each record's index, by `seq`.
    index_of: HashMap<u64, usize>,
    /// The other side's record (its `seq`) each aligned record (by `seq`) is paired with.
    paired: HashMap<u64, u64>,
}

impl<'a> Side<'a> {
    fn new(records: &'a [OpRecord]) -> Self {
        let index_of = records.iter().enumerate();
        Side {
            records,
            index_of: index_of
                .map(|(index, record)| (record.seq, index))
                .collect(),
            paired: HashMap::with_capacity_and_hasher(records.len(), Default::default()),
        }
    }

    /// The nearest paired ancestors of record `index`: its producers that are paired and,
    /// through those that are not (up to [`ANCESTOR_DEPTH`] deep), theirs; as the current
    /// run's `seq`s (`mapped`: a reference record's ancestors, by their partners), sorted.
    fn paired_ancestors(&self, index: usize, mapped: bool) -> Vec<u64> {
        let mut found = Vec::new();
        let mut seen = Vec::new();
        let producers = |index: usize, depth: usize| {
            let seqs = self.records[index].producers.iter().flatten().flatten();
            seqs.map(move |&seq| (seq, depth))
        };
        let mut frontier: Vec<(u64, usize)> = producers(index, 1).collect();
        while let Some((seq, depth)) = frontier.pop() {
            if seen.contains(&seq) {
                continue;
            }
            seen.push(seq);
            if let Some(&partner) = self.paired.get(&seq) {
                found.push(if mapped { partner } else { seq });
            } else if depth < ANCESTOR_DEPTH
                && let Some(&producer) = self.index_of.get(&seq)
            {
                frontier.extend(producers(producer, depth + 1));
            }
        }
        found.sort_unstable();
        found
    }

    /// What makes two records the same op: its name, its inputs' shapes (an op without
    /// tensor inputs, as `float_ones`: its outputs' shapes) and, with `producers`, the names
    /// of the ops that made its inputs (none where no recorded op did); the last two hashed.
    fn keys(&self, indices: &[usize], producers: bool) -> Vec<Key<'a>> {
        let key = |&index: &usize| {
            let record = &self.records[index];
            let mut hasher = FxHasher::default();
            if record.input_shapes.is_empty() {
                for output in &record.outputs {
                    output.shape.hash(&mut hasher);
                }
            }
            if let Some(seqs) = record.producers.as_ref().filter(|_| producers) {
                for seq in seqs {
                    let producer = seq.and_then(|seq| self.index_of.get(&seq));
                    producer.map(|&at| &self.records[at].op).hash(&mut hasher);
                }
            }
            (
                record.op.as_str(),
                record.input_shapes.as_slice(),
                hasher.finish(),
            )
        };
        indices.iter().map(key).collect()
    }
}

/// How many producers deep [`Side::paired_ancestors`] looks through ops not paired.
const ANCESTOR_DEPTH: usize = 6;

/// How many times [`Aligner::by_producers`] goes over a step's unaligned records.
const BY_PRODUCERS_ROUNDS: usize = 4;

/// An op by its name, input shapes and nearest paired ancestors.
type AncestryKey<'a> = (&'a str, &'a [Vec<usize>], Vec<u64>);

/// An op by its name and input shapes, and a hash of the rest of what makes it the same op
/// (the shapes it made, when it has no tensor input; the names of its inputs' producers).
type Key<'a> = (&'a str, &'a [Vec<usize>], u64);

struct Aligner<'a> {
    sides: [Side<'a>; 2],
    deadline: Instant,
    alignment: Alignment,
}

impl Aligner<'_> {
    /// Aligns one step's records: by the keys with producers, then the runs between their
    /// matches by the keys without.
    fn step(&mut self, ours: &[usize], theirs: &[usize]) {
        let unaligned = (
            self.alignment.only_reference.len(),
            self.alignment.only_current.len(),
        );
        self.in_order(ours, theirs);
        self.by_producers(unaligned);
    }

    fn in_order(&mut self, ours: &[usize], theirs: &[usize]) {
        let [reference, current] = &self.sides;
        let (old, new) = (reference.keys(ours, true), current.keys(theirs, true));
        let diff = capture_diff_slices_deadline(Algorithm::Myers, &old, &new, Some(self.deadline));
        for op in diff {
            let (old_range, new_range) = (op.old_range(), op.new_range());
            let (a, b) = (&ours[old_range], &theirs[new_range]);
            match op {
                DiffOp::Equal { .. } => self.pair_all(a, b),
                _ => self.loosely(a, b),
            }
        }
    }

    /// Pairs the step's records left unaligned (from `from` in each side's list) whose inputs
    /// came from the same paired ops: same op name and input shapes, and the same nearest
    /// paired ancestors ([`Side::paired_ancestors`]). Repeated while it pairs more, as a pair
    /// made links the ops after it.
    fn by_producers(&mut self, from: (usize, usize)) {
        let mut ours = self.alignment.only_reference.split_off(from.0);
        let mut theirs = self.alignment.only_current.split_off(from.1);
        let (reference, current) = (self.sides[0].records, self.sides[1].records);
        for _round in 0..BY_PRODUCERS_ROUNDS {
            // The reference's unaligned records by op, shapes and ancestors, each key's in order.
            let mut waiting: HashMap<AncestryKey, Vec<usize>> = HashMap::default();
            for &a in ours.iter().rev() {
                let ancestors = self.sides[0].paired_ancestors(a, true);
                if !ancestors.is_empty() {
                    let record = &reference[a];
                    let key = (
                        record.op.as_str(),
                        record.input_shapes.as_slice(),
                        ancestors,
                    );
                    waiting.entry(key).or_default().push(a);
                }
            }
            let mut matched = FxHashSet::default();
            for &b in &theirs {
                let ancestors = self.sides[1].paired_ancestors(b, false);
                if ancestors.is_empty() {
                    continue;
                }
                let record = &current[b];
                let key = (
                    record.op.as_str(),
                    record.input_shapes.as_slice(),
                    ancestors,
                );
                let Some(candidates) = waiting.get_mut(&key) else {
                    continue;
                };
                if let Some(at) = candidates.iter().rposition(|&a| self.consistent(a, b)) {
                    let a = candidates.remove(at);
                    // Paired at once: its consumers, later in the step, can be matched on it.
                    self.pair(a, b);
                    matched.insert((0, a));
                    matched.insert((1, b));
                }
            }
            if matched.is_empty() {
                break;
            }
            ours.retain(|a| !matched.contains(&(0, *a)));
            theirs.retain(|b| !matched.contains(&(1, *b)));
        }
        self.alignment.only_reference.extend(ours);
        self.alignment.only_current.extend(theirs);
    }

    /// Aligns a run of records no anchor matched, by op name and input shapes.
    fn loosely(&mut self, ours: &[usize], theirs: &[usize]) {
        let [reference, current] = &self.sides;
        let (old, new) = (reference.keys(ours, false), current.keys(theirs, false));
        let diff = capture_diff_slices_deadline(Algorithm::Myers, &old, &new, Some(self.deadline));
        for op in diff {
            let (a, b) = (&ours[op.old_range()], &theirs[op.new_range()]);
            match op {
                DiffOp::Equal { .. } => self.pair_all(a, b),
                _ => {
                    self.alignment.only_reference.extend(a);
                    self.alignment.only_current.extend(b);
                }
            }
        }
    }

    /// Pairs `ours[i]` with `theirs[i]`, each pair whose links do not contradict the pairs
    /// made before it.
    fn pair_all(&mut self, ours: &[usize], theirs: &[usize]) {
        for (&a, &b) in ours.iter().zip(theirs) {
            if self.consistent(a, b) {
                self.pair(a, b);
            } else {
                self.alignment.only_reference.push(a);
                self.alignment.only_current.push(b);
            }
        }
    }

    fn pair(&mut self, a: usize, b: usize) {
        let [reference, current] = &mut self.sides;
        let (x, y) = (reference.records[a].seq, current.records[b].seq);
        reference.paired.insert(x, y);
        current.paired.insert(y, x);
        self.alignment.pairs.push((a, b));
    }

    /// Whether `a` (a reference record) and `b` may be the same op call: no input of theirs
    /// came from a producer paired with another op, and they have the same nearest paired
    /// ancestors (an op fusion renamed, as `powi_scalar` to `mul`, is not paired itself, but
    /// the ops before it are; three projections of one input differ in their other input).
    fn consistent(&self, a: usize, b: usize) -> bool {
        let [reference, current] = &self.sides;
        let (x, y) = (&reference.records[a], &current.records[b]);
        let (Some(ours), Some(theirs)) = (&x.producers, &y.producers) else {
            return true;
        };
        let producers_agree = ours.iter().zip(theirs).all(|pair| match pair {
            (Some(p), Some(q)) => {
                reference.paired.get(p).is_none_or(|paired| paired == q)
                    && current.paired.get(q).is_none_or(|paired| paired == p)
            }
            _ => true,
        });
        if !producers_agree {
            return false;
        }
        // Every input from a paired producer, pair for pair: the same ancestors.
        let all_paired = |producers: &[Option<u64>], side: &Side| {
            (producers.iter()).all(|seq| seq.is_some_and(|seq| side.paired.contains_key(&seq)))
        };
        if ours.len() == theirs.len() && all_paired(ours, reference) && all_paired(theirs, current)
        {
            return true;
        }
        let mapped = reference.paired_ancestors(a, true);
        let own = current.paired_ancestors(b, false);
        mapped == own
    }
}
