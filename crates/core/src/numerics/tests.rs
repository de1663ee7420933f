//! The file format pinned, hostile files refused, the alignment and the verdict.

use std::path::Path;

use super::file::{read_from, to_text};
use super::*;

const OPS: [&str; 5] = [
    "float_exp",
    "float_mul",
    "float_tanh",
    "float_add",
    "float_matmul",
];

/// A program of `count` ops in a chain (each consumes the one before), on 64 elements, with
/// the output of op `perturbed` (if any) scaled by `1 + 1e-3`, as a wrong kernel would.
pub(crate) fn chain(
    step: u64,
    count: usize,
    perturbed: Option<usize>,
    linked: bool,
) -> Vec<OpRecord> {
    let mut data: Vec<f32> = (0..64).map(|i| ((i as f32) * 0.1).sin()).collect();
    (0..count)
        .map(|index| {
            data = data
                .iter()
                .map(|&x| match index % 5 {
                    0 => (x * 0.5).exp() - 1.0,
                    1 => x * 1.5,
                    2 => x.tanh(),
                    3 => x + 0.25,
                    _ => x * 0.75 - 0.1,
                })
                .collect();
            if perturbed == Some(index) {
                data.iter_mut().for_each(|x| *x *= 1.0 + 1e-3);
            }
            let seq = step * 1000 + index as u64;
            OpRecord {
                seq,
                step,
                thread: "main".into(),
                op: OPS[index % 5].into(),
                phase: "forward".into(),
                call_site: Some(format!("src/model.rs:{}", 10 + index)),
                input_shapes: vec![vec![8, 8]],
                producers: linked.then(|| vec![index.checked_sub(1).map(|_| seq - 1)]),
                outputs: vec![Fingerprint::of(&data, &[8, 8])],
            }
        })
        .collect()
}

fn read_text(text: &str) -> Result<Vec<OpRecord>, NumericsError> {
    read_from(Path::new("run/numerics.jsonl"), text.as_bytes())
}

/// `numerics.jsonl` is read by other programs (Python's `json`, line by line): this holds it
/// field for field. A change that fails this test is a new format version
/// (`formats::NUMERICS_FORMAT_VERSION`), not an edit of the expected text.
#[test]
fn the_numerics_file_is_pinned_field_for_field() {
    let records = vec![
        OpRecord {
            seq: 0,
            step: 0,
            thread: "main".into(),
            op: "float_log".into(),
            phase: "forward".into(),
            call_site: Some("src/model.rs:42".into()),
            input_shapes: vec![vec![2, 2]],
            producers: Some(vec![None]),
            outputs: vec![Fingerprint::of(
                &[0.5f32, f32::NAN, -1.25, f32::INFINITY],
                &[2, 2],
            )],
        },
        OpRecord {
            seq: 1,
            step: 0,
            thread: "main".into(),
            op: "argmax".into(),
            phase: "-".into(),
            call_site: None,
            input_shapes: vec![vec![2, 2]],
            producers: None,
            outputs: vec![Fingerprint::of::<i64>(&[], &[0])],
        },
    ];
    let expected = concat!(
        "{\"format\":\"burn-profiled-numerics\",\"version\":1}\n",
        "{\"seq\":0,\"step\":0,\"thread\":\"main\",\"op\":\"float_log\",\"phase\":\"forward\",",
        "\"call_site\":\"src/model.rs:42\",\"input_shapes\":[[2,2]],\"producers\":[null],",
        "\"outputs\":[{\"dtype\":\"f32\",\"shape\":[2,2],\"elements\":4,\"nan\":1,\"pos_inf\":1,",
        "\"neg_inf\":0,\"min\":-1.25,\"max\":0.5,\"sum\":-0.75,\"sum_squares\":1.8125,",
        "\"sum_abs\":1.75,\"weighted_sum\":-3.25}]}\n",
        "{\"seq\":1,\"step\":0,\"thread\":\"main\",\"op\":\"argmax\",\"phase\":\"-\",",
        "\"call_site\":null,\"input_shapes\":[[2,2]],\"producers\":null,",
        "\"outputs\":[{\"dtype\":\"i64\",\"shape\":[0],\"elements\":0,\"nan\":0,\"pos_inf\":0,",
        "\"neg_inf\":0,\"min\":null,\"max\":null,\"sum\":0.0,\"sum_squares\":0.0,",
        "\"sum_abs\":0.0,\"weighted_sum\":0.0}]}\n",
    );
    assert_eq!(
        to_text(&records),
        expected,
        "the format changed: a new version"
    );
    assert_eq!(
        read_text(expected).expect("reads back"),
        records,
        "a round trip loses nothing"
    );
}

