//! Two runs' records paired along their dataflow, not by their names: from the tensors both
//! runs start from (the data, the parameters, the constants), a record of the current run pairs
//! with the reference's record that reads the same paired tensors and makes a tensor of the
//! same dtype and shape in the same step, whatever either op is called. The records between
//! paired tensors that found no partner (a `linear` on one side against `matmul, reshape,
//! add` on the other; an op only one run has) are the pair's **region**: compared as one,
//! through the region's output.
//!
//! The current run is walked in its order (a topological order: an op's producers come before
//! it). Each record's **frontier** is the set of its nearest paired ancestors, found through
//! the producers no partner was found for yet, as the reference's records; its candidates are
//! the reference's records not paired yet that descend from the same frontier (found forward
//! through the reference's consumers, so that agreeing runs pair in near-linear time). Among
//! them, by evidence: the same outputs bit for bit and the same name, the same outputs, outputs
//! within the tolerance and the same name, within the tolerance, the same name; the earliest
//! first. A candidate of another name whose outputs differ is taken only when no later record
//! of the current run on the same frontier is a better partner for it (an op the current run
//! inserted waits for the op after it, of the reference's name).
//!
//! Records that repeat another record of their step on the same inputs and whose outputs no
//! op read (autotune's trial runs of a kernel) are left out of the pairing: they are
//! [`repeats`](super::Alignment::repeats_reference), not ops only one run has.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::alignment::{Alignment, Region};
use super::{Agreement, OpRecord, Tolerance, compare_outputs};

/// A frontier token for an input no recorded op made (a parameter made before the session,
/// an input the writer did not link).
const LEAF: usize = usize::MAX;
/// A frontier token for ancestors past [`FRONTIER_BUDGET`].
const DEEP: usize = usize::MAX - 1;
/// How many unpaired ancestors a frontier is looked for through.
const FRONTIER_BUDGET: usize = 256;
/// How many unpaired descendants of a frontier are looked at for candidates.
const WALK_BUDGET: usize = 512;
/// How many unpaired records of a step without paired ancestors are looked at for candidates.
const ROOT_WINDOW: usize = 256;
/// How many candidates a record's outputs are compared with.
const CANDIDATES: usize = 64;

