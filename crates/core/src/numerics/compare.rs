//! Two runs' numerics compared: each aligned op's outputs identical, within a tolerance, or
//! diverged; the **culprit** (the first diverged op whose inputs agreed) and the
//! **propagators** (the diverged ops after it); and the first op that made a NaN or an Inf.

use rustc_hash::FxHashMap as HashMap;

use super::fingerprint::WEIGHT_PERIOD;
use super::{Alignment, Fingerprint, OpRecord, align_with};

/// How far apart two runs' elements may be and still agree: every element `x'` of the current
/// run's output within `atol + rtol * |x|` of the reference's `x`, as `numpy.isclose`.
///
/// The comparison sees statistics, not elements: each statistic is compared with the bound
/// that outputs agreeing element by element within the tolerance always meet (`n` finite
/// elements, `M` the reference's largest magnitude): min and max within `atol + rtol * M`,
/// the mean within `atol + rtol * mean(|x|)`, the sum and the sum of absolute values within
/// `n * atol + rtol * sum(|x|)`, the L2 norm within `sqrt(n) * atol + rtol * l2`, the weighted
/// sum within `W * atol + 1021 * rtol * sum(|x|)` (`W` the sum of the weights). Dtype, shape,
/// element count and the NaN, +Inf and -Inf counts must be equal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
}

impl Default for Tolerance {
    /// `rtol = 1e-4`, `atol = 1e-5`: f32 results of one program on two backends, whose
    /// reductions add in another order. NdArray against `Profiled<Wgpu>` on lavapipe meets it
    /// on every op of `tests/numerics_wgpu.rs`'s model (95 of its 110 ops not bit for bit).
    fn default() -> Self {
        Tolerance {
            rtol: 1e-4,
            atol: 1e-5,
        }
    }
}

/// How an aligned op's outputs compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agreement {
    /// Every statistic of every output bit for bit.
    Identical,
    /// Within the tolerance, not bit for bit.
    WithinTolerance,
    /// Beyond the tolerance, or another dtype, shape, element or NaN/Inf count.
    Diverged,
    /// One side's record has no outputs: the op ran inside a fused block, whose outputs stay
    /// in its registers, so there is nothing to compare.
    NotObserved,
}

/// One statistic that differs beyond the tolerance.
#[derive(Debug, Clone, PartialEq)]
pub struct StatDiff {
    /// Which output of the op.
    pub output: usize,
    /// The statistic: `dtype`, `shape`, `elements`, `nan`, `pos_inf`, `neg_inf`, `min`, `max`,
    /// `sum`, `mean`, `l2`, `sum_abs`, `weighted_sum` (or `outputs`, their count).
    pub stat: &'static str,
    /// Its value in the reference.
    pub before: StatValue,
    /// Its value in the current run.
    pub after: StatValue,
}

/// A statistic's value, formatted only when shown (a comparison of 1M diverged ops formats
/// none of them).
#[derive(Debug, Clone, PartialEq)]
pub enum StatValue {
    /// A count.
    Count(u64),
    /// A statistic (`NaN` for a min or max where no element is finite).
    Number(f64),
    /// A dtype, or a shape as `[2, 3]`.
    Text(String),
}

impl std::fmt::Display for StatValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StatValue::Count(count) => write!(f, "{count}"),
            StatValue::Number(x) => write!(f, "{x}"),
            StatValue::Text(text) => f.write_str(text),
        }
    }
}

/// An aligned pair of op calls and how their outputs compare.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// The index of the reference's record.
    pub reference: usize,
    /// The index of the current run's record.
    pub current: usize,
    /// How the outputs compare.
    pub agreement: Agreement,
    /// The statistics beyond the tolerance (empty unless diverged).
    pub differences: Vec<StatDiff>,
}