/// Identical means bit for bit: a sum must read back to the same bits, and a sum past f64
/// (an f64 tensor of huge values) must read back as the infinity it was, not `null`.
#[test]
fn every_statistic_reads_back_to_the_same_bits() {
    let mut records = chain(0, 5, None, true);
    records[0]
        .outputs
        .push(Fingerprint::of(&[1e300f64, 1e300, 0.1 + 0.2], &[3]));
    let back = read_text(&to_text(&records)).expect("reads back");
    assert!(back.iter().zip(&records).all(|(a, b)| {
        a.outputs
            .iter()
            .zip(&b.outputs)
            .all(|(x, y)| x.bit_equal(y))
    }));
    assert_eq!(back[0].outputs[1].sum_squares, f64::INFINITY);
}

fn refused(text: &str) -> String {
    match read_text(text) {
        Ok(records) => panic!("read {} records from a bad file", records.len()),
        Err(error) => error.to_string(),
    }
}

/// A file cut short (a run killed while writing, a copy interrupted) must not compare as a
/// run with fewer ops: the last line without its end of line is refused, by line.
#[test]
fn a_truncated_file_is_refused_naming_the_file_and_line() {
    let text = to_text(&chain(0, 3, None, true));
    let message = refused(&text[..text.len() - 20]);
    assert!(
        message.starts_with("run/numerics.jsonl: line 4: cut short"),
        "{message}"
    );
}

/// Another version's fields may mean other things: refuse it and say which version.
#[test]
fn another_version_is_refused_with_both_versions() {
    let text = to_text(&chain(0, 2, None, true)).replacen("\"version\":1", "\"version\":2", 1);
    let message = refused(&text);
    assert!(message.contains("run/numerics.jsonl: line 1: numerics format version 2 (this burn-profiled reads version 1)"), "{message}");
}

/// A line that is not JSON, a record missing a field, a file with no header, an empty file
/// and seqs that go back: each refused with the file and line.
#[test]
fn malformed_lines_are_refused_naming_the_line() {
    let good = to_text(&chain(0, 3, None, true));
    let lines: Vec<&str> = good.lines().collect();
    let with_line_3 = |line: &str| format!("{}\n{}\n{}\n{}\n", lines[0], lines[1], line, lines[3]);
    let cases = [
        (
            with_line_3("not json"),
            "run/numerics.jsonl: line 3: not an op record",
        ),
        (
            with_line_3("{\"seq\":5}"),
            "run/numerics.jsonl: line 3: not an op record: missing field",
        ),
        (
            with_line_3(&lines[1].replace("\"sum\":", "\"sum\":\"lots\",\"x\":")),
            "line 3: not an op record: `lots` is not a number",
        ),
        (
            with_line_3(lines[1]),
            "run/numerics.jsonl: line 3: seq: 0 after 0",
        ),
        (
            lines[1..].join("\n") + "\n",
            "run/numerics.jsonl: not a burn-profiled numerics file: line 1 is not a header",
        ),
        (
            String::new(),
            "run/numerics.jsonl: not a burn-profiled numerics file: the file is empty",
        ),
        (
            "{\"format\":\"other\",\"version\":1}\n".into(),
            "format `other`",
        ),
    ];
    for (text, expected) in cases {
        let message = refused(&text);
        assert!(
            message.contains(expected),
            "expected `{expected}` in: {message}"
        );
    }
}

