//! What `TrainProfiling::train_loader` adds to each batch of a burn-train run with everything
//! off (the `train` preset), next to the same loader unwrapped, in one run: an epoch of 1,000
//! batches that cost nothing to load, so the difference is the wrapper's own work per step.

use std::hint::black_box;
use std::sync::Arc;

use burn::backend::NdArray;
use burn::backend::ndarray::NdArrayDevice;
use burn::data::dataloader::{DataLoader, DataLoaderIterator, Progress};
use burn_profiled::config::{Preset, RuntimeConfig};
use burn_profiled::train::TrainProfiling;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

type B = NdArray;
const BATCHES: usize = 1_000;

/// Batches `0..len`, free to load.
struct Counting {
    len: usize,
}

struct CountingIter {
    next: usize,
    len: usize,
}

impl Iterator for CountingIter {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        (self.next < self.len).then(|| {
            self.next += 1;
            self.next - 1
        })
    }
}

impl DataLoaderIterator<usize> for CountingIter {
    fn progress(&self) -> Progress {
        Progress::new(self.next, self.len)
    }
}

impl DataLoader<B, usize> for Counting {
    fn iter<'a>(&'a self) -> Box<dyn DataLoaderIterator<usize> + 'a> {
        Box::new(CountingIter {
            next: 0,
            len: self.len,
        })
    }

    fn num_items(&self) -> usize {
        self.len
    }

    fn to_device(&self, _device: &NdArrayDevice) -> Arc<dyn DataLoader<B, usize>> {
        Arc::new(Counting { len: self.len })
    }

    fn slice(&self, start: usize, end: usize) -> Arc<dyn DataLoader<B, usize>> {
        Arc::new(Counting { len: end - start })
    }
}

fn epoch(loader: &dyn DataLoader<B, usize>) -> usize {
    loader.iter().map(black_box).sum()
}

fn train_loader(c: &mut Criterion) {
    let mut group = c.benchmark_group("train_loader");
    group.throughput(Throughput::Elements(BATCHES as u64));
    let plain: Arc<dyn DataLoader<B, usize>> = Arc::new(Counting { len: BATCHES });
    let out = tempfile::tempdir().expect("a temporary directory");
    let profiling = TrainProfiling::start::<B>(
        RuntimeConfig::preset(Preset::Train),
        &Default::default(),
        out.path(),
    );
    let wrapped = profiling.train_loader(plain.clone());
    group.bench_function("an epoch of 1,000 batches, plain loader", |b| {
        b.iter(|| epoch(plain.as_ref()))
    });
    group.bench_function(
        "an epoch of 1,000 batches, train_loader (train preset)",
        |b| b.iter(|| epoch(wrapped.as_ref())),
    );
    group.finish();
    let _ = profiling.finish();
}

criterion_group!(benches, train_loader);
criterion_main!(benches);
