//! The process-wide stopwatch: inert until enabled, then the same as a `Stopwatch` value; op
//! statistics wait for its warm-up. One test: the stopwatch is enabled once per process.

mod common;

use std::num::NonZeroUsize;
use std::time::Duration;

use burn::backend::NdArray;
use burn::tensor::Tensor;
use burn_profiled::stopwatch::{self, State, StopwatchConfig};
use burn_profiled::{Profiled, stats};
use common::panic_message;

#[test]
fn disabled_then_enabled_once() {
    // Disabled: everything is a no-op, the getters are neutral.
    stopwatch::start_meas("a");
    stopwatch::end_meas("never started: no error while disabled");
    stopwatch::start_one_time_measurement("t");
    stopwatch::finish_iter();
    assert_eq!(stopwatch::measure("m", || 5), 5);
    assert!(stopwatch::set_cpu_usage_meas_name("x").is_ok());
    assert_eq!(stopwatch::num_nonwarmup_iters_measured(), 0);
    assert!(stopwatch::report().is_none());
    assert!(!stopwatch::is_enabled());

    let mut now = Duration::ZERO;
    stopwatch::enable(
        StopwatchConfig::new(1, NonZeroUsize::new(100)).clock(move || {
            now += Duration::from_millis(5);
            now
        }),
    );
    assert!(stopwatch::is_enabled());
    stats::start(stats::StatsConfig::default());
    let x = Tensor::<Profiled<NdArray>, 1>::from_floats([1.0, 2.0], &Default::default());

    for _ in 0..3 {
        let _step = stopwatch::meas("step");
        stopwatch::measure("forward", || x.clone().exp());
        drop(_step);
        stopwatch::finish_iter();
    }
    stats::stop();
    assert_eq!(stopwatch::num_nonwarmup_iters_measured(), 2);
    let Some(stopwatch::Report {
        state: State::Measured { entries, .. },
        ..
    }) = stopwatch::report()
    else {
        panic!("measured iterations");
    };
    let names: Vec<_> = entries
        .iter()
        .map(|e| (e.name.as_str(), e.intervals))
        .collect();
    assert_eq!(names, [("step", 2), ("forward", 2)]);
    // Ops of the warm-up iteration were not counted: 2 of the 3 `float_exp` calls.
    let rows = stats::snapshot().rows(stats::GroupBy::Op);
    let exp = rows
        .iter()
        .find(|r| r.op == "float_exp")
        .expect("float_exp recorded");
    assert_eq!(exp.calls, 2);

    assert_eq!(
        panic_message(|| stopwatch::enable(StopwatchConfig::new(0, None))),
        "Stopwatch singleton can be enabled only once (burn_profiled::stopwatch::enable was called twice)"
    );
}
