//! The train data loader, wrapped: each batch it gives starts a step.

use std::sync::Arc;

use burn::data::dataloader::{DataLoader, DataLoaderIterator, Progress};
use burn::data::dataset::DatasetError;
use burn::tensor::Device;
use burn_profiled_core::dump::Map;

use super::TrainProfiling;

/// Turns a batch into what the dump records.
type ToDump<I> = Arc<dyn Fn(&I) -> Map + Send + Sync>;

/// burn-train's train data loader, wrapped by [`TrainProfiling::train_loader`].
pub struct ProfiledLoader<I> {
    profiling: TrainProfiling,
    inner: Arc<dyn DataLoader<I>>,
    to_dump: Option<ToDump<I>>,
}

impl<I> ProfiledLoader<I> {
    pub(super) fn new(
        profiling: TrainProfiling,
        inner: Arc<dyn DataLoader<I>>,
        to_dump: Option<ToDump<I>>,
    ) -> Self {
        ProfiledLoader {
            profiling,
            inner,
            to_dump,
        }
    }

    fn wrap(&self, inner: Arc<dyn DataLoader<I>>) -> Self {
        ProfiledLoader::new(self.profiling.clone(), inner, self.to_dump.clone())
    }
}

impl<I: 'static> DataLoader<I> for ProfiledLoader<I> {
    fn iter<'a>(&'a self) -> Box<dyn DataLoaderIterator<I> + 'a> {
        Box::new(Steps {
            loader: self,
            inner: self.inner.iter(),
        })
    }

    fn num_items(&self) -> usize {
        self.inner.num_items()
    }

    fn to_device(&self, device: &Device) -> Arc<dyn DataLoader<I>> {
        Arc::new(self.wrap(self.inner.to_device(device)))
    }

    fn slice(&self, start: usize, end: usize) -> Arc<dyn DataLoader<I>> {
        Arc::new(self.wrap(self.inner.slice(start, end)))
    }
}

/// One epoch's iterator.
struct Steps<'a, I> {
    loader: &'a ProfiledLoader<I>,
    inner: Box<dyn DataLoaderIterator<I> + 'a>,
}

impl<I> Iterator for Steps<'_, I> {
    type Item = Result<I, DatasetError>;

    fn next(&mut self) -> Option<Self::Item> {
        let run = &self.loader.profiling.run;
        run.next_batch(
            || self.inner.next(),
            |batch| match (batch, &self.loader.to_dump) {
                (Ok(batch), Some(to_dump)) => Some(to_dump(batch)),
                _ => None,
            },
        )
    }
}

impl<I> DataLoaderIterator<I> for Steps<'_, I> {
    fn progress(&self) -> Progress {
        self.inner.progress()
    }
}
