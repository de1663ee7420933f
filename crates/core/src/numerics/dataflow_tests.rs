//! Runs paired along their dataflow: composite ops against their decompositions, inserted and
//! removed ops, autotune's repeats, and what "its inputs agreed" means.

use super::*;

/// A small program written record by record: each op reads earlier records' outputs (or an
/// input no recorded op made) and makes one f32 tensor of its values.
#[derive(Default)]
struct Program {
    records: Vec<OpRecord>,
    step: u64,
}

impl Program {
    /// Records `op` reading `inputs` (seqs, `None` for a parameter), making `values` of
    /// `shape`; returns its seq.
    fn op(&mut self, op: &str, inputs: &[Option<u64>], shape: &[usize], values: &[f32]) -> u64 {
        self.op_typed(op, inputs, Fingerprint::of(values, shape))
    }

    fn op_typed(&mut self, op: &str, inputs: &[Option<u64>], output: Fingerprint) -> u64 {
        let seq = self.records.len() as u64;
        let input_shapes = inputs
            .iter()
            .map(|input| match input {
                Some(seq) => self.records[*seq as usize].outputs[0].shape.clone(),
                None => vec![4],
            })
            .collect();
        self.records.push(OpRecord {
            seq,
            step: self.step,
            thread: "main".into(),
            op: op.into(),
            phase: "forward".into(),
            call_site: None,
            input_shapes,
            producers: Some(inputs.to_vec()),
            outputs: vec![output],
        });
        seq
    }

    fn source(&mut self, values: &[f32]) -> u64 {
        self.op("float_from_data", &[], &[values.len()], values)
    }
}

fn scaled(values: &[f32], by: f32) -> Vec<f32> {
    values.iter().map(|x| x * by).collect()
}

const X: [f32; 4] = [0.5, -1.0, 2.0, -0.25];
const W: [f32; 4] = [0.3, 0.7, -0.2, 0.9];

/// Unfused Burn runs `linear` and `relu` as backend ops; fused, the same program reaches the
/// fusion server as `matmul, reshape, add` and `lower_equal_elem, mask_fill`. The tensors
/// between them pair, the ops inside each are the pair's region, and the runs agree with every
/// record paired or inside a region.
#[test]
fn a_composite_op_pairs_with_its_decomposition_as_one_region() {
    let y: Vec<f32> = X.iter().zip(W).map(|(x, w)| x * w + 0.1).collect();
    let relu: Vec<f32> = y.iter().map(|y| y.max(0.0)).collect();
    let mut unfused = Program::default();
    let (x, w) = (unfused.source(&X), unfused.source(&W));
    let linear = unfused.op("linear", &[Some(x), Some(w), None], &[4], &y);
    let relu_out = unfused.op("relu", &[Some(linear)], &[4], &relu);
    unfused.op("float_sum", &[Some(relu_out)], &[1], &[relu.iter().sum()]);

    let mut fused = Program::default();
    let (x, w) = (fused.source(&X), fused.source(&W));
    let product: Vec<f32> = X.iter().zip(W).map(|(x, w)| x * w).collect();
    let matmul = fused.op("float_matmul", &[Some(x), Some(w)], &[1, 4], &product);
    let reshaped = fused.op("float_reshape", &[Some(matmul)], &[4], &product);
    let add = fused.op("float_add", &[Some(reshaped), None], &[4], &y);
    let mask = fused.op_typed(
        "float_lower_equal_elem",
        &[Some(add)],
        Fingerprint::of(&y.iter().map(|&y| y <= 0.0).collect::<Vec<_>>(), &[4]),
    );
    let filled = fused.op("float_mask_fill", &[Some(add), Some(mask)], &[4], &relu);
    fused.op("float_sum", &[Some(filled)], &[1], &[relu.iter().sum()]);

    let comparison = compare(&unfused.records, &fused.records, Tolerance::default());
    assert!(comparison.agrees(), "{:?}", comparison.culprit);
    let alignment = &comparison.alignment;
    assert_eq!(alignment.pairs, [(0, 0), (1, 1), (2, 4), (3, 6), (4, 7)]);
    assert_eq!(alignment.regions[2].current, [2, 3], "matmul, reshape");
    assert_eq!(alignment.regions[3].current, [5], "the mask");
    assert_eq!(alignment.covered(), [5, 8]);
    assert!(alignment.only_reference.is_empty() && alignment.only_current.is_empty());
}

