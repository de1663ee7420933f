//! The plain progress lines of a burn-train run, for each edition's `PlainProgress` renderer:
//! the latest formatted value of each metric per split, and a line every few iterations, such
//! as `train epoch 1/2, iteration 40, items 1280/5120: Loss 2.301, Step time 12.3 ms`.

use std::collections::HashMap;
use std::hash::Hash;

/// The metrics' names and latest values, keyed by burn-train's metric id `Id`, and when a line
/// is due.
///
/// ```
/// use burn_profiled_core::train_progress::{ProgressLines, Progress};
///
/// let mut lines = ProgressLines::every(2);
/// lines.name_metric("loss", "Loss".to_owned());
/// lines.update(true, "loss", "2.1".to_owned());
/// let progress = Progress { epoch: (1, 2), iteration: 2, items: (64, 96) };
/// assert_eq!(
///     lines.line(true, progress).as_deref(),
///     Some("train epoch 1/2, iteration 2, items 64/96: Loss 2.1")
/// );
/// ```
pub struct ProgressLines<Id> {
    every: usize,
    names: HashMap<Id, String>,
    /// The latest value of each metric, in the order first seen: training's, validation's.
    values: [Vec<(Id, String)>; 2],
}

/// Where a split stands when a line may be due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// The current epoch and the number of epochs.
    pub epoch: (usize, usize),
    /// The iteration: training's counted from the run's start, validation's from the split's.
    pub iteration: usize,
    /// The items processed in the split, and its items.
    pub items: (usize, usize),
}

impl<Id: Eq + Hash + Clone> ProgressLines<Id> {
    /// A line every `every` iterations (and at each split's last item); 0 counts as 1.
    pub fn every(every: usize) -> Self {
        ProgressLines {
            every: every.max(1),
            names: HashMap::new(),
            values: [Vec::new(), Vec::new()],
        }
    }

    /// The metric `id` is shown as `name`.
    pub fn name_metric(&mut self, id: Id, name: String) {
        self.names.insert(id, name);
    }

    /// The metric `id` of training's split (`train`) or validation's now reads `formatted`.
    pub fn update(&mut self, train: bool, id: Id, formatted: String) {
        let values = &mut self.values[usize::from(!train)];
        match values.iter_mut().find(|(known, _)| *known == id) {
            Some((_, old)) => *old = formatted,
            None => values.push((id, formatted)),
        }
    }

    /// The line of training's split (`train`) or validation's at `progress`, when one is due.
    pub fn line(&self, train: bool, progress: Progress) -> Option<String> {
        let Progress {
            epoch,
            iteration,
            items,
        } = progress;
        if !iteration.is_multiple_of(self.every) && items.0 < items.1 {
            return None;
        }
        let metrics: Vec<String> = self.values[usize::from(!train)]
            .iter()
            .map(|(id, value)| {
                let name = self.names.get(id).map_or("?", String::as_str);
                format!("{name} {value}")
            })
            .collect();
        Some(format!(
            "{} epoch {}/{}, iteration {iteration}, items {}/{}: {}",
            if train { "train" } else { "valid" },
            epoch.0,
            epoch.1,
            items.0,
            items.1,
            metrics.join(", ")
        ))
    }
}
