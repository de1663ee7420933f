//! burn-profiled's numbers as metrics of burn-train 0.22's dashboard, next to loss and
//! accuracy: the core's [`DashboardNumber`]s behind burn-train's `Metric`. burn-train updates
//! metrics on its worker thread, after the step: they read what the training thread recorded.

use burn::tensor::TensorReadError;
use burn::train::metric::state::{FormatOptions, NumericMetricState};
use burn::train::metric::{
    Metric, MetricAttributes, MetricMetadata, MetricName, Numeric, NumericAttributes, NumericEntry,
    SerializedEntry,
};
use burn_profiled_core::train_metrics::DashboardNumber;

burn_profiled_core::dashboard_metric!();

impl<N: DashboardNumber> Metric for DashboardMetric<N> {
    burn_profiled_core::dashboard_metric_items!();

    fn update(
        &mut self,
        _: &(),
        _metadata: &MetricMetadata,
    ) -> Result<SerializedEntry, TensorReadError> {
        let format = self.format();
        let (value, label) = self.read();
        self.state.update(value, 1);
        let entry = self.state.compute_update(format);
        Ok(match label {
            Some(label) => SerializedEntry::new(label + &entry.formatted, entry.serialized),
            None => entry,
        })
    }

    fn compute(&mut self) -> Result<SerializedEntry, TensorReadError> {
        Ok(self.state.compute_final(self.format()))
    }
}

impl<N: DashboardNumber> Numeric for DashboardMetric<N> {
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
