//! A plain renderer for burn-train runs whose output is not a terminal (under nohup, CI, a
//! pipe): one readable line every few iterations instead of burn-train's plain renderer's debug
//! dump of every iteration.

use std::collections::HashMap;

use burn::train::metric::{MetricDefinition, MetricId};
use burn::train::renderer::{
    EvaluationName, EvaluationProgress, MetricState, MetricsRenderer, MetricsRendererEvaluation,
    MetricsRendererTraining, ProgressType, TrainingProgress,
};

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
pub struct PlainProgress {
    every: usize,
    names: HashMap<MetricId, String>,
    /// The latest formatted value of each metric, in the order first seen, per split.
    train: Vec<(MetricId, String)>,
    valid: Vec<(MetricId, String)>,
}

impl PlainProgress {
    /// A line every `every` iterations (and at each epoch's last); 0 counts as 1.
    pub fn every(every: usize) -> Self {
        PlainProgress {
            every: every.max(1),
            names: HashMap::new(),
            train: Vec::new(),
            valid: Vec::new(),
        }
    }

    /// The line for `item`, when one is due.
    fn line(&self, split: &str, item: &TrainingProgress) -> Option<String> {
        let progress = item.progress.as_ref()?;
        let iteration = item.iteration.unwrap_or(progress.items_processed);
        let last = progress.items_processed >= progress.items_total;
        if !iteration.is_multiple_of(self.every) && !last {
            return None;
        }
        let values = match split {
            "train" => &self.train,
            _ => &self.valid,
        };
        let metrics: Vec<String> = values
            .iter()
            .map(|(id, value)| {
                let name = self.names.get(id).map_or("?", String::as_str);
                format!("{name} {value}")
            })
            .collect();
        Some(format!(
            "{split} epoch {}/{}, iteration {iteration}, items {}/{}: {}",
            item.global_progress.items_processed,
            item.global_progress.items_total,
            progress.items_processed,
            progress.items_total,
            metrics.join(", ")
        ))
    }
}

fn update(values: &mut Vec<(MetricId, String)>, state: MetricState) {
    let entry = match state {
        MetricState::Generic(entry) | MetricState::Numeric(entry, _) => entry,
    };
    let value = entry.serialized_entry.formatted;
    match values.iter_mut().find(|(id, _)| *id == entry.metric_id) {
        Some((_, old)) => *old = value,
        None => values.push((entry.metric_id, value)),
    }
}

impl MetricsRendererTraining for PlainProgress {
    fn update_train(&mut self, state: MetricState) {
        update(&mut self.train, state);
    }

    fn update_valid(&mut self, state: MetricState) {
        update(&mut self.valid, state);
    }

    fn render_train(&mut self, item: TrainingProgress, _: Vec<ProgressType>) {
        if let Some(line) = self.line("train", &item) {
            println!("{line}");
        }
    }

    fn render_valid(&mut self, item: TrainingProgress, _: Vec<ProgressType>) {
        if let Some(line) = self.line("valid", &item) {
            println!("{line}");
        }
    }
}

impl MetricsRendererEvaluation for PlainProgress {
    fn update_test(&mut self, _: EvaluationName, _: MetricState) {}

    fn render_test(&mut self, _: EvaluationProgress, _: Vec<ProgressType>) {}
}

impl MetricsRenderer for PlainProgress {
    fn manual_close(&mut self) {}

    fn register_metric(&mut self, definition: MetricDefinition) {
        self.names.insert(definition.metric_id, definition.name);
    }
}
