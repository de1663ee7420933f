//! Push/pop pairs through the user-facing NVTX API, against the raw NVTX call, in one run.
//!
//! No NVTX tool is attached (as in a run outside `nsys`), so this measures what the API adds
//! on top of NVTX's own no-op. User ranges are measured disabled first, then enabled: there is
//! no disable.

use std::hint::black_box;

use burn_profiled::nvtx::{self, Handle, RangeConfig};
use criterion::{Criterion, criterion_group, criterion_main};

fn push_pop(c: &mut Criterion) {
    let mut group = c.benchmark_group("push_pop");
    group.bench_function("raw nvtx::sys ascii", |b| {
        b.iter(|| {
            ::nvtx::sys::range_push_ascii(black_box(c"forward"));
            ::nvtx::sys::range_pop();
        })
    });
    let handle = nvtx::register_string("step");
    group.bench_function("Handle push + pop (inert: no tool)", |b| {
        b.iter(|| {
            black_box(handle).push();
            Handle::pop();
        })
    });
    group.bench_function("range_push + range_pop, disabled", |b| {
        b.iter(|| {
            nvtx::range_push(black_box("forward"));
            nvtx::range_pop(None);
        })
    });
    group.bench_function("range guard, disabled", |b| {
        b.iter(|| nvtx::range(black_box("forward")))
    });
    nvtx::enable(RangeConfig::new());
    group.bench_function("range_push + range_pop, enabled", |b| {
        b.iter(|| {
            nvtx::range_push(black_box("forward"));
            nvtx::range_pop(None);
        })
    });
    group.bench_function("range guard, enabled", |b| {
        b.iter(|| nvtx::range(black_box("forward")))
    });
    group.finish();
}

criterion_group!(benches, push_pop);
criterion_main!(benches);