/// The op a divergence started at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Culprit {
    /// Its index in [`Comparison::pairs`].
    pub pair: usize,
    /// Whether its inputs agreed (their producers paired and [agreeing as
    /// inputs](InputsAgree)). `false` when no diverged op had agreeing inputs:
    /// the culprit is then the first diverged op, and [`Comparison::agreeing_ancestors`] names
    /// the nearest pairs before it that agreed.
    pub inputs_agreed: bool,
    /// Whether its outputs stayed within the tolerance but moved beyond their own magnitude's
    /// ([`InputsAgree`]), and the ops after it scaled the difference up: no diverged op's
    /// inputs agreed, and this is the earliest op before the first divergence whose inputs
    /// agreed and whose outputs did not.
    pub moved_within_tolerance: bool,
}

/// When an input of two runs counts as the same tensor, for the culprit's "its inputs agreed".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InputsAgree {
    /// Bit for bit: both runs ran on the same backend, where the same inputs give the same
    /// outputs.
    Bitwise,
    /// Bit for bit, or within the relative tolerance scaled to the tensor's own magnitude (no
    /// absolute tolerance: a small tensor that moved is not taken as agreeing, and the op that
    /// scales it up is not blamed): runs on two backends.
    #[default]
    Scaled,
}

/// One input of the culprit, as paired on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct CulpritInput {
    /// The reference's record that made it; `None` for an input no recorded op made.
    pub reference: Option<usize>,
    /// The current run's record that made it.
    pub current: Option<usize>,
    /// The pair's index in [`Comparison::pairs`], when both are paired.
    pub pair: Option<usize>,
    /// How the pair's outputs compare; `None` for an input no recorded op made.
    pub agreement: Option<Agreement>,
}

/// Two runs' numerics compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The tolerance compared with.
    pub tolerance: Tolerance,
    /// The aligned ops, by step then in the reference's order.
    pub pairs: Vec<Pair>,
    /// Which records were aligned, and which steps and ops only one side has.
    pub alignment: Alignment,
    /// The first diverged op whose inputs agreed.
    pub culprit: Option<Culprit>,
    /// The diverged ops after the culprit: they carried the difference on.
    pub propagators: usize,
    /// The culprit's inputs: the nearest paired tensors its region read, on both sides.
    pub culprit_inputs: Vec<CulpritInput>,
    /// When the culprit's inputs could not be shown to agree: the nearest pairs before it
    /// whose outputs agreed as inputs, by index in [`pairs`](Self::pairs).
    pub agreeing_ancestors: Vec<usize>,
}

impl Comparison {
    /// Whether no aligned op diverged.
    pub fn agrees(&self) -> bool {
        self.culprit.is_none()
    }

    /// How many aligned ops have each agreement: identical, within tolerance, diverged (the
    /// ops [not observed](Agreement::NotObserved) are [`not_observed`](Self::not_observed)).
    pub fn counts(&self) -> [usize; 3] {
        let mut counts = [0; 3];
        for pair in &self.pairs {
            if let Some(count) = counts.get_mut(pair.agreement as usize) {
                *count += 1;
            }
        }
        counts
    }

    /// How many aligned ops one side did not observe (inside a fused block).
    pub fn not_observed(&self) -> usize {
        let unseen = self.pairs.iter();
        unseen
            .filter(|pair| pair.agreement == Agreement::NotObserved)
            .count()
    }
}

/// Compares two runs' records (each in its file's order) with inputs agreeing as
/// [`InputsAgree::Scaled`]: [`compare_with`].
pub fn compare(reference: &[OpRecord], current: &[OpRecord], tolerance: Tolerance) -> Comparison {
    compare_with(reference, current, tolerance, InputsAgree::default())
}