/// One run's records and what the pairing knows of them.
pub(super) struct Run<'a> {
    pub(super) records: &'a [OpRecord],
    /// Each record's producers, as indices (`None`: an input no record of the file made);
    /// `None` as a whole for a record whose inputs are not linked.
    producers: Vec<Option<Vec<Option<usize>>>>,
    /// Each record's consumers, in order.
    consumers: Vec<Vec<usize>>,
    /// Each record's partner on the other side.
    pub(super) partner: Vec<Option<usize>>,
    /// Records left out of the pairing (repeats).
    repeat: Vec<bool>,
    /// By step, the records with no recorded producer (sources, records on leaves alone), in
    /// order, and how far they are all paired.
    roots: HashMap<u64, (Vec<usize>, usize)>,
    /// By step and op name, the records, in order, and how far they are all paired: the
    /// candidates of a record whose inputs are not linked.
    by_name: HashMap<(u64, &'a str), (Vec<usize>, usize)>,
    /// The sources (records of ops without inputs, not values) by op name and the content of
    /// their outputs, in order: a thread that makes a program's data ahead of its steps (a
    /// data loader) makes the same tensor in another step in another run.
    sources: HashMap<(&'a str, Vec<u64>), Vec<usize>>,
}

impl<'a> Run<'a> {
    pub(super) fn new(records: &'a [OpRecord]) -> Self {
        let index_of: HashMap<u64, usize> = records
            .iter()
            .enumerate()
            .map(|(index, record)| (record.seq, index))
            .collect();
        let mut consumers = vec![Vec::new(); records.len()];
        let producers: Vec<Option<Vec<Option<usize>>>> = records
            .iter()
            .enumerate()
            .map(|(index, record)| {
                let seqs = record.producers.as_ref()?;
                let found = seqs.iter().map(|seq| {
                    // A producer after the record (a reserved seq, a malformed file) is no
                    // ancestor: the walk must not go round.
                    seq.and_then(|seq| index_of.get(&seq).copied())
                        .filter(|&at| at < index)
                });
                Some(found.collect())
            })
            .collect();
        for (index, producers) in producers.iter().enumerate() {
            let mut seen = Vec::new();
            for &producer in producers.iter().flatten().flatten() {
                if !seen.contains(&producer) {
                    seen.push(producer);
                    consumers[producer].push(index);
                }
            }
        }
        let mut run = Run {
            records,
            producers,
            consumers,
            partner: vec![None; records.len()],
            repeat: vec![false; records.len()],
            roots: HashMap::default(),
            by_name: HashMap::default(),
            sources: HashMap::default(),
        };
        run.mark_repeats();
        for (index, record) in records.iter().enumerate() {
            if run.repeat[index] {
                continue;
            }
            let key = (record.step, record.op.as_str());
            run.by_name.entry(key).or_default().0.push(index);
            let producers = &run.producers[index];
            if producers.is_some() && producers.iter().flatten().all(Option::is_none) {
                run.roots.entry(record.step).or_default().0.push(index);
            }
            if is_source(record) {
                let key = (record.op.as_str(), content(record));
                run.sources.entry(key).or_default().push(index);
            }
        }
        run
    }

    /// Marks the records that repeat an earlier or later record of their step (the same op on
    /// the same producers, the same input and output shapes) and whose outputs no record read,
    /// while the record they repeat was read, or is the last of them.
    fn mark_repeats(&mut self) {
        type Key<'k> = (
            u64,
            &'k str,
            &'k [Option<u64>],
            &'k [Vec<usize>],
            Vec<&'k [usize]>,
        );
        let records = self.records;
        let key = |index: usize| -> Option<Key> {
            let record = &records[index];
            let producers = record.producers.as_deref()?;
            if record.is_value() || producers.is_empty() || producers.iter().all(Option::is_none) {
                return None;
            }
            let shapes = record.outputs.iter().map(|out| out.shape.as_slice());
            Some((
                record.step,
                record.op.as_str(),
                producers,
                record.input_shapes.as_slice(),
                shapes.collect(),
            ))
        };
        // Only a record no op read can be a repeat: the others are keyed only where one of
        // those has their step and name.
        let unread: Vec<usize> = (0..records.len())
            .filter(|&index| self.consumers[index].is_empty())
            .collect();
        let names: HashSet<(u64, &str)> = unread
            .iter()
            .map(|&index| (records[index].step, records[index].op.as_str()))
            .collect();
        if names.is_empty() {
            return;
        }
        let mut groups: HashMap<Key, Vec<usize>> = HashMap::default();
        for (index, record) in records.iter().enumerate() {
            if !names.contains(&(record.step, record.op.as_str())) {
                continue;
            }
            if let Some(key) = key(index) {
                groups.entry(key).or_default().push(index);
            }
        }
        for group in groups.into_values().filter(|group| group.len() > 1) {
            let read = |index: &usize| !self.consumers[*index].is_empty();
            let kept = group
                .iter()
                .rev()
                .find(|index| read(index))
                .or(group.last());
            for &index in &group {
                if Some(&index) != kept && !read(&index) {
                    self.repeat[index] = true;
                }
            }
        }
    }

    /// The record's nearest paired ancestors, as the reference's indices (`mapped`: this is
    /// the current run, whose partners are the reference's), sorted; `None` when the record's
    /// inputs are not linked. An ancestor not paired whose inputs are not linked counts as an
    /// input from outside.
    fn frontier(&self, index: usize, mapped: bool) -> Option<Vec<usize>> {
        let producers = self.producers[index].as_ref()?;
        // Most records read tensors of records already paired (or from outside): no walk.
        let direct = producers.iter().map(|producer| match producer {
            None => Some(LEAF),
            Some(at) => self.partner[*at].map(|partner| if mapped { partner } else { *at }),
        });
        if let Some(mut tokens) = direct.collect::<Option<Vec<usize>>>() {
            tokens.sort_unstable();
            tokens.dedup();
            return Some(tokens);
        }
        let mut tokens = Vec::new();
        let mut seen: HashSet<usize> = HashSet::default();
        let mut stack: Vec<Option<usize>> = self.producers[index].clone()?;
        let mut budget = FRONTIER_BUDGET;
        while let Some(producer) = stack.pop() {
            let Some(producer) = producer else {
                tokens.push(LEAF);
                continue;
            };
            if !seen.insert(producer) {
                continue;
            }
            if let Some(partner) = self.partner[producer] {
                tokens.push(if mapped { partner } else { producer });
            } else if budget == 0 {
                tokens.push(DEEP);
            } else if let Some(producers) = &self.producers[producer] {
                budget -= 1;
                stack.extend(producers);
            } else {
                tokens.push(LEAF);
            }
        }
        tokens.sort_unstable();
        tokens.dedup();
        Some(tokens)
    }

    /// The records not paired yet that descend from `from` through records not paired, in
    /// order, at most [`WALK_BUDGET`] looked at; only their direct consumers when `near`.
    fn unpaired_descendants(&self, from: &[usize], near: bool) -> Vec<usize> {
        if near {
            let mut found: Vec<usize> = from
                .iter()
                .flat_map(|&start| self.consumers[start].iter().copied())
                .filter(|&index| self.partner[index].is_none() && !self.repeat[index])
                .collect();
            found.sort_unstable();
            found.dedup();
            return found;
        }
        let mut found = Vec::new();
        let mut seen: HashSet<usize> = HashSet::default();
        let mut stack: Vec<usize> = Vec::new();
        for &start in from {
            stack.extend(self.consumers[start].iter().rev());
        }
        let mut budget = WALK_BUDGET;
        while let Some(index) = stack.pop() {
            if budget == 0 {
                break;
            }
            if self.partner[index].is_some() || !seen.insert(index) {
                continue;
            }
            budget -= 1;
            if !self.repeat[index] {
                found.push(index);
            }
            stack.extend(self.consumers[index].iter().rev());
        }
        found.sort_unstable();
        found
    }

    /// The step's records without paired ancestors not paired yet, from the first not paired,
    /// at most [`ROOT_WINDOW`] of them, and (unless `near`) their unpaired descendants.
    fn unpaired_roots(&mut self, step: u64, near: bool) -> Vec<usize> {
        let Some((roots, first)) = self.roots.get_mut(&step) else {
            return Vec::new();
        };
        while roots
            .get(*first)
            .is_some_and(|&at| self.partner[at].is_some())
        {
            *first += 1;
        }
        let window: Vec<usize> = roots[*first..]
            .iter()
            .copied()
            .filter(|&at| self.partner[at].is_none())
            .take(ROOT_WINDOW)
            .collect();
        if near {
            return window;
        }
        let mut found = window.clone();
        found.extend(self.unpaired_descendants(&window, false));
        found.sort_unstable();
        found.dedup();
        found
    }
}