/// A record of step 0 whose tensor inputs (one per producer, of `input_shape`) were made by
/// `producers`, with one `output`.
fn linked(
    seq: u64,
    op: &str,
    producers: Vec<Option<u64>>,
    input_shape: &[usize],
    output: Fingerprint,
) -> OpRecord {
    OpRecord {
        seq,
        step: 0,
        thread: "main".into(),
        op: op.into(),
        phase: "forward".into(),
        call_site: None,
        input_shapes: vec![input_shape.to_vec(); producers.len()],
        producers: Some(producers),
        outputs: vec![output],
    }
}

fn ops(names: &[&str]) -> Vec<OpRecord> {
    let mut records = chain(0, names.len(), None, false);
    for (record, name) in records.iter_mut().zip(names) {
        record.op = (*name).into();
    }
    records
}

/// An op the current run added (a cast a rewrite inserted) must not shift every later op onto
/// the wrong partner: the ops around it stay aligned.
#[test]
fn an_inserted_op_leaves_the_others_aligned() {
    let alignment = align(
        &ops(&["a", "b", "c", "d"]),
        &ops(&["a", "b", "cast", "c", "d"]),
    );
    assert_eq!(alignment.pairs, vec![(0, 0), (1, 1), (2, 3), (3, 4)]);
    assert_eq!(
        (alignment.only_reference, alignment.only_current),
        (vec![], vec![2])
    );
}

/// The same for an op the current run removed (two ops fused into one).
#[test]
fn a_removed_op_leaves_the_others_aligned() {
    let alignment = align(&ops(&["a", "b", "c", "d"]), &ops(&["a", "c", "d"]));
    assert_eq!(alignment.pairs, vec![(0, 0), (2, 1), (3, 2)]);
    assert_eq!(
        (alignment.only_reference, alignment.only_current),
        (vec![1], vec![])
    );
}

/// Steps are aligned separately: an op of step 1 is never matched with one of step 0, and a
/// step only one run has is reported.
#[test]
fn steps_are_aligned_apart_and_a_missing_step_is_reported() {
    let reference = [chain(0, 5, None, true), chain(1, 5, None, true)].concat();
    let current = [chain(1, 5, None, true), chain(2, 5, None, true)].concat();
    let alignment = align(&reference, &current);
    assert_eq!(
        alignment.pairs,
        (0..5).map(|i| (5 + i, i)).collect::<Vec<_>>()
    );
    assert_eq!(
        (alignment.steps_only_reference, alignment.steps_only_current),
        (vec![0], vec![2])
    );
}

/// Where the runs agree, the alignment must stay linear: 200k identical ops in one step
/// align pair for pair, fast enough for a debug build.
#[test]
fn a_long_identical_run_aligns_one_to_one() {
    let names: Vec<&str> = (0..200_000).map(|i| OPS[i % 5]).collect();
    let records = ops(&names[..50]);
    let big: Vec<OpRecord> = (0..200_000u64)
        .map(|i| OpRecord {
            seq: i,
            op: names[i as usize].into(),
            ..records[0].clone()
        })
        .collect();
    let started = std::time::Instant::now();
    let alignment = align(&big, &big);
    assert_eq!(alignment.pairs.len(), 200_000);
    assert!(alignment.pairs.iter().all(|&(a, b)| a == b));
    assert!(
        started.elapsed().as_secs() < 10,
        "took {:?}",
        started.elapsed()
    );
}

/// The program run twice is identical, op for op: no culprit, the runs agree.
#[test]
fn the_same_program_twice_is_identical() {
    let comparison = compare(
        &chain(0, 30, None, true),
        &chain(0, 30, None, true),
        Tolerance::default(),
    );
    assert!(comparison.agrees());
    assert_eq!(comparison.counts(), [30, 0, 0]);
}