/// The same decomposition wrong on the fused side (its add off by 1e-3): the culprit is the
/// region, named with both sides' ops, its inputs shown paired and agreeing.
#[test]
fn a_wrong_decomposition_is_the_culprit_named_by_both_sides() {
    let y: Vec<f32> = X.iter().zip(W).map(|(x, w)| x * w + 0.1).collect();
    let mut unfused = Program::default();
    let (x, w) = (unfused.source(&X), unfused.source(&W));
    let linear = unfused.op("linear", &[Some(x), Some(w)], &[4], &y);
    unfused.op("float_exp", &[Some(linear)], &[4], &y.map_exp());

    let mut fused = Program::default();
    let (x, w) = (fused.source(&X), fused.source(&W));
    let product: Vec<f32> = X.iter().zip(W).map(|(x, w)| x * w).collect();
    let matmul = fused.op("float_matmul", &[Some(x), Some(w)], &[4], &product);
    let wrong = scaled(&y, 1.0 + 1e-3);
    let add = fused.op("float_add_scalar", &[Some(matmul)], &[4], &wrong);
    fused.op("float_exp", &[Some(add)], &[4], &wrong.map_exp());

    let comparison = compare(&unfused.records, &fused.records, Tolerance::default());
    let culprit = comparison.culprit.expect("diverged");
    assert!(culprit.inputs_agreed);
    assert_eq!(comparison.alignment.pairs[culprit.pair], (2, 3));
    assert_eq!(comparison.propagators, 1, "the exp after it");
    let text = render(&comparison, &unfused.records, &fused.records, 5);
    assert!(
        text.contains(
            "culprit: step 0, linear before, float_matmul, float_add_scalar after (seq 2 before, 3 after)"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "  input: float_from_data seq 0 before, float_from_data seq 0 after: identical"
        ),
        "{text}"
    );
    assert!(text.contains("(abs "), "how much: {text}");
}

trait MapExp {
    fn map_exp(&self) -> Vec<f32>;
}

impl MapExp for Vec<f32> {
    fn map_exp(&self) -> Vec<f32> {
        self.iter().map(|x| x.exp()).collect()
    }
}

/// A model whose forward, backward and optimizer update read the activation: `h = x * w`,
/// `a = tanh(h)` (times 1.001 in the changed program, an op only it has), `out = a * w`, and
/// Adam-like ops after it: `v = out * out * 1e-5` (small), `sqrt(v)`.
fn model(changed: bool, removed: bool) -> Vec<OpRecord> {
    let mut p = Program::default();
    let (x, w) = (p.source(&X), p.source(&W));
    let h: Vec<f32> = X.iter().zip(W).map(|(x, w)| x * w).collect();
    let h_seq = p.op("float_mul", &[Some(x), Some(w)], &[4], &h);
    let mut a: Vec<f32> = h.iter().map(|h| h.tanh()).collect();
    let mut a_seq = p.op("float_tanh", &[Some(h_seq)], &[4], &a);
    if changed {
        a = scaled(&a, 1.001);
        a_seq = p.op("float_mul_scalar", &[Some(a_seq)], &[4], &a);
    }
    if !removed {
        let o: Vec<f32> = a.iter().zip(W).map(|(a, w)| a * w).collect();
        a_seq = p.op("float_mul", &[Some(a_seq), Some(w)], &[4], &o);
        a = o;
    }
    let v: Vec<f32> = a.iter().map(|o| o * o * 1e-5).collect();
    let v_seq = p.op("float_mul_scalar", &[Some(a_seq)], &[4], &v);
    let root: Vec<f32> = v.iter().map(|v| v.sqrt()).collect();
    p.op("float_sqrt", &[Some(v_seq)], &[4], &root);
    p.records
}

