//! burn-profiled's numbers on burn-train's dashboard, for every edition: what each shows and
//! how it is read. Each edition implements its burn-train's `Metric` once, for any
//! [`DashboardNumber`] (burn-train's metric traits differ between Burn versions).

use std::sync::Arc;

use crate::train_steps::TopOp;

/// A number for burn-train's dashboard, read on its metrics thread after each step.
pub trait DashboardNumber: Clone + Send + Sync + 'static {
    /// The metric's name on the dashboard.
    fn name(&self) -> &'static str;
    /// What it measures (burn-train's metric description).
    fn description(&self) -> String;
    /// Its unit (`ms`, `%`).
    fn unit(&self) -> &'static str;
    /// Digits after the point.
    fn precision(&self) -> usize;
    /// Its value now, and a label shown before it (`float_matmul: `), if any.
    fn read(&mut self) -> (f64, Option<String>);
}

/// The time of the last step, in ms, measured on the training thread by the train loader
/// (from one batch to the next).
#[derive(Clone)]
pub struct StepTime(Arc<dyn Fn() -> Option<f64> + Send + Sync>);

impl StepTime {
    /// Reads the last step's time, in seconds, with `last_step_seconds`.
    pub fn new(last_step_seconds: impl Fn() -> Option<f64> + Send + Sync + 'static) -> Self {
        StepTime(Arc::new(last_step_seconds))
    }
}

impl DashboardNumber for StepTime {
    fn name(&self) -> &'static str {
        "Step Time"
    }

    fn description(&self) -> String {
        "time of one training step, from one batch to the next (burn-profiled)".to_owned()
    }

    fn unit(&self) -> &'static str {
        "ms"
    }

    fn precision(&self) -> usize {
        2
    }

    fn read(&mut self) -> (f64, Option<String>) {
        ((self.0)().unwrap_or(0.0) * 1e3, None)
    }
}

/// The share of all op time taken by the op (or fused block) that takes the most, in
/// percent, labelled with its name; 0 while op statistics are off (warm-up, or a preset
/// without them).
#[derive(Clone)]
pub struct TopOpShare {
    what: &'static str,
    top_op: TopOp,
}

impl TopOpShare {
    /// `what` names the edition's ops in the description: `op`, or `block` where fusion's
    /// blocks are the ops.
    pub fn new(what: &'static str) -> Self {
        TopOpShare {
            what,
            top_op: TopOp::default(),
        }
    }
}

impl DashboardNumber for TopOpShare {
    fn name(&self) -> &'static str {
        "Top Op Share"
    }

    fn description(&self) -> String {
        format!(
            "share of op time (device time when recorded) in the {} that takes the most \
             (burn-profiled)",
            self.what
        )
    }

    fn unit(&self) -> &'static str {
        "%"
    }

    fn precision(&self) -> usize {
        1
    }

    fn read(&mut self) -> (f64, Option<String>) {
        let (op, share) = self.top_op.current();
        (share, Some(format!("{op}: ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The step time is shown in ms, 0 before the first step; the top op's description names
    /// the edition's ops.
    #[test]
    fn numbers_read_as_the_dashboard_shows_them() {
        let mut step = StepTime::new(|| Some(0.0125));
        assert_eq!(step.read(), (12.5, None));
        assert_eq!(StepTime::new(|| None).read(), (0.0, None));
        assert_eq!(
            TopOpShare::new("block").description(),
            "share of op time (device time when recorded) in the block that takes the most \
             (burn-profiled)"
        );
    }
}