/// Compares two runs' records (each in its file's order): pairs them ([`align_with`]),
/// compares each pair's outputs, and names the culprit (the earliest diverged pair whose
/// inputs agreed as `inputs` says) and counts its propagators.
///
/// A pair's inputs are the nearest paired tensors its region read, on both sides: they agreed
/// when each of them agreed as an input (an input no recorded op made is taken as agreeing;
/// a pair not observed, by its own inputs). Records not linked to their producers: when no
/// earlier pair of the step diverged.
pub fn compare_with(
    reference: &[OpRecord],
    current: &[OpRecord],
    tolerance: Tolerance,
    inputs: InputsAgree,
) -> Comparison {
    let alignment = align_with(reference, current, tolerance);
    let pairs: Vec<Pair> = alignment
        .pairs
        .iter()
        .map(|&(a, b)| {
            let (agreement, differences) =
                compare_outputs(&reference[a].outputs, &current[b].outputs, tolerance);
            Pair {
                reference: a,
                current: b,
                agreement,
                differences,
            }
        })
        .collect();
    let links = Links::new(reference, current, &pairs, &alignment, tolerance, inputs);
    let mut diverged = pairs
        .iter()
        .enumerate()
        .filter(|(_, pair)| pair.agreement == Agreement::Diverged)
        .map(|(index, _)| index)
        .peekable();
    let culprit = match diverged.peek() {
        None => None,
        Some(&first) => {
            let agreed = (first..pairs.len())
                .filter(|&index| pairs[index].agreement == Agreement::Diverged)
                .find(|&index| links.inputs_agreed(index));
            Some(match (agreed, links.origin(first)) {
                (Some(pair), _) => Culprit {
                    pair,
                    inputs_agreed: true,
                    moved_within_tolerance: false,
                },
                (None, Some(pair)) => Culprit {
                    pair,
                    inputs_agreed: true,
                    moved_within_tolerance: true,
                },
                (None, None) => Culprit {
                    pair: first,
                    inputs_agreed: false,
                    moved_within_tolerance: false,
                },
            })
        }
    };
    let propagators = culprit.map_or(0, |culprit| {
        diverged.filter(|&index| index > culprit.pair).count()
    });
    let culprit_inputs = culprit.map_or_else(Vec::new, |culprit| links.inputs(culprit.pair));
    let agreeing_ancestors = match culprit {
        Some(culprit) if !culprit.inputs_agreed => links.agreeing_ancestors(culprit.pair),
        _ => Vec::new(),
    };
    Comparison {
        tolerance,
        pairs,
        alignment,
        culprit,
        propagators,
        culprit_inputs,
        agreeing_ancestors,
    }
}

/// How many pairs deep the agreement of a pair not observed is looked for through its inputs.
const UNOBSERVED_DEPTH: usize = 16;

/// What is known of each pair's inputs on both sides.
struct Links<'a> {
    reference: &'a [OpRecord],
    current: &'a [OpRecord],
    pairs: &'a [Pair],
    /// By `seq`, each side's record's pair, if paired (`None`).
    reference_pairs: HashMap<u64, Option<usize>>,
    current_pairs: HashMap<u64, Option<usize>>,
    /// Each pair's region.
    regions: &'a [super::Region],
    /// By `seq`, the pair whose region holds the reference's record, for records inside one.
    reference_regions: HashMap<u64, usize>,
    tolerance: Tolerance,
    inputs: InputsAgree,
}

impl<'a> Links<'a> {
    fn new(
        reference: &'a [OpRecord],
        current: &'a [OpRecord],
        pairs: &'a [Pair],
        alignment: &'a Alignment,
        tolerance: Tolerance,
        inputs: InputsAgree,
    ) -> Self {
        let side = |records: &[OpRecord], of: fn(&Pair) -> usize| {
            let mut by_seq: HashMap<u64, Option<usize>> =
                records.iter().map(|record| (record.seq, None)).collect();
            for (index, pair) in pairs.iter().enumerate() {
                by_seq.insert(records[of(pair)].seq, Some(index));
            }
            by_seq
        };
        let reference_regions = (alignment.regions.iter().enumerate())
            .flat_map(|(pair, region)| {
                let seqs = region.reference.iter().map(|&at| reference[at].seq);
                seqs.map(move |seq| (seq, pair))
            })
            .collect();
        Links {
            reference,
            current,
            pairs,
            reference_regions,
            reference_pairs: side(reference, |pair| pair.reference),
            current_pairs: side(current, |pair| pair.current),
            regions: &alignment.regions,
            tolerance,
            inputs,
        }
    }