/// An op inserted in the current program (an activation times 1.001): its region, the op after
/// it of the reference's name, is the culprit, not the square root of Adam's small second
/// moments that "agreed" within the absolute tolerance.
#[test]
fn an_inserted_op_is_inside_the_culprits_region() {
    let reference = model(false, false);
    let current = model(true, false);
    let comparison = compare(&reference, &current, Tolerance::default());
    let culprit = comparison.culprit.expect("diverged");
    assert!(culprit.inputs_agreed);
    let (a, b) = comparison.alignment.pairs[culprit.pair];
    assert_eq!(
        (reference[a].op.as_str(), current[b].op.as_str()),
        ("float_mul", "float_mul")
    );
    assert_eq!(reference[a].seq, 4, "the mul after the activation");
    assert_eq!(
        comparison.alignment.regions[culprit.pair].current,
        [4],
        "the inserted op"
    );
    let text = render(&comparison, &reference, &current, 5);
    assert!(
        text.contains("culprit: step 0, float_mul before, float_mul_scalar, float_mul after"),
        "{text}"
    );
    assert!(comparison.alignment.only_current.is_empty());
}

/// The same for an op the current program removed: the reference's region holds it.
#[test]
fn a_removed_op_is_inside_the_culprits_region() {
    let reference = model(true, false);
    let current = model(false, false);
    let comparison = compare(&reference, &current, Tolerance::default());
    let culprit = comparison.culprit.expect("diverged");
    assert!(culprit.inputs_agreed);
    let (a, _) = comparison.alignment.pairs[culprit.pair];
    assert_eq!(reference[a].op, "float_mul");
    assert_eq!(comparison.alignment.regions[culprit.pair].reference, [4]);
}

/// An op removed whose consumer has another name and shape-compatible output: the region is
/// still the removed op's, the first to diverge.
#[test]
fn an_op_removed_before_ops_of_other_names_is_still_the_first_region() {
    let reference = model(false, false);
    let current = model(false, true);
    let comparison = compare(&reference, &current, Tolerance::default());
    let culprit = comparison.culprit.expect("diverged");
    let (a, b) = comparison.alignment.pairs[culprit.pair];
    assert_eq!(
        (reference[a].seq, current[b].seq),
        (5, 4),
        "v, with the mul in its region"
    );
    assert_eq!(comparison.alignment.regions[culprit.pair].reference, [4]);
}

/// Small tensors do not agree by the absolute tolerance: a tensor near 1e-5 that moved by half
/// is within `atol`, but its square root, which scales the difference up, diverged. The
/// culprit is the op that moved the small tensor (its inputs agreed), not the square root
/// whose input "agreed" within `atol`.
#[test]
fn a_small_tensor_within_the_absolute_tolerance_is_not_an_agreeing_input() {
    let reference = model(false, false);
    let values = model_values();
    let mut current = model(false, false);
    current[5].outputs[0] = Fingerprint::of(&scaled(&values[5], 1.5), &[4]);
    current[6].outputs[0] = Fingerprint::of(&scaled(&values[6], 1.5f32.sqrt()), &[4]);
    let comparison = compare(&reference, &current, Tolerance::default());
    assert_eq!(
        comparison.pairs[5].agreement,
        Agreement::WithinTolerance,
        "half of 1e-5 is within atol"
    );
    assert_eq!(comparison.pairs[6].agreement, Agreement::Diverged);
    let culprit = comparison.culprit.expect("the root diverged");
    assert_eq!(
        comparison.pairs[culprit.pair].reference, 5,
        "the small tensor's op"
    );
    assert!(culprit.inputs_agreed && culprit.moved_within_tolerance);
    let text = render(&comparison, &reference, &current, 5);
    assert!(
        text.contains("culprit: step 0, float_mul_scalar (seq 5 before, 5 after)"),
        "{text}"
    );
    assert!(
        text.contains("moved beyond their own magnitude's"),
        "{text}"
    );
}

