//! Two runs' numerics compared: each aligned op's outputs identical, within a tolerance, or
//! diverged; the **culprit** (the first diverged op whose inputs agreed) and the
//! **propagators** (the diverged ops after it); and the first op that made a NaN or an Inf.

use rustc_hash::FxHashMap as HashMap;

use super::fingerprint::WEIGHT_PERIOD;
use super::{Alignment, Fingerprint, OpRecord, align};

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
    /// Whether its inputs agreed (their producers aligned and not diverged). `false` when no
    /// diverged op had agreeing inputs (a producer only one run has): the culprit is then the
    /// first diverged op.
    pub inputs_agreed: bool,
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

/// Compares two runs' records (each in its file's order): aligns them per step, compares each
/// aligned op's outputs, and names the culprit and counts its propagators.
///
/// An op's inputs agreed when every producer its record links (on both sides) is aligned and
/// did not diverge (an input no recorded op produced is taken as agreeing); when either
/// side's record has no links, when no earlier op of its step diverged.
pub fn compare(reference: &[OpRecord], current: &[OpRecord], tolerance: Tolerance) -> Comparison {
    let alignment = align(reference, current);
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
    let mut diverged = pairs
        .iter()
        .enumerate()
        .filter(|(_, pair)| pair.agreement == Agreement::Diverged)
        .map(|(index, _)| index)
        .peekable();
    let culprit = match diverged.peek() {
        None => None,
        Some(&first) => {
            let links = Links::new(reference, current, &pairs);
            let agreed = (first..pairs.len())
                .filter(|&index| pairs[index].agreement == Agreement::Diverged)
                .find(|&index| links.inputs_agreed(index));
            Some(match agreed {
                Some(pair) => Culprit {
                    pair,
                    inputs_agreed: true,
                },
                None => Culprit {
                    pair: first,
                    inputs_agreed: false,
                },
            })
        }
    };
    let propagators = culprit.map_or(0, |culprit| {
        diverged.filter(|&index| index > culprit.pair).count()
    });
    Comparison {
        tolerance,
        pairs,
        alignment,
        culprit,
        propagators,
    }
}

/// What is known of each op's producers on both sides.
struct Links<'a> {
    reference: &'a [OpRecord],
    current: &'a [OpRecord],
    pairs: &'a [Pair],
    /// By `seq`, each side's record's pair, if aligned (`None`).
    reference_pairs: HashMap<u64, Option<usize>>,
    current_pairs: HashMap<u64, Option<usize>>,
}

impl<'a> Links<'a> {
    fn new(reference: &'a [OpRecord], current: &'a [OpRecord], pairs: &'a [Pair]) -> Self {
        let side = |records: &[OpRecord], of: fn(&Pair) -> usize| {
            let mut by_seq: HashMap<u64, Option<usize>> =
                records.iter().map(|record| (record.seq, None)).collect();
            for (index, pair) in pairs.iter().enumerate() {
                by_seq.insert(records[of(pair)].seq, Some(index));
            }
            by_seq
        };
        Links {
            reference,
            current,
            pairs,
            reference_pairs: side(reference, |pair| pair.reference),
            current_pairs: side(current, |pair| pair.current),
        }
    }

    fn inputs_agreed(&self, index: usize) -> bool {
        let pair = &self.pairs[index];
        let (ours, theirs) = (&self.reference[pair.reference], &self.current[pair.current]);
        match (&ours.producers, &theirs.producers) {
            (Some(a), Some(b)) => {
                self.producers_agreed(a, &self.reference_pairs)
                    && self.producers_agreed(b, &self.current_pairs)
            }
            // No links: every earlier op of the step is a possible producer.
            // (Back to the step's start or its last divergence: linear over all ops checked.)
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
    ) -> bool {
        producers.iter().flatten().all(|seq| match by_seq.get(seq) {
            // A producer the file does not hold: taken as an input from outside, like a parameter.
            None => true,
            Some(None) => false,
            Some(Some(pair)) => self.pairs[*pair].agreement != Agreement::Diverged,
        })
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
