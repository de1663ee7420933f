//! A plain renderer for burn-train runs whose output is not a terminal (under nohup, CI, a
//! pipe): one readable line every few iterations instead of burn-train's plain renderer's debug
//! dump of every iteration.

use burn::train::metric::{MetricDefinition, MetricId};
use burn::train::renderer::{
    EvaluationName, EvaluationProgress, MetricState, MetricsRenderer, MetricsRendererEvaluation,
    MetricsRendererTraining, ProgressType, TrainingProgress,
};
use burn_profiled_core::train_progress::{Progress, ProgressLines};

/// Prints `train epoch 1/2, iteration 40, items 1280/5120: Loss 2.301, Step time 12.3 ms` every
/// `every` iterations and at each epoch's end, for training and validation, on stdout.
///
/// ```no_run
/// use std::io::IsTerminal;
/// use burn_profiled::train::PlainProgress;
///
/// // With burn-train's SupervisedTraining, where its terminal UI cannot draw:
/// let plain = (!std::io::stdout().is_terminal()).then(|| PlainProgress::every(20));
/// # let _ = plain;
/// ```
pub struct PlainProgress(ProgressLines<MetricId>);

impl PlainProgress {
    /// A line every `every` iterations (and at each epoch's last); 0 counts as 1.
    pub fn every(every: usize) -> Self {
        PlainProgress(ProgressLines::every(every))
    }

    fn render(&self, train: bool, item: &TrainingProgress) {
        let Some(progress) = item.progress.as_ref() else {
            return;
        };
        let at = Progress {
            epoch: (
                item.global_progress.items_processed,
                item.global_progress.items_total,
            ),
            iteration: item.iteration.unwrap_or(progress.items_processed),
            items: (progress.items_processed, progress.items_total),
        };
        if let Some(line) = self.0.line(train, at) {
            println!("{line}");
        }
    }

    fn update(&mut self, train: bool, state: MetricState) {
        let entry = match state {
            MetricState::Generic(entry) | MetricState::Numeric(entry, _) => entry,
        };
        self.0
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

    fn render_train(&mut self, item: TrainingProgress, _: Vec<ProgressType>) {
        self.render(true, &item);
    }

    fn render_valid(&mut self, item: TrainingProgress, _: Vec<ProgressType>) {
        self.render(false, &item);
    }
}

impl MetricsRendererEvaluation for PlainProgress {
    fn update_test(&mut self, _: EvaluationName, _: MetricState) {}

    fn render_test(&mut self, _: EvaluationProgress, _: Vec<ProgressType>) {}
}

impl MetricsRenderer for PlainProgress {
    fn manual_close(&mut self) {}

    fn register_metric(&mut self, definition: MetricDefinition) {
        self.0.name_metric(definition.metric_id, definition.name);
    }
}
