//! burn-profiled's numbers as metrics of burn-train 0.21's dashboard, next to loss and
//! accuracy: the core's [`DashboardNumber`]s behind burn-train's `Metric`. burn-train updates
//! metrics on its worker thread, after the step: they read what the training thread recorded.

use burn_profiled_core::train_metrics::DashboardNumber;
use burn_train::metric::state::{FormatOptions, NumericMetricState};
use burn_train::metric::{
    Metric, MetricAttributes, MetricMetadata, MetricName, Numeric, NumericAttributes, NumericEntry,
    SerializedEntry,
};

burn_profiled_core::dashboard_metric!();

impl<N: DashboardNumber> Metric for DashboardMetric<N> {
    burn_profiled_core::dashboard_metric_items!();

    fn update(&mut self, _: &(), _metadata: &MetricMetadata) -> SerializedEntry {
        let format = self.format();
        let (value, label) = self.read();
        let entry = self.state.update(value, 1, format);
        match label {
            Some(label) => SerializedEntry::new(label + &entry.formatted, entry.serialized),
            None => entry,
        }
    }
}

impl<N: DashboardNumber> Numeric for DashboardMetric<N> {
    fn value(&self) -> NumericEntry {
        self.state.current_value()
    }

    fn running_value(&self) -> NumericEntry {
        self.state.running_value()
    }
}