    /// The seqs of the records that the pair's region read from outside it, on one side.
    fn region_inputs(&self, index: usize, reference: bool) -> Option<Vec<Option<u64>>> {
        let region = self.regions.get(index);
        let (records, by_seq, own, mut inside) = match reference {
            true => (
                self.reference,
                &self.reference_pairs,
                self.pairs[index].reference,
                region.map(|region| region.reference.clone()),
            ),
            false => (
                self.current,
                &self.current_pairs,
                self.pairs[index].current,
                region.map(|region| region.current.clone()),
            ),
        };
        let mut inside = inside.take().unwrap_or_default();
        inside.push(own);
        let seqs: Vec<u64> = inside.iter().map(|&at| records[at].seq).collect();
        let mut read = Vec::new();
        for &at in &inside {
            for producer in records[at].producers.as_ref()? {
                let from_outside = producer.is_none_or(|seq| !seqs.contains(&seq));
                if from_outside && !read.contains(producer) {
                    read.push(*producer);
                }
            }
        }
        // A producer the file does not hold: an input from outside, like a parameter.
        Some(
            read.into_iter()
                .map(|seq| seq.filter(|seq| by_seq.contains_key(seq)))
                .collect(),
        )
    }

    /// Whether the outputs of pair `index` count as the same tensor when read.
    fn agreed_as_input(&self, index: usize, depth: usize) -> bool {
        let pair = &self.pairs[index];
        match pair.agreement {
            Agreement::Identical => true,
            Agreement::Diverged => false,
            Agreement::NotObserved => {
                depth < UNOBSERVED_DEPTH && self.inputs_agreed_at(index, depth + 1)
            }
            Agreement::WithinTolerance => match self.inputs {
                InputsAgree::Bitwise => false,
                InputsAgree::Scaled => {
                    let scaled = Tolerance {
                        atol: 0.0,
                        ..self.tolerance
                    };
                    let (reference, current) =
                        (&self.reference[pair.reference], &self.current[pair.current]);
                    compare_outputs(&reference.outputs, &current.outputs, scaled).0
                        != Agreement::Diverged
                }
            },
        }
    }

    fn inputs_agreed(&self, index: usize) -> bool {
        self.inputs_agreed_at(index, 0)
    }

    fn inputs_agreed_at(&self, index: usize, depth: usize) -> bool {
        let pair = &self.pairs[index];
        let ours = &self.reference[pair.reference];
        match (
            self.region_inputs(index, true),
            self.region_inputs(index, false),
        ) {
            (Some(a), Some(b)) => {
                self.producers_agreed(&a, &self.reference_pairs, depth)
                    && self.producers_agreed(&b, &self.current_pairs, depth)
            }
            // No links: every earlier op of the step is a possible producer.
            _ => self.pairs[..index]
                .iter()
                .rev()
                .take_while(|earlier| self.reference[earlier.reference].step == ours.step)
                .all(|earlier| earlier.agreement != Agreement::Diverged),
        }
    }

    fn producers_agreed(
        &self,
        producers: &[Option<u64>],
        by_seq: &HashMap<u64, Option<usize>>,
        depth: usize,
    ) -> bool {
        producers.iter().flatten().all(|seq| match by_seq.get(seq) {
            None => true,
            Some(None) => false,
            Some(Some(pair)) => self.agreed_as_input(*pair, depth),
        })
    }