/// Whether `record` is of an op without inputs that made tensors (`float_from_data`,
/// `float_zeros`), not a value handed over.
fn is_source(record: &OpRecord) -> bool {
    record.input_shapes.is_empty() && !record.outputs.is_empty() && !record.is_value()
}

/// What a record's outputs held, bit for bit.
fn content(record: &OpRecord) -> Vec<u64> {
    record
        .outputs
        .iter()
        .map(|output| output.content_key())
        .collect()
}

/// How good a partner a candidate is: lower is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Evidence {
    IdenticalSameName,
    Identical,
    CloseSameName,
    Close,
    SameName,
    Other,
}

fn compatible(a: &OpRecord, b: &OpRecord) -> bool {
    if a.step != b.step {
        return false;
    }
    if a.is_value() || b.is_value() || a.outputs.is_empty() || b.outputs.is_empty() {
        // A value is known by its name alone; an op whose outputs were not observed by its
        // name and inputs.
        return a.op == b.op
            && (a.is_value() || a.input_shapes == b.input_shapes)
            && a.is_value() == b.is_value();
    }
    a.outputs.len() == b.outputs.len()
        && (a.outputs.iter().zip(&b.outputs)).all(|(x, y)| x.shape == y.shape && x.dtype == y.dtype)
}

fn evidence(a: &OpRecord, b: &OpRecord, tolerance: Tolerance) -> Evidence {
    let same_name = a.op == b.op;
    match compare_outputs(&a.outputs, &b.outputs, tolerance).0 {
        Agreement::Identical if same_name => Evidence::IdenticalSameName,
        Agreement::Identical => Evidence::Identical,
        Agreement::WithinTolerance if same_name => Evidence::CloseSameName,
        Agreement::WithinTolerance => Evidence::Close,
        _ if same_name => Evidence::SameName,
        _ => Evidence::Other,
    }
}

