//! Numeric metrics for burn-train's dashboard, next to loss and accuracy. burn-train updates
//! metrics on its worker thread, after the step: they read what the training thread recorded.

use std::sync::Arc;

use burn::tensor::TensorReadError;
use burn::train::metric::state::{FormatOptions, NumericMetricState};
use burn::train::metric::{
    Metric, MetricAttributes, MetricMetadata, MetricName, Numeric, NumericAttributes, NumericEntry,
    SerializedEntry,
};
use burn_profiled_core::train_steps::TopOp;

use super::TrainProfiling;

/// The time of the last step, in ms, measured on the training thread by
/// [`TrainProfiling`]'s loader (from one batch to the next). Made by
/// [`TrainProfiling::step_time_metric`].
#[derive(Clone)]
pub struct StepTimeMetric {
    profiling: TrainProfiling,
    name: MetricName,
    state: NumericMetricState,
}

impl StepTimeMetric {
    pub(super) fn new(profiling: TrainProfiling) -> Self {
        StepTimeMetric {
            profiling,
            name: Arc::new("Step Time".to_owned()),
            state: NumericMetricState::new(),
        }
    }

    fn format(&self) -> FormatOptions {
        FormatOptions::new(self.name()).unit("ms").precision(2)
    }
}

impl Metric for StepTimeMetric {
    type Input = ();

    fn name(&self) -> MetricName {
        self.name.clone()
    }

    fn description(&self) -> Option<String> {
        Some("time of one training step, from one batch to the next (burn-profiled)".to_owned())
    }

    fn attributes(&self) -> MetricAttributes {
        NumericAttributes {
            unit: Some("ms".to_owned()),
            higher_is_better: false,
        }
        .into()
    }

    fn update(
        &mut self,
        _: &(),
        _metadata: &MetricMetadata,
    ) -> Result<SerializedEntry, TensorReadError> {
        let ms = self.profiling.last_step_seconds().unwrap_or(0.0) * 1e3;
        self.state.update(ms, 1);
        Ok(self.state.compute_update(self.format()))
    }

    fn compute(&mut self) -> Result<SerializedEntry, TensorReadError> {
        Ok(self.state.compute_final(self.format()))
    }

    fn clear(&mut self) {
        self.state.reset();
    }
}

impl Numeric for StepTimeMetric {
    fn value(&self) -> Option<NumericEntry> {
        Some(self.state.current_value())
    }

    fn running_value(&self) -> Option<NumericEntry> {
        Some(self.state.running_value())
    }

    fn final_value(&self) -> NumericEntry {
        self.state.final_value()
    }
}

/// The share of all op time taken by the block that takes the most, in percent, with its name
/// (`fused matmul[matmul, add] 23.4%`); 0 while op statistics are off (warm-up, or a preset
/// without them). Made by [`TrainProfiling::top_op_metric`].
#[derive(Clone)]
pub struct TopOpMetric {
    name: MetricName,
    state: NumericMetricState,
    top_op: TopOp,
}

impl TopOpMetric {
    pub(super) fn new() -> Self {
        TopOpMetric {
            name: Arc::new("Top Op Share".to_owned()),
            state: NumericMetricState::new(),
            top_op: TopOp::default(),
        }
    }

    fn format(&self) -> FormatOptions {
        FormatOptions::new(self.name()).unit("%").precision(1)
    }
}

impl Metric for TopOpMetric {
    type Input = ();

    fn name(&self) -> MetricName {
        self.name.clone()
    }

    fn description(&self) -> Option<String> {
        Some(
            "share of op time (device time when recorded) in the block that takes the most \
             (burn-profiled)"
                .to_owned(),
        )
    }

    fn attributes(&self) -> MetricAttributes {
        NumericAttributes {
            unit: Some("%".to_owned()),
            higher_is_better: false,
        }
        .into()
    }

    fn update(
        &mut self,
        _: &(),
        _metadata: &MetricMetadata,
    ) -> Result<SerializedEntry, TensorReadError> {
        let format = self.format();
        let (op, share) = self.top_op.current();
        self.state.update(share, 1);
        let entry = self.state.compute_update(format);
        Ok(SerializedEntry::new(
            format!("{op}: {}", entry.formatted),
            entry.serialized,
        ))
    }

    fn compute(&mut self) -> Result<SerializedEntry, TensorReadError> {
        Ok(self.state.compute_final(self.format()))
    }

    fn clear(&mut self) {
        self.state.reset();
    }
}

impl Numeric for TopOpMetric {
    fn value(&self) -> Option<NumericEntry> {
        Some(self.state.current_value())
    }

    fn running_value(&self) -> Option<NumericEntry> {
        Some(self.state.running_value())
    }

    fn final_value(&self) -> NumericEntry {
        self.state.final_value()
    }
}
