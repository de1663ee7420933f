//! Dump and comparison throughput: a 64 MiB f32 tensor written as BINARY, NPY and JSON, and a
//! JSON dump compared against its reference.

use burn::tensor::TensorData;
use burn_profiled::dump::{AddOptions, CompareSettings, DumpType, TensorDumper};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

/// 64 MiB of f32: 4096 x 4096 values.
fn tensor(side: usize) -> TensorData {
    let values: Vec<f32> = (0..side * side)
        .map(|i| (i % 1000) as f32 * 0.37 - 123.5)
        .collect();
    TensorData::new(values, [side, side])
}

fn dump_once(dir: &std::path::Path, data: TensorData, dump_type: DumpType) {
    let mut dumper = TensorDumper::new(dir);
    dumper
        .add_tensor_data("t", data, AddOptions::new(dump_type))
        .expect("the tensor is added");
    dumper.dump(true).expect("the dump is written");
}

fn dump(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let data = tensor(4096);
    let mut group = c.benchmark_group("dump 64 MiB f32");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(64 << 20));
    for (name, dump_type) in [
        ("BINARY", DumpType::Binary),
        ("NPY", DumpType::Npy),
        ("JSON", DumpType::Json),
    ] {
        // The tensor's data is handed over to the dumper, as `add_tensor_data` takes it: its
        // copy for each iteration is made outside the measurement.
        group.bench_function(name, |b| {
            b.iter_batched(
                || data.clone(),
                |data| dump_once(dir.path(), data, dump_type),
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();

    // Comparison: a 4M-element JSON dump against itself (every element is compared).
    let side = 2048;
    let data = tensor(side);
    let reference = tempfile::tempdir().expect("a temporary directory");
    dump_once(reference.path(), data.clone(), DumpType::Json);
    let mut group = c.benchmark_group("compare");
    group.sample_size(10);
    group.throughput(Throughput::Elements((side * side) as u64));
    group.bench_function("JSON dump vs its reference, 4M elements", |b| {
        b.iter(|| {
            let mut dumper = TensorDumper::new(reference.path());
            dumper
                .add_tensor_data("t", data.clone(), AddOptions::new(DumpType::Json))
                .expect("the tensor is added");
            let consistent = dumper
                .compare_to_dumped_data(CompareSettings::default(), true)
                .expect("the comparison runs");
            assert!(consistent);
        })
    });
    group.finish();
}

criterion_group!(benches, dump);
criterion_main!(benches);