/// The case: one op's output off by 1e-3 relative in a chain of 30. The culprit is
/// that op (its input agreed, its output did not), not the first op of the list nor the
/// last; every op after it only carried the difference on. With links and without.
#[test]
fn the_perturbed_op_is_the_culprit_and_the_ops_after_it_are_propagators() {
    for linked in [true, false] {
        let comparison = compare(
            &chain(0, 30, None, linked),
            &chain(0, 30, Some(12), linked),
            Tolerance::default(),
        );
        let culprit = comparison.culprit.expect("the runs diverge");
        assert_eq!(
            (culprit.pair, culprit.inputs_agreed),
            (12, true),
            "linked: {linked}"
        );
        assert_eq!(comparison.propagators, 17, "linked: {linked}");
        assert_eq!(comparison.counts(), [12, 0, 18]);
        let stats: Vec<&str> = comparison.pairs[12]
            .differences
            .iter()
            .map(|diff| diff.stat)
            .collect();
        assert!(stats.contains(&"max") && stats.contains(&"l2"), "{stats:?}");
    }
}

/// With links, the culprit is the earliest diverged op whose inputs agreed: an op the current
/// run names otherwise but that made the same tensor is paired with the reference's (a region),
/// so the op after it, fed by it and diverged, is the culprit, not the later perturbed op; an
/// op renamed whose output differs is itself the culprit, as a region named by both sides.
#[test]
fn the_earliest_diverged_op_whose_inputs_agreed_is_the_culprit_through_renamed_ops() {
    let reference = chain(0, 10, None, true);
    let mut current = chain(0, 10, Some(6), true);
    current[3].op = "fused".into();
    current[4].outputs[0].sum += 1.0;
    let comparison = compare(&reference, &current, Tolerance::default());
    let culprit = comparison.culprit.expect("diverged");
    let record = &reference[comparison.pairs[culprit.pair].reference];
    assert_eq!((record.seq, culprit.inputs_agreed), (4, true));
    assert_eq!(
        comparison.alignment.pairs.len(),
        10,
        "the renamed op is paired"
    );

    let mut current = chain(0, 10, None, true);
    current[3].op = "fused".into();
    current[3].outputs[0].sum += 1.0;
    let comparison = compare(&reference, &current, Tolerance::default());
    let culprit = comparison.culprit.expect("diverged");
    let record = &reference[comparison.pairs[culprit.pair].reference];
    assert_eq!((record.seq, culprit.inputs_agreed), (3, true));
    let text = render(&comparison, &reference, &current, 3);
    assert!(
        text.contains("culprit: step 0, float_add before, fused after (seq 3 before, 3 after)"),
        "{text}"
    );
}

/// Within tolerance is not identical: a difference of 1e-7 relative agrees under the default
/// tolerance, and is reported as such.
#[test]
fn a_tiny_difference_is_within_tolerance_not_identical() {
    let reference = chain(0, 5, None, true);
    let mut current = reference.clone();
    current[2].outputs[0].sum *= 1.0 + 1e-9;
    let comparison = compare(&reference, &current, Tolerance::default());
    assert!(comparison.agrees());
    assert_eq!(comparison.counts(), [4, 1, 0]);
}

/// A NaN count that differs is a divergence whatever the tolerance.
#[test]
fn nan_counts_are_compared_exactly() {
    let a = Fingerprint::of(&[1.0f32, 2.0], &[2]);
    let b = Fingerprint::of(&[1.0f32, f32::NAN], &[2]);
    let loose = Tolerance {
        rtol: 1e9,
        atol: 1e9,
    };
    let (agreement, differences) = compare_outputs(&[a], &[b], loose);
    assert_eq!(agreement, Agreement::Diverged);
    assert_eq!(differences[0].stat, "nan");
}

/// `check_finite` names the op that made the NaN, not the ones it poisoned after it.
#[test]
fn the_first_non_finite_op_is_the_producer_of_the_nan() {
    let mut records = chain(0, 10, None, true);
    for record in &mut records[4..] {
        record.outputs[0].nan = 3;
    }
    assert_eq!(first_non_finite(&records), Some(4));
    assert_eq!(first_non_finite(&chain(0, 10, None, true)), None);
    // Recorded out of causal order (a backward op written before its producer's record):
    // the links still name the producer.
    records.swap(4, 5);
    assert_eq!(records[4].seq, 5);
    records[4].seq = 4;
    records[5].seq = 5;
    records[4].producers = Some(vec![Some(5)]);
    records[5].producers = Some(vec![Some(3)]);
    assert_eq!(first_non_finite(&records), Some(5));
}