/// The values of [`model`]'s records, unchanged, by seq.
fn model_values() -> Vec<Vec<f32>> {
    let h: Vec<f32> = X.iter().zip(W).map(|(x, w)| x * w).collect();
    let a: Vec<f32> = h.iter().map(|h| h.tanh()).collect();
    let o: Vec<f32> = a.iter().zip(W).map(|(a, w)| a * w).collect();
    let v: Vec<f32> = o.iter().map(|o| o * o * 1e-5).collect();
    let root: Vec<f32> = v.iter().map(|v| v.sqrt()).collect();
    vec![X.to_vec(), W.to_vec(), h, a, o, v, root]
}

/// Autotune runs a kernel's candidates on the real inputs: the same op on the same producers,
/// repeated, outputs read by no op. They are repeats, not ops only one run has, and the op
/// after them pairs with its own.
#[test]
fn autotunes_trial_runs_are_repeats_and_shift_nothing() {
    let reference = model(false, false);
    let mut current = Program::default();
    let (x, w) = (current.source(&X), current.source(&W));
    let h: Vec<f32> = X.iter().zip(W).map(|(x, w)| x * w).collect();
    for _ in 0..3 {
        current.op("float_mul", &[Some(x), Some(w)], &[4], &h);
    }
    let h_seq = current.op("float_mul", &[Some(x), Some(w)], &[4], &h);
    let rest = &reference[3..];
    for record in rest {
        let producers = record.producers.as_ref().expect("linked");
        let inputs: Vec<Option<u64>> = producers
            .iter()
            .map(|seq| {
                seq.map(|seq| {
                    if seq == 2 {
                        h_seq
                    } else if seq > 2 {
                        seq + 3
                    } else {
                        seq
                    }
                })
            })
            .collect();
        current.op_typed(&record.op, &inputs, record.outputs[0].clone());
    }
    let comparison = compare(&reference, &current.records, Tolerance::default());
    assert!(comparison.agrees(), "{:?}", comparison.culprit);
    assert_eq!(comparison.counts(), [reference.len(), 0, 0]);
    assert_eq!(comparison.alignment.repeats_current, [2, 3, 4]);
    assert_eq!(
        comparison.alignment.pairs[2],
        (2, 5),
        "the mul that was read"
    );
    let text = render(&comparison, &reference, &current.records, 5);
    assert!(
        text.contains("repeats: 0 records before, 3 after"),
        "{text}"
    );
}

/// Steps pair apart; a record of step 1 never pairs with one of step 0, however alike.
#[test]
fn records_pair_within_their_step() {
    let mut a = Program::default();
    let x = a.source(&X);
    a.op("float_exp", &[Some(x)], &[4], &X);
    a.step = 1;
    a.op("float_exp", &[Some(x)], &[4], &X);
    let mut b = Program::default();
    let x = b.source(&X);
    b.step = 1;
    b.op("float_exp", &[Some(x)], &[4], &X);
    let alignment = align(&a.records, &b.records);
    assert_eq!(alignment.pairs, [(0, 0), (2, 1)]);
    assert_eq!(alignment.only_reference, [1]);
}