/// Pairs `reference` and `current` along their dataflow ([the module](self)).
pub(super) fn by_dataflow(
    reference: &[OpRecord],
    current: &[OpRecord],
    tolerance: Tolerance,
) -> Alignment {
    let mut sides = [Run::new(reference), Run::new(current)];
    let steps = |records: &[OpRecord]| -> std::collections::BTreeSet<u64> {
        records.iter().map(|record| record.step).collect()
    };
    let (steps_reference, steps_current) = (steps(reference), steps(current));
    // First the pairs the outputs or the names show, each confirming the producers its
    // region was read from; then, for what is left, the candidates of another name whose
    // outputs differ (a region that computes the tensor otherwise, and wrongly).
    for speculative in [false, true] {
        for b in 0..current.len() {
            if sides[1].repeat[b] || sides[1].partner[b].is_some() {
                continue;
            }
            if let Some(a) = partner_for(&mut sides, b, tolerance, speculative) {
                pair_back(&mut sides, a, b);
            }
        }
    }
    let [ours, theirs] = sides;
    regions(&ours, &theirs, &steps_reference, &steps_current)
}

/// The reference's record the current run's record `b` pairs with, if any: among the
/// candidates near the frontier first (its direct consumers, the step's first roots), then
/// further.
fn partner_for(
    sides: &mut [Run; 2],
    b: usize,
    tolerance: Tolerance,
    speculative: bool,
) -> Option<usize> {
    let Some(frontier) = sides[1].frontier(b, true) else {
        return unlinked_partner(sides, b);
    };
    let step = sides[1].records[b].step;
    let paired: Vec<usize> = frontier.iter().copied().filter(|&t| t < DEEP).collect();
    // The frontier's token with the fewest consumers: the candidates descend from it.
    let fewest = paired
        .iter()
        .copied()
        .min_by_key(|&t| sides[0].consumers[t].len());
    let mut others = Vec::new();
    for near in [true, false] {
        let found = match fewest {
            None => sides[0].unpaired_roots(step, near),
            Some(token) => sides[0].unpaired_descendants(&[token], near),
        };
        let [ours, theirs] = &*sides;
        let record = &theirs.records[b];
        let mut scored: Vec<(Evidence, usize)> = found
            .into_iter()
            .filter(|&a| ours.partner[a].is_none() && !ours.repeat[a])
            .filter(|&a| compatible(&ours.records[a], record))
            .filter(|&a| ours.frontier(a, false).as_ref() == Some(&frontier))
            .take(CANDIDATES)
            .map(|a| (evidence(&ours.records[a], record, tolerance), a))
            .collect();
        scored.sort_unstable();
        // A source is known by what it made: the same name alone is no evidence.
        let enough = match is_source(record) {
            true => Evidence::SameName,
            false => Evidence::Other,
        };
        match scored.first() {
            Some(&(evidence, a)) if evidence < enough => return Some(a),
            _ => others = scored,
        }
    }
    if let Some(a) = same_source_elsewhere(&sides[0], &sides[1].records[b]) {
        return Some(a);
    }
    if !speculative {
        return None;
    }
    let [ours, theirs] = &*sides;
    let others = others.into_iter().map(|(_, a)| a);
    let found = others
        .take(4)
        .find(|&a| !waits_for_better(theirs, ours, b, &frontier, a, tolerance));
    found.or_else(|| nested_near(ours, theirs, b, &frontier, tolerance))
}