proptest::proptest! {
    /// The tolerance is stated per element (as `numpy.isclose`), the comparison sees only
    /// statistics: its bounds must never call two outputs diverged that agree element by
    /// element, or a backend within tolerance would be named a culprit.
    #[test]
    fn outputs_within_tolerance_element_by_element_are_within_tolerance(
        data in proptest::collection::vec(-1e3f64..1e3, 0..300),
        shifts in proptest::collection::vec(-1.0f64..1.0, 300),
        rtol in 1e-8f64..1e-2,
        atol in 0.0f64..1e-3,
    ) {
        // 0.99 of the allowed distance: room for the rounding of the f64 sums.
        let moved: Vec<f64> = data
            .iter()
            .zip(&shifts)
            .map(|(&x, &shift)| x + 0.99 * shift * (atol + rtol * x.abs()))
            .collect();
        let shape = [data.len()];
        let (agreement, differences) = compare_outputs(
            &[Fingerprint::of(&data, &shape)],
            &[Fingerprint::of(&moved, &shape)],
            Tolerance { rtol, atol },
        );
        proptest::prop_assert_ne!(agreement, Agreement::Diverged, "{:?}", differences);
    }
}

/// An op inside a fused block has no observed outputs: it is aligned with the same op of the
/// unfused run, compared with nothing, and neither a divergence nor an agreement bit for bit.
#[test]
fn an_op_whose_outputs_stayed_in_a_fused_block_is_aligned_and_not_compared() {
    let record = |seq, op: &str, outputs: Vec<Fingerprint>| OpRecord {
        seq,
        step: 0,
        thread: "main".into(),
        op: op.into(),
        phase: "forward".into(),
        call_site: None,
        input_shapes: vec![vec![2]],
        producers: None,
        outputs,
    };
    let print = |x: f32| vec![Fingerprint::of(&[x, 1.0], &[2])];
    let unfused = [
        record(0, "float_exp", print(1.0)),
        record(1, "float_tanh", print(2.0)),
        record(2, "float_mul", print(3.0)),
    ];
    let fused = [
        record(0, "float_exp", vec![]),
        record(1, "float_tanh", vec![]),
        record(2, "float_mul", print(3.0)),
    ];
    let comparison = compare(&unfused, &fused, Tolerance::default());
    assert!(comparison.agrees());
    assert_eq!(comparison.counts(), [1, 0, 0]);
    assert_eq!(comparison.not_observed(), 2);
    let text = render(&comparison, &unfused, &fused, 5);
    assert!(
        text.contains("not observed: 2 aligned ops ran inside a fused block in one run"),
        "{text}"
    );
}

/// Two ops of one name on other inputs are not the same op: a fused run that has a reshape
/// the unfused one does not (and the other way round) leaves both unaligned, not compared as
/// a divergence (seen on an H200: `float_reshape` of [8, 25, 4, 4] against one of [1, 16, 16]).
#[test]
fn ops_of_one_name_on_inputs_of_other_shapes_are_not_aligned() {
    let record = |seq, shape: Vec<usize>| OpRecord {
        seq,
        step: 0,
        thread: "main".into(),
        op: "float_reshape".into(),
        phase: "forward".into(),
        call_site: None,
        input_shapes: vec![shape.clone()],
        producers: None,
        outputs: vec![Fingerprint::of(
            &vec![1.0f32; shape.iter().product()],
            &shape,
        )],
    };
    let before = [record(0, vec![8, 25]), record(1, vec![4, 4])];
    let after = [record(0, vec![4, 4])];
    let comparison = compare(&before, &after, Tolerance::default());
    assert!(comparison.agrees());
    assert_eq!(comparison.alignment.pairs, [(1, 0)]);
    assert_eq!(comparison.alignment.only_reference, [0]);
}

