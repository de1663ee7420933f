//! `burn-profiled diff` and `burn-dump-diff` end to end, as a user runs them (the process,
//! reading the files, the comparison, the report), on 1k, 10k and 100k op rows or keys a side:
//! the tools must stay linear (a search per key once made 100k rows take minutes). The
//! figures are in the guide (`report-and-diff.md`, `dumps.md`).
//!
//! `cargo bench -p burn-profiled-core --bench tools` (add `-- --quick` for a short run).

use std::path::Path;
use std::process::Command;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::json;

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

/// A run with `rows` op rows (an op in as many phases or shapes), the after side slower by
/// `scale`, in reverse order so that no row is where its pair is.
fn write_run(dir: &Path, rows: usize, scale: u64, reverse: bool) {
    std::fs::create_dir_all(dir).unwrap();
    let steps: Vec<f64> = (0..20).map(|i| 0.01 + 1e-5 * (i % 3) as f64).collect();
    let run = json!({"format_version": 2, "backend": "ndarray", "measured_steps": 20,
                     "step_seconds": steps});
    std::fs::write(dir.join("run.json"), run.to_string()).unwrap();
    let mut keys: Vec<usize> = (0..rows).collect();
    if reverse {
        keys.reverse();
    }
    let rows: Vec<_> = keys
        .iter()
        .map(|i| {
            json!({"op": format!("op_{}", i % 97), "phase": format!("shape {i}"), "calls": 20,
                   "total_ns": (1000 + *i as u64) * scale})
        })
        .collect();
    let ops = json!({"format_version": 2, "total_calls": 0, "total_ns": 0, "rows": rows});
    std::fs::write(dir.join("ops.json"), ops.to_string()).unwrap();
}

/// A dump `{dir}/0/tensors.json` of `keys` keys, each a small tensor, in reverse order on one
/// side.
fn write_dump(dir: &Path, keys: usize, reverse: bool) {
    let dump = dir.join("0");
    std::fs::create_dir_all(&dump).unwrap();
    let mut entries: Vec<String> = (0..keys)
        .map(|i| format!("\"layer_{i}.weight\": [{}.0, 0.5, 0.25]", i % 7))
        .collect();
    if reverse {
        entries.reverse();
    }
    std::fs::write(
        dump.join("tensors.json"),
        format!("{{{}}}", entries.join(", ")),
    )
    .unwrap();
}

fn tools(c: &mut Criterion) {
    let root = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("tools");
    group.sample_size(10);
    for size in SIZES {
        let (before, after) = (
            root.path().join(format!("before-{size}")),
            root.path().join(format!("after-{size}")),
        );
        write_run(&before, size, 1, false);
        write_run(&after, size, 2, true);
        group.bench_with_input(BenchmarkId::new("diff", size), &size, |b, _| {
            b.iter(|| {
                let output = Command::new(env!("CARGO_BIN_EXE_burn-profiled"))
                    .arg("diff")
                    .args([&before, &after])
                    .output()
                    .unwrap();
                assert!(output.status.success(), "{output:?}");
            })
        });
        let (reference, current) = (
            root.path().join(format!("reference-{size}")),
            root.path().join(format!("current-{size}")),
        );
        write_dump(&reference, size, false);
        write_dump(&current, size, true);
        group.bench_with_input(BenchmarkId::new("burn-dump-diff", size), &size, |b, _| {
            b.iter(|| {
                let output = Command::new(env!("CARGO_BIN_EXE_burn-dump-diff"))
                    .args([&reference, &current])
                    .output()
                    .unwrap();
                assert!(output.status.success(), "{output:?}");
            })
        });
    }
    group.finish();
}

criterion_group!(benches, tools);
criterion_main!(benches);