/// The reference's first source not paired, in any step, of `record`'s name that made the same
/// tensors bit for bit, when `record` is a source.
fn same_source_elsewhere(ours: &Run, record: &OpRecord) -> Option<usize> {
    if !is_source(record) {
        return None;
    }
    let found = ours.sources.get(&(record.op.as_str(), content(record)))?;
    found
        .iter()
        .copied()
        .find(|&a| ours.partner[a].is_none() && !ours.repeat[a])
}

/// The reference's record not paired, of `b`'s output shapes, whose frontier holds `b`'s or is
/// held in it, and that has `b`'s outputs within the tolerance (the first of them) or else its
/// name (the first of those): a program that removed an op which read another input (or added
/// one) reads more (or fewer) tensors in the region, and so does a record that did not link
/// one of its inputs (an optional bias).
fn nested_near(
    ours: &Run,
    theirs: &Run,
    b: usize,
    frontier: &[usize],
    tolerance: Tolerance,
) -> Option<usize> {
    let record = &theirs.records[b];
    let paired: Vec<usize> = frontier.iter().copied().filter(|&t| t < DEEP).collect();
    let found = ours.unpaired_descendants(&paired, false);
    let nested = |theirs: &[usize]| {
        let (small, large) = match theirs.len() <= frontier.len() {
            true => (theirs, frontier),
            false => (frontier, theirs),
        };
        small.iter().all(|token| large.contains(token))
    };
    let nested: Vec<usize> = found
        .into_iter()
        .filter(|&a| !ours.repeat[a] && compatible(&ours.records[a], record))
        .filter(|&a| ours.frontier(a, false).is_some_and(|own| nested(&own)))
        .take(CANDIDATES)
        .collect();
    let close = |&a: &usize| evidence(&ours.records[a], record, tolerance) <= Evidence::Close;
    (nested.iter().copied().find(close)).or_else(|| {
        nested
            .into_iter()
            .find(|&a| ours.records[a].op == record.op)
    })
}

/// Pairs `a` with `b`, then the producers each read, argument by argument, where both are not
/// paired yet and make the same tensor by their shapes, and either have the same name or the
/// same frontier: a pair's region is read from the tensors its partner's is.
fn pair_back(sides: &mut [Run; 2], a: usize, b: usize) {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        sides[0].partner[a] = Some(b);
        sides[1].partner[b] = Some(a);
        let [ours, theirs] = &*sides;
        let (Some(from_a), Some(from_b)) = (&ours.producers[a], &theirs.producers[b]) else {
            continue;
        };
        if from_a.len() != from_b.len() {
            continue;
        }
        for (&x, &y) in from_a.iter().zip(from_b) {
            let (Some(x), Some(y)) = (x, y) else {
                continue;
            };
            let free = |run: &Run, at: usize| run.partner[at].is_none() && !run.repeat[at];
            if !free(ours, x) || !free(theirs, y) || stack.iter().any(|&(p, q)| p == x || q == y) {
                continue;
            }
            let (r, s) = (&ours.records[x], &theirs.records[y]);
            if !compatible(r, s) || r.is_value() || s.is_value() {
                continue;
            }
            if r.op == s.op || ours.frontier(x, false) == theirs.frontier(y, true) {
                stack.push((x, y));
            }
        }
    }
}