/// A backward pass may run two branches in the other order: the reshapes of two matmuls'
/// outputs, same name and shapes, swapped. Aligned in order they would pair each with the
/// other's and report a divergence (seen on an H200, fused against unfused); linked to their
/// producers they pair with their own, and the runs agree.
#[test]
fn ops_swapped_in_order_are_paired_by_the_ops_that_made_their_inputs() {
    let record = |seq, op: &str, producer: Option<u64>, value: f32| {
        linked(
            seq,
            op,
            vec![producer],
            &[4, 4],
            Fingerprint::of(&[value; 16], &[16]),
        )
    };
    let reference = [
        record(0, "float_matmul", None, 1.0),
        record(1, "float_matmul", None, 2.0),
        record(2, "float_reshape", Some(0), 1.0),
        record(3, "float_reshape", Some(1), 2.0),
        record(4, "float_add", Some(2), 3.0),
    ];
    let current = [
        record(10, "float_matmul", None, 1.0),
        record(11, "float_matmul", None, 2.0),
        record(12, "float_reshape", Some(11), 2.0),
        record(13, "float_reshape", Some(10), 1.0),
        record(14, "float_add", Some(13), 3.0),
    ];
    let comparison = compare(&reference, &current, Tolerance::default());
    assert_eq!(
        comparison.alignment.pairs,
        [(0, 0), (1, 1), (2, 3), (3, 2), (4, 4)]
    );
    assert!(comparison.alignment.only_reference.is_empty());
    assert!(comparison.agrees(), "{:?}", comparison.culprit);
    // Unlinked, the same records are paired in order, and diverge.
    let unlinked = |records: &[OpRecord]| -> Vec<OpRecord> {
        let strip = |record: &OpRecord| OpRecord {
            producers: None,
            ..record.clone()
        };
        records.iter().map(strip).collect()
    };
    let blind = compare(
        &unlinked(&reference),
        &unlinked(&current),
        Tolerance::default(),
    );
    assert!(!blind.agrees());
}

/// A pair in order whose inputs came from ops paired with others is refused, even where no
/// producer-matched partner exists: unaligned, not a divergence.
#[test]
fn a_pair_whose_producers_are_paired_elsewhere_is_refused() {
    let record = |seq, op: &str, producers: Vec<Option<u64>>, value: f32| {
        linked(seq, op, producers, &[2], Fingerprint::of(&[value; 2], &[2]))
    };
    let reference = [
        record(0, "float_exp", vec![None], 1.0),
        record(1, "float_log", vec![None], 2.0),
        record(2, "float_neg", vec![Some(0)], 3.0),
    ];
    let current = [
        record(0, "float_exp", vec![None], 1.0),
        record(1, "float_log", vec![None], 2.0),
        record(2, "float_neg", vec![Some(1)], 5.0),
    ];
    let alignment = align(&reference, &current);
    assert_eq!(alignment.pairs, [(0, 0), (1, 1)]);
    assert_eq!(
        (alignment.only_reference, alignment.only_current),
        (vec![2], vec![2])
    );
}

/// Ops without tensor inputs (`float_ones`, `float_zeros`) are told apart by what they made:
/// the gradient's seed of shape [1] is not the ones of shape [4, 8] (seen on lavapipe, fused
/// against unfused, once producers split the alignment).
#[test]
fn ops_without_inputs_are_aligned_by_the_shapes_they_made() {
    let ones = |seq, shape: &[usize]| {
        let made = Fingerprint::of(&vec![1.0f32; shape.iter().product()], shape);
        linked(seq, "float_ones", Vec::new(), &[], made)
    };
    let alignment = align(&[ones(0, &[4, 8]), ones(1, &[1])], &[ones(0, &[1])]);
    assert_eq!(alignment.pairs, [(1, 0)]);
}