/// Where the runs agree the pairing stays near linear: 200k linked records in one step pair
/// one to one, fast enough for a debug build.
#[test]
fn a_long_linked_run_pairs_one_to_one() {
    let print = Fingerprint::of(&[0.5f32, -1.0, 2.0, 0.25], &[4]);
    let records: Vec<OpRecord> = (0..200_000u64)
        .map(|seq| OpRecord {
            seq,
            step: 0,
            thread: "main".into(),
            op: ["float_exp", "float_mul", "float_add"][(seq % 3) as usize].into(),
            phase: "forward".into(),
            call_site: None,
            input_shapes: vec![vec![4]],
            producers: Some(vec![seq.checked_sub(1)]),
            outputs: vec![print.clone()],
        })
        .collect();
    let started = std::time::Instant::now();
    let alignment = align(&records, &records);
    assert_eq!(alignment.pairs.len(), 200_000);
    assert!(alignment.pairs.iter().all(|&(a, b)| a == b));
    assert!(
        started.elapsed().as_secs() < 10,
        "took {:?}",
        started.elapsed()
    );
}

/// A later op that reads a tensor inside a region (the backward reading the forward's
/// `linear`, whose bias one run did not link) leads back to that region's pair: when the
/// region's output moved within the absolute tolerance (a small tensor) and the later op
/// diverged, the culprit is the region, whose inputs agreed, not the later op.
#[test]
fn an_op_reading_inside_a_region_leads_back_to_the_regions_pair() {
    let y = [1.0f32, -0.5, 2.0, 0.75];
    let small = scaled(&y, 1e-3);
    let doubled = scaled(&y, 2.0);

    let mut fused = Program::default();
    let (x, w, b) = (fused.source(&X), fused.source(&W), fused.source(&[0.1; 4]));
    let product: Vec<f32> = y.iter().map(|y| y - 0.1).collect();
    let matmul = fused.op("float_matmul", &[Some(x), Some(w)], &[1, 4], &product);
    let reshaped = fused.op("float_reshape", &[Some(matmul)], &[4], &product);
    let add = fused.op("float_add", &[Some(reshaped), Some(b)], &[4], &y);
    let s = fused.op("float_mul_scalar", &[Some(add)], &[4], &small);
    fused.op("float_sum", &[Some(s)], &[1], &[small.iter().sum()]);
    let reads_inside = fused.op("float_mul_scalar", &[Some(add)], &[4], &doubled);
    fused.op(
        "float_sum",
        &[Some(reads_inside)],
        &[1],
        &[doubled.iter().sum()],
    );
    // The matmul's and the reshape's outputs stayed in the fused block's registers.
    for seq in [matmul, reshaped] {
        fused.records[seq as usize].outputs.clear();
    }

    let wrong = scaled(&y, 1.001);
    let mut unfused = Program::default();
    let (x, w, _) = (
        unfused.source(&X),
        unfused.source(&W),
        unfused.source(&[0.1; 4]),
    );
    let linear = unfused.op("linear", &[Some(x), Some(w)], &[4], &wrong);
    let small = scaled(&wrong, 1e-3);
    let s = unfused.op("float_mul_scalar", &[Some(linear)], &[4], &small);
    unfused.op("float_sum", &[Some(s)], &[1], &[small.iter().sum()]);
    let doubled = scaled(&wrong, 2.0);
    let g = unfused.op("float_mul_scalar", &[Some(linear)], &[4], &doubled);
    unfused.op("float_sum", &[Some(g)], &[1], &[doubled.iter().sum()]);

    let (reference, current) = (fused.records, unfused.records);
    let comparison = compare(&reference, &current, Tolerance::default());
    let text = render(&comparison, &reference, &current, 5);
    let culprit = comparison.culprit.expect("the doubled tensor diverged");
    let (a, b) = comparison.alignment.pairs[culprit.pair];
    assert!(
        culprit.inputs_agreed && culprit.moved_within_tolerance,
        "{text}"
    );
    let region = &comparison.alignment.regions[culprit.pair];
    let linear_in_it = current[b].seq == linear || region.current.contains(&(linear as usize));
    assert!(linear_in_it, "the linear's region is the culprit: {text}");
    assert_ne!(
        reference[a].seq, reads_inside,
        "not the op that read inside the region: {text}"
    );
}
