//! A plain renderer for burn-train 0.22 runs whose output is not a terminal (under nohup, CI, a
//! pipe): one readable line every few iterations, where burn-train's own renderer prints a
//! `ProgressSnapshot { .. }` debug dump for every one.

use burn::train::logger::{EvaluationProgressLogger, TrainingProgressLogger};
use burn::train::metric::{MetricDefinition, MetricId};
use burn::train::renderer::{
    EvaluationName, MetricState, MetricsRenderer, MetricsRendererEvaluation,
    MetricsRendererTraining,
};
use burn_profiled_core::train_progress::{Progress, ProgressLines};

/// Prints `train epoch 1/2, iteration 40, items 1280/5120: Loss 2.301, Step time 12.3 ms` every
/// `every` iterations and at each split's last item, for training and validation, on stdout,
/// as Burn 0.21's `burn_profiled::train::PlainProgress` does.
///
/// ```no_run
/// use std::io::IsTerminal;
/// use burn_profiled_022::train::PlainProgress;
///
/// // With burn-train's SupervisedTraining, where its terminal UI cannot draw:
/// // if !std::io::stdout().is_terminal() {
/// //     training = training.renderer(Box::new(PlainProgress::every(20)));
/// // }
/// let plain = (!std::io::stdout().is_terminal()).then(|| PlainProgress::every(20));
/// # let _ = plain;
/// ```
pub struct PlainProgress {
    lines: ProgressLines<MetricId>,
    /// The current epoch (from 1) and the number of epochs.
    epoch: (usize, usize),
    /// The split running: whether it is training's, its items, and the iterations counted in
    /// it.
    split: Split,
    /// Training iterations since the start (validation's count from each split's start).
    train_iterations: usize,
}

#[derive(Default)]
struct Split {
    train: bool,
    items: usize,
    iterations: usize,
}

impl PlainProgress {
    /// A line every `every` iterations (and at each split's last); 0 counts as 1.
    pub fn every(every: usize) -> Self {
        PlainProgress {
            lines: ProgressLines::every(every),
            epoch: (1, 0),
            split: Split::default(),
            train_iterations: 0,
        }
    }

    /// The split's progress reached `items_processed`: the line, when one is due.
    fn line(&mut self, items_processed: usize) -> Option<String> {
        self.split.iterations += 1;
        if self.split.train {
            self.train_iterations += 1;
        }
        let progress = Progress {
            epoch: self.epoch,
            iteration: match self.split.train {
                true => self.train_iterations,
                false => self.split.iterations,
            },
            items: (items_processed, self.split.items),
        };
        self.lines.line(self.split.train, progress)
    }

    fn update(&mut self, train: bool, state: MetricState) {
        let entry = match state {
            MetricState::Generic(entry) | MetricState::Numeric(entry, _) => entry,
        };
        self.lines
            .update(train, entry.metric_id, entry.serialized_entry.formatted);
    }
}

impl MetricsRendererTraining for PlainProgress {
    fn update_train(&mut self, state: MetricState) {
        self.update(true, state);
    }

    fn update_valid(&mut self, state: MetricState) {
        self.update(false, state);
    }
}

impl TrainingProgressLogger for PlainProgress {
    fn start(
        &mut self,
        total_epochs: usize,
        starting_epoch: usize,
        _total_items: Option<usize>,
        _label: Option<&str>,
    ) {
        self.epoch = (starting_epoch.max(1), total_epochs);
    }

    fn update_epoch(&mut self, epoch: usize) {
        self.epoch.0 = epoch + 1;
    }

    fn start_split(&mut self, split: &str, total_items: usize) {
        self.split = Split {
            train: split == "train",
            items: total_items,
            iterations: 0,
        };
    }

    fn update_split(&mut self, items_processed: usize) {
        if let Some(line) = self.line(items_processed) {
            println!("{line}");
        }
    }

    fn end_split(&mut self) {}

    fn end(&mut self) {}

    fn log_event_training(&mut self, _event: String) {}
}

impl MetricsRendererEvaluation for PlainProgress {
    fn update_test(&mut self, _: EvaluationName, _: MetricState) {}
}

impl EvaluationProgressLogger for PlainProgress {
    fn start_global_progress(&mut self, _total_tests: usize) {}

    fn start_test(&mut self, _name: &str, _total_items: usize) {}

    fn update_test_progress(&mut self, _items_processed: usize) {}

    fn end_test(&mut self) {}

    fn end_global_progress(&mut self) {}

    fn log_event_evaluation(&mut self, _event: String) {}
}

impl MetricsRenderer for PlainProgress {
    fn manual_close(&mut self) {}

    fn register_metric(&mut self, definition: MetricDefinition) {
        self.lines
            .name_metric(definition.metric_id, definition.name.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::train::metric::{MetricAttributes, MetricEntry, SerializedEntry};

    fn state(id: &MetricId, value: &str) -> MetricState {
        MetricState::Generic(MetricEntry::new(
            id.clone(),
            SerializedEntry::new(value.to_owned(), value.to_owned()),
        ))
    }

    #[test]
    fn a_line_every_few_iterations_and_at_each_split_s_end_with_the_latest_metrics() {
        let mut plain = PlainProgress::every(2);
        let loss = MetricId::new(std::sync::Arc::new("loss".to_owned()));
        plain.register_metric(MetricDefinition {
            metric_id: loss.clone(),
            name: std::sync::Arc::new("Loss".to_owned()),
            description: None,
            attributes: MetricAttributes::None,
        });
        plain.start(2, 1, None, None);
        plain.start_split("train", 96);
        let mut lines = Vec::new();
        for (batch, value) in ["2.3", "2.1", "1.9"].into_iter().enumerate() {
            plain.update_train(state(&loss, value));
            lines.extend(plain.line(32 * (batch + 1)));
        }
        plain.update_epoch(1);
        plain.start_split("valid", 32);
        plain.update_valid(state(&loss, "1.8"));
        lines.extend(plain.line(32));
        assert_eq!(
            lines,
            [
                "train epoch 1/2, iteration 2, items 64/96: Loss 2.1",
                "train epoch 1/2, iteration 3, items 96/96: Loss 1.9",
                "valid epoch 2/2, iteration 1, items 32/32: Loss 1.8",
            ]
        );
    }
}