/// Whether a later record of the current run, on the same frontier as `b`, is a better
/// partner of the reference's `a` than `b` (its name, or outputs within the tolerance).
fn waits_for_better(
    theirs: &Run,
    ours: &Run,
    b: usize,
    frontier: &[usize],
    a: usize,
    tolerance: Tolerance,
) -> bool {
    let record = &ours.records[a];
    let paired: Vec<usize> = frontier
        .iter()
        .filter_map(|&t| ours.partner.get(t).copied().flatten())
        .collect();
    let later = match paired.is_empty() {
        true => {
            let step = theirs.records[b].step;
            let roots = theirs.roots.get(&step).map(|(roots, _)| roots.as_slice());
            let after = roots.unwrap_or_default().iter().copied().filter(|&x| x > b);
            let after: Vec<usize> = after.take(ROOT_WINDOW).collect();
            let mut found = after.clone();
            found.extend(theirs.unpaired_descendants(&after, false));
            found
        }
        false => theirs.unpaired_descendants(&paired, false),
    };
    let on_the_frontier = later
        .into_iter()
        .filter(|&x| x > b && !theirs.repeat[x])
        .filter(|&x| compatible(record, &theirs.records[x]))
        .take(CANDIDATES)
        .any(|x| {
            evidence(record, &theirs.records[x], tolerance) < Evidence::Other
                && theirs.frontier(x, true).as_deref() == Some(frontier)
        });
    // A record made from `b` whose outputs are `a`'s (a bias added after the matmul, where the
    // reference's `linear` did not link its bias): `b` is inside that record's region.
    on_the_frontier
        || (theirs.unpaired_descendants(&[b], false).into_iter())
            .filter(|&x| !theirs.repeat[x] && compatible(record, &theirs.records[x]))
            .take(CANDIDATES)
            .any(|x| evidence(record, &theirs.records[x], tolerance) <= Evidence::Close)
}

/// A record whose inputs are not linked: the reference's first record of its step and name
/// not paired yet, after the last of them paired by name, of the same input shapes and
/// outputs.
fn unlinked_partner(sides: &mut [Run; 2], b: usize) -> Option<usize> {
    let [ours, theirs] = sides;
    let record = &theirs.records[b];
    let key = (record.step, record.op.as_str());
    let (list, first) = ours.by_name.get_mut(&key)?;
    let at = list[*first..].iter().position(|&a| {
        let other = &ours.records[a];
        ours.partner[a].is_none()
            && compatible(other, record)
            && other.input_shapes == record.input_shapes
    })?;
    let a = list[*first + at];
    *first += at + 1;
    Some(a)
}

/// The pairs in the reference's order, each with its region: the records not paired that its
/// output was made from, back to the paired tensors, claimed by the earliest pair that reaches
/// them.
fn regions(
    ours: &Run,
    theirs: &Run,
    steps_reference: &std::collections::BTreeSet<u64>,
    steps_current: &std::collections::BTreeSet<u64>,
) -> Alignment {
    let mut alignment = Alignment::default();
    let mut claimed = [
        vec![false; ours.records.len()],
        vec![false; theirs.records.len()],
    ];
    for (a, partner) in ours.partner.iter().enumerate() {
        let Some(b) = *partner else {
            continue;
        };
        alignment.pairs.push((a, b));
        let interior = |run: &Run, claimed: &mut Vec<bool>, from: usize| {
            let mut found = Vec::new();
            let mut stack: Vec<usize> = run.producers[from]
                .iter()
                .flatten()
                .flatten()
                .copied()
                .collect();
            while let Some(index) = stack.pop() {
                if run.partner[index].is_some() || run.repeat[index] || claimed[index] {
                    continue;
                }
                // A region is within its pair's step.
                if run.records[index].step != run.records[from].step {
                    continue;
                }
                claimed[index] = true;
                found.push(index);
                stack.extend(run.producers[index].iter().flatten().flatten());
            }
            found.sort_unstable();
            found
        };
        let [left, right] = &mut claimed;
        alignment.regions.push(Region {
            reference: interior(ours, left, a),
            current: interior(theirs, right, b),
        });
    }
    for (run, claimed, only, repeats) in [
        (
            ours,
            &claimed[0],
            &mut alignment.only_reference,
            &mut alignment.repeats_reference,
        ),
        (
            theirs,
            &claimed[1],
            &mut alignment.only_current,
            &mut alignment.repeats_current,
        ),
    ] {
        for (index, &inside) in claimed.iter().enumerate() {
            if run.repeat[index] {
                repeats.push(index);
            } else if run.partner[index].is_none() && !inside {
                only.push(index);
            }
        }
    }
    alignment.steps_only_reference = steps_reference.difference(steps_current).copied().collect();
    alignment.steps_only_current = steps_current.difference(steps_reference).copied().collect();
    alignment
}
