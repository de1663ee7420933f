//! The train data loader, wrapped: each batch it gives starts a step.

use std::sync::Arc;

use burn::data::dataloader::{DataLoader, DataLoaderIterator, Progress};
use burn_backend::Backend;

use super::TrainProfiling;
use burn_profiled_core::dump::Map;

/// Turns a batch into what the dump records.
type ToDump<I> = Arc<dyn Fn(&I) -> Map + Send + Sync>;

/// burn-train's train data loader, wrapped by [`TrainProfiling::train_loader`].
pub struct ProfiledLoader<B: Backend, I> {
    profiling: TrainProfiling,
    inner: Arc<dyn DataLoader<B, I>>,
    to_dump: Option<ToDump<I>>,
}

impl<B: Backend, I> ProfiledLoader<B, I> {
    pub(super) fn new(
        profiling: TrainProfiling,
        inner: Arc<dyn DataLoader<B, I>>,
        to_dump: Option<ToDump<I>>,
    ) -> Self {
        ProfiledLoader {
            profiling,
            inner,
            to_dump,
        }
    }

    fn wrap(&self, inner: Arc<dyn DataLoader<B, I>>) -> Self {
        ProfiledLoader::new(self.profiling.clone(), inner, self.to_dump.clone())
    }
}

impl<B: Backend, I: 'static> DataLoader<B, I> for ProfiledLoader<B, I> {
    fn iter<'a>(&'a self) -> Box<dyn DataLoaderIterator<I> + 'a> {
        Box::new(Steps {
            loader: self,
            inner: self.inner.iter(),
        })
    }

    fn num_items(&self) -> usize {
        self.inner.num_items()
    }

    fn to_device(&self, device: &B::Device) -> Arc<dyn DataLoader<B, I>> {
        Arc::new(self.wrap(self.inner.to_device(device)))
    }

    fn slice(&self, start: usize, end: usize) -> Arc<dyn DataLoader<B, I>> {
        Arc::new(self.wrap(self.inner.slice(start, end)))
    }
}

/// One epoch's iterator.
struct Steps<'a, B: Backend, I> {
    loader: &'a ProfiledLoader<B, I>,
    inner: Box<dyn DataLoaderIterator<I> + 'a>,
}

impl<B: Backend, I> Iterator for Steps<'_, B, I> {
    type Item = I;

    fn next(&mut self) -> Option<I> {
        let run = &self.loader.profiling.run;
        run.next_batch(
            || self.inner.next(),
            |batch| self.loader.to_dump.as_ref().map(|to_dump| to_dump(batch)),
        )
    }
}

impl<B: Backend, I> DataLoaderIterator<I> for Steps<'_, B, I> {
    fn progress(&self) -> Progress {
        self.inner.progress()
    }
}