    /// The pair's inputs, as paired on both sides: the reference's first, then the current
    /// run's that no reference input is paired with.
    fn inputs(&self, index: usize) -> Vec<CulpritInput> {
        let (Some(ours), Some(theirs)) = (
            self.region_inputs(index, true),
            self.region_inputs(index, false),
        ) else {
            return Vec::new();
        };
        let index_of = |records: &[OpRecord], seq: u64| records.iter().position(|r| r.seq == seq);
        let mut inputs = Vec::new();
        let mut seen_pairs = Vec::new();
        for seq in ours {
            let pair = seq.and_then(|seq| self.reference_pairs.get(&seq).copied().flatten());
            seen_pairs.extend(pair);
            inputs.push(CulpritInput {
                reference: seq.and_then(|seq| index_of(self.reference, seq)),
                current: pair.map(|pair| self.pairs[pair].current),
                pair,
                agreement: pair.map(|pair| self.pairs[pair].agreement),
            });
        }
        for seq in theirs {
            let pair = seq.and_then(|seq| self.current_pairs.get(&seq).copied().flatten());
            if pair.is_some_and(|pair| seen_pairs.contains(&pair)) || seq.is_none() {
                continue;
            }
            inputs.push(CulpritInput {
                reference: pair.map(|pair| self.pairs[pair].reference),
                current: seq.and_then(|seq| index_of(self.current, seq)),
                pair,
                agreement: pair.map(|pair| self.pairs[pair].agreement),
            });
        }
        inputs
    }

    /// The earliest pair that `index` was made from whose outputs did not agree as an input
    /// while its own inputs did: where a difference within the tolerance began.
    fn origin(&self, index: usize) -> Option<usize> {
        let origins = self.upstream(index, |pair| match self.agreed_as_input(pair, 0) {
            true => None,
            false => Some(self.inputs_agreed(pair)),
        });
        origins.into_iter().min()
    }

    /// The nearest pairs before `index` along its inputs whose outputs agreed as inputs, at
    /// most eight.
    fn agreeing_ancestors(&self, index: usize) -> Vec<usize> {
        let mut found = self.upstream(index, |pair| Some(self.agreed_as_input(pair, 0)));
        found.sort_unstable();
        found.truncate(8);
        found
    }

    /// The pairs found walking back from pair `index` along the inputs of each region (a
    /// record inside another pair's region stands for that pair):
    /// `found` says of each pair reached whether it is one (`Some(true)`), to walk on through
    /// (`Some(false)`) or to leave (`None`). At most 4096 pairs are looked at.
    fn upstream(&self, index: usize, found: impl Fn(usize) -> Option<bool>) -> Vec<usize> {
        let mut hits = Vec::new();
        let mut seen = vec![index];
        let mut frontier = vec![index];
        while let Some(at) = frontier.pop() {
            let Some(producers) = self.region_inputs(at, true) else {
                continue;
            };
            for seq in producers.into_iter().flatten() {
                // A tensor inside a region (not compared) leads on to the region's pair.
                let pair = match self.reference_pairs.get(&seq).copied() {
                    Some(Some(pair)) => pair,
                    Some(None) => match self.reference_regions.get(&seq) {
                        Some(&pair) => pair,
                        None => continue,
                    },
                    None => continue,
                };
                if seen.contains(&pair) {
                    continue;
                }
                seen.push(pair);
                match found(pair) {
                    Some(true) => hits.push(pair),
                    Some(false) => frontier.push(pair),
                    None => {}
                }
            }
            if seen.len() > 4096 {
                break;
            }
        }
        hits
    }
}

/// Compares one op's outputs in the two runs.
pub fn compare_outputs(
    reference: &[Fingerprint],
    current: &[Fingerprint],
    tolerance: Tolerance,
) -> (Agreement, Vec<StatDiff>) {
    if reference.is_empty() || current.is_empty() {
        return (Agreement::NotObserved, Vec::new());
    }
    if reference.len() != current.len() {
        let diff = StatDiff {
            output: 0,
            stat: "outputs",
            before: StatValue::Count(reference.len() as u64),
            after: StatValue::Count(current.len() as u64),
        };
        return (Agreement::Diverged, vec![diff]);
    }
    if reference.iter().zip(current).all(|(a, b)| a.bit_equal(b)) {
        return (Agreement::Identical, Vec::new());
    }
    let differences: Vec<StatDiff> = reference
        .iter()
        .zip(current)
        .enumerate()
        .flat_map(|(output, (a, b))| output_differences(output, a, b, tolerance))
        .collect();
    match differences.is_empty() {
        true => (Agreement::WithinTolerance, differences),
        false => (Agreement::Diverged, differences),
    }
}