/// Fusion runs some ops under other names (`linear_weight_backward` as a `matmul`), and in
/// another order. Two projections of one input, each scaled: in order, the first scale would
/// pair with the second's and diverge; along the dataflow each renamed op pairs with the one
/// that read the same inputs and made the same tensor, and each scale with its own (seen on
/// lavapipe, the train example fused against unfused: 40 false divergences before).
#[test]
fn ops_after_a_renamed_op_are_paired_by_the_ops_before_it() {
    let record = |seq, op: &str, producers: &[u64], value: f32| {
        let producers = producers.iter().map(|&seq| Some(seq)).collect();
        linked(seq, op, producers, &[4], Fingerprint::of(&[value; 4], &[4]))
    };
    let inputs = |_: ()| {
        vec![
            record(0, "float_from_data", &[], 1.0),
            record(1, "float_from_data", &[], 2.0),
            record(2, "float_from_data", &[], 3.0),
        ]
    };
    let mut reference = inputs(());
    reference.extend([
        record(3, "linear_weight_backward", &[0, 1], 4.0),
        record(4, "linear_weight_backward", &[0, 2], 5.0),
        record(5, "float_mul_scalar", &[3], 6.0),
        record(6, "float_mul_scalar", &[4], 7.0),
    ]);
    let mut current = inputs(());
    current.extend([
        record(3, "float_matmul", &[0, 2], 5.0),
        record(4, "float_matmul", &[0, 1], 4.0),
        record(5, "float_mul_scalar", &[3], 7.0),
        record(6, "float_mul_scalar", &[4], 6.0),
    ]);
    let comparison = compare(&reference, &current, Tolerance::default());
    assert!(comparison.agrees(), "{:?}", comparison.culprit);
    assert_eq!(
        comparison.alignment.pairs,
        [(0, 0), (1, 1), (2, 2), (3, 4), (4, 3), (5, 6), (6, 5)]
    );
    assert!(comparison.alignment.only_reference.is_empty());
}

/// Two runs that recorded only values (Burn 0.22), or whose ops did not align (Burn 0.21
/// against 0.22), diverge first at a value: named as such, not as an op's culprit, with no
/// `capture` to suggest (it names op calls).
#[test]
fn a_diverged_value_is_named_as_a_value_not_a_culprit() {
    let value = |seq: u64, name: &str, x: f32| OpRecord {
        seq,
        step: 0,
        thread: "main".into(),
        op: name.into(),
        phase: "-".into(),
        call_site: None,
        input_shapes: Vec::new(),
        producers: Some(Vec::new()),
        outputs: vec![Fingerprint::of(&[x, 2.0], &[2])],
    };
    let before = [value(0, "dump:mlp.y", 1.0), value(1, "loss", 0.5)];
    let after = [value(0, "dump:mlp.y", 1.5), value(1, "loss", 0.75)];
    let comparison = compare(&before, &after, Tolerance::default());
    let text = render(&comparison, &before, &after, 10);
    assert!(
        text.starts_with(
            "diverged (rtol 0.0001, atol 0.00001): 2 of 2 aligned ops in 1 step\n\
             first diverged value: step 0, dump:mlp.y (seq 0 before, 0 after), phase -, at -\n  \
             (a value the program handed over, not an op: the ops that made it were not \
             aligned, or not recorded (Burn 0.22 records values only)"
        ),
        "{text}"
    );
    assert!(!text.contains("capture"), "{text}");
    assert!(before.iter().all(OpRecord::is_value));
    assert!(!chain(0, 1, None, true)[0].is_value());
}

/// A dumped array's fingerprint is the tensor's: the same statistics, Burn's dtype name.
#[test]
fn a_dumped_arrays_fingerprint_is_its_tensors() {
    use crate::dump::blob::Array;
    let floats = [1.5f32, f32::NAN, -2.0, f32::INFINITY];
    let array = Array::from_values(&[2, 2], &floats).unwrap();
    assert_eq!(
        Fingerprint::of_array(&array),
        Fingerprint::of(&floats, &[2, 2])
    );
    let halves = [half::f16::from_f32(0.5), half::f16::from_f32(-3.0)];
    let array = Array::from_values(&[2], &halves).unwrap();
    assert_eq!(
        Fingerprint::of_array(&array),
        Fingerprint::of(&halves, &[2])
    );
    let ints = [3i64, -7, 1 << 40];
    let array = Array::from_values(&[3], &ints).unwrap();
    assert_eq!(Fingerprint::of_array(&array), Fingerprint::of(&ints, &[3]));
}
