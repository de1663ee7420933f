//! A stopwatch start/end pair, disabled and enabled (no sync), in one run.

use std::hint::black_box;

use burn_profiled::stopwatch::{self, StopwatchConfig};
use criterion::{Criterion, criterion_group, criterion_main};

fn start_end(c: &mut Criterion) {
    let mut group = c.benchmark_group("stopwatch");
    group.bench_function("start_meas + end_meas, disabled", |b| {
        b.iter(|| {
            stopwatch::start_meas(black_box("step"));
            stopwatch::end_meas(black_box("step"));
        })
    });
    stopwatch::enable(StopwatchConfig::new(0, None));
    for name in ["data", "forward", "backward", "optimizer"] {
        stopwatch::start_meas(name);
        stopwatch::end_meas(name);
    }
    group.bench_function("start_meas + end_meas, enabled (5 names)", |b| {
        b.iter(|| {
            stopwatch::start_meas(black_box("step"));
            stopwatch::end_meas(black_box("step"));
        })
    });
    group.bench_function("meas guard, enabled (5 names)", |b| {
        b.iter(|| stopwatch::meas(black_box("step")))
    });
    group.finish();
}

criterion_group!(benches, start_end);
criterion_main!(benches);