fn output_differences(
    output: usize,
    a: &Fingerprint,
    b: &Fingerprint,
    tol: Tolerance,
) -> Vec<StatDiff> {
    let mut differences = Vec::new();
    let mut differ = |stat: &'static str, before: StatValue, after: StatValue| {
        differences.push(StatDiff {
            output,
            stat,
            before,
            after,
        })
    };
    if a.dtype != b.dtype {
        differ(
            "dtype",
            StatValue::Text(a.dtype.clone()),
            StatValue::Text(b.dtype.clone()),
        );
    }
    if a.shape != b.shape {
        let shape = |shape: &[usize]| StatValue::Text(format!("{shape:?}"));
        differ("shape", shape(&a.shape), shape(&b.shape));
    }
    let counts = [
        ("elements", a.elements, b.elements),
        ("nan", a.nan, b.nan),
        ("pos_inf", a.pos_inf, b.pos_inf),
        ("neg_inf", a.neg_inf, b.neg_inf),
    ];
    for (stat, x, y) in counts {
        if x != y {
            differ(stat, StatValue::Count(x), StatValue::Count(y));
        }
    }
    if a.dtype != b.dtype
        || a.shape != b.shape
        || (a.elements, a.nan, a.pos_inf, a.neg_inf) != (b.elements, b.nan, b.pos_inf, b.neg_inf)
    {
        return differences;
    }
    let n = a.finite() as f64;
    let magnitude = a.min.unwrap_or(0.0).abs().max(a.max.unwrap_or(0.0).abs());
    let mean_abs = if n > 0.0 { a.sum_abs / n } else { 0.0 };
    let Tolerance { rtol, atol } = tol;
    let weights = weight_total(a.elements);
    let option = |x: Option<f64>| x.unwrap_or(f64::NAN);
    let stats = [
        ("min", option(a.min), option(b.min), atol + rtol * magnitude),
        ("max", option(a.max), option(b.max), atol + rtol * magnitude),
        ("sum", a.sum, b.sum, n * atol + rtol * a.sum_abs),
        ("mean", a.mean(), b.mean(), atol + rtol * mean_abs),
        ("l2", a.l2(), b.l2(), n.sqrt() * atol + rtol * a.l2()),
        ("sum_abs", a.sum_abs, b.sum_abs, n * atol + rtol * a.sum_abs),
        (
            "weighted_sum",
            a.weighted_sum,
            b.weighted_sum,
            weights * atol + WEIGHT_PERIOD as f64 * rtol * a.sum_abs,
        ),
    ];
    for (stat, x, y, bound) in stats {
        let equal = x == y || (x.is_nan() && y.is_nan());
        // A NaN distance (an infinity against a number) is beyond any bound.
        let close = (x - y).abs() <= bound;
        if !equal && !close {
            differ(stat, StatValue::Number(x), StatValue::Number(y));
        }
    }
    differences
}

/// The sum of the position weights of `elements` positions.
fn weight_total(elements: u64) -> f64 {
    let (full, rest) = (elements / WEIGHT_PERIOD, elements % WEIGHT_PERIOD);
    let period = (WEIGHT_PERIOD * (WEIGHT_PERIOD + 1) / 2) as f64;
    full as f64 * period + (rest * (rest + 1) / 2) as f64
}

/// The index of the first record that made a NaN or an Inf: its outputs are not all finite
/// while every producer its record links had finite outputs (an unlinked record: every earlier
/// record's outputs were finite). The producer, not the ops its NaN then poisoned.
pub fn first_non_finite(records: &[OpRecord]) -> Option<usize> {
    let finite: HashMap<u64, bool> = records
        .iter()
        .map(|record| (record.seq, record.is_finite()))
        .collect();
    let mut earlier_finite = true;
    for (index, record) in records.iter().enumerate() {
        if !record.is_finite() {
            let caused = match &record.producers {
                Some(producers) => producers
                    .iter()
                    .flatten()
                    .all(|seq| finite.get(seq).copied().unwrap_or(true)),
                None => earlier_finite,
            };
            if caused {
                return Some(index);
            }
            earlier_finite = false;
        }
    }
    None
}
