//! Numeric metrics for burn-train's dashboard, next to loss and accuracy. burn-train updates
//! metrics on its worker thread, after the step: they read what the training thread recorded.

use std::sync::Arc;
use std::time::{Duration, Instant};

use burn::tensor::TensorReadError;
use burn::train::metric::state::{FormatOptions, NumericMetricState};
use burn::train::metric::{
    Metric, MetricAttributes, MetricMetadata, MetricName, Numeric, NumericAttributes, NumericEntry,
    SerializedEntry,
};
use burn_profiled_core::stats;

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

/// How often the op statistics are read for [`TopOpMetric`]: a snapshot merges every
/// thread's rows.
const TOP_OP_EVERY: Duration = Duration::from_millis(500);

/// The share of all op time taken by the block that takes the most, in percent, with its name
/// (`fused matmul[matmul, add] 23.4%`); 0 while op statistics are off (warm-up, or a preset
/// without them). Made by [`TrainProfiling::top_op_metric`].
#[derive(Clone)]
pub struct TopOpMetric {
    name: MetricName,
    state: NumericMetricState,
    /// The last reading: when, the op and its share.
    read: Option<(Instant, String, f64)>,
}

impl TopOpMetric {
    pub(super) fn new() -> Self {
        TopOpMetric {
            name: Arc::new("Top Op Share".to_owned()),
            state: NumericMetricState::new(),
            read: None,
        }
    }

    fn top_op() -> (String, f64) {
        stats::snapshot()
            .rows(stats::GroupBy::Op)
            .into_iter()
            .next()
            // With device time, rows come sorted by it: the share is the device's too.
            .map_or_else(
                || ("-".to_owned(), 0.0),
                |row| (row.op, row.device_percent.unwrap_or(row.total_percent)),
            )
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
        // Read again when the last reading is old, or found no op yet (warm-up).
        let stale = self
            .read
            .as_ref()
            .is_none_or(|(at, _, share)| *share == 0.0 || at.elapsed() >= TOP_OP_EVERY);
        if stale {
            let (op, share) = Self::top_op();
            self.read = Some((Instant::now(), op, share));
        }
        let (op, share) = self
            .read
            .as_ref()
            .map_or(("-", 0.0), |(_, op, share)| (op.as_str(), *share));
        self.state.update(share, 1);
        let entry = self.state.compute_update(self.format());
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
