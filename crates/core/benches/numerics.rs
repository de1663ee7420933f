//! `numerics::compare` on 1M op records a side, linked to their producers (paired by
//! dataflow): the pairing and the verdict must stay near linear where the runs agree.
//! Three cases: the same records, one op diverged (every op after it a propagator), and one
//! op only the current run has; in 100 steps of 10k ops, and in one step of 1M. Also the
//! fingerprint of 1M f32 elements (one pass). The figures are in the guide (`numerics.md`).
//!
//! `cargo bench -p burn-profiled-core --bench numerics` (add `-- --quick` for a short run).

use std::hint::black_box;

use burn_profiled_core::numerics::{Fingerprint, OpRecord, Tolerance, compare};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

const RECORDS: u64 = 1_000_000;
const OPS: [&str; 5] = [
    "float_exp",
    "float_mul",
    "float_tanh",
    "float_add",
    "float_matmul",
];

/// `RECORDS` records in `steps` steps, each linked to the one before; the one at `diverged`
/// (if any) with its sum moved by 1e-3 relative, and every one after it too.
fn run(steps: u64, diverged: Option<u64>) -> Vec<OpRecord> {
    let print = Fingerprint::of(&[0.5f32, -1.0, 2.0, 0.25], &[2, 2]);
    (0..RECORDS)
        .map(|seq| {
            let mut outputs = vec![print.clone()];
            if diverged.is_some_and(|at| seq >= at) {
                outputs[0].sum *= 1.0 + 1e-3;
            }
            OpRecord {
                seq,
                step: seq * steps / RECORDS,
                thread: "main".into(),
                op: OPS[(seq % 5) as usize].into(),
                phase: "forward".into(),
                call_site: None,
                input_shapes: vec![vec![2, 2]],
                producers: Some(vec![seq.checked_sub(1)]),
                outputs,
            }
        })
        .collect()
}

fn comparisons(c: &mut Criterion) {
    let mut group = c.benchmark_group("numerics compare, 1M records a side");
    group.sample_size(10);
    for steps in [100u64, 1] {
        let reference = run(steps, None);
        let diverged = run(steps, Some(RECORDS / 2));
        // An op only the current run has, between two of the chain: the one after it reads it.
        let mut inserted = reference.clone();
        let at = RECORDS as usize / 2;
        let mut extra = inserted[at].clone();
        extra.op = "float_cast".into();
        inserted.insert(at, extra);
        for (seq, record) in inserted.iter_mut().enumerate().skip(at + 1) {
            record.seq = seq as u64;
            record.producers = Some(vec![Some(seq as u64 - 1)]);
        }
        let cases = [
            ("identical", &reference),
            ("one diverged", &diverged),
            ("one inserted", &inserted),
        ];
        for (name, current) in cases {
            let id = BenchmarkId::new(name, format!("{steps} steps"));
            group.bench_with_input(id, current, |b, current| {
                b.iter(|| black_box(compare(&reference, current, Tolerance::default())))
            });
        }
    }
    group.finish();
}

fn fingerprint(c: &mut Criterion) {
    let data: Vec<f32> = (0..1_000_000).map(|i| (i as f32 * 0.001).sin()).collect();
    c.bench_function("fingerprint of 1M f32", |b| {
        b.iter(|| black_box(Fingerprint::of(black_box(&data), &[1000, 1000])))
    });
}

criterion_group!(benches, comparisons, fingerprint);
criterion_main!(benches);
