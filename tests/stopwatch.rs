//! The stopwatch on a scripted clock: report layout (golden file), warm-up and print schedule,
//! every misuse message.

mod common;

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use burn_profiled::stopwatch::{CpuNameError, State, Stopwatch, StopwatchConfig};
use common::panic_message;

/// A clock that advances by `tick` at every reading.
fn ticking(tick: Duration) -> impl FnMut() -> Duration + Send + 'static {
    let mut now = Duration::ZERO;
    move || {
        now += tick;
        now
    }
}

fn scripted(warmup: usize, print_every: Option<usize>) -> Stopwatch {
    let mut cpu = [30.0, 50.0].into_iter().cycle();
    let mut rss = (100u64..).map(|mib| Some(mib << 20));
    Stopwatch::new(
        StopwatchConfig::new(warmup, print_every.and_then(NonZeroUsize::new))
            .clock(ticking(Duration::from_millis(10)))
            .cpu_meter(move || cpu.next().unwrap_or(0.0))
            .rss_meter(move || rss.next().flatten()),
    )
}

/// The original's documented example (warm-up 5, 16 iterations, report every 2), on a clock
/// that ticks 10 ms per reading.
fn documented_example() -> (Stopwatch, Vec<String>) {
    let mut stopwatch = scripted(5, Some(2));
    let mut printed = Vec::new();
    stopwatch.set_cpu_usage_meas_name("meas1").unwrap();
    stopwatch.start_one_time_measurement("complete_run");
    stopwatch.start_one_time_measurement("preparation");
    stopwatch.end_one_time_measurement("preparation");
    for i in 0..16 {
        stopwatch.start_meas("meas1");
        stopwatch.start_meas("meas2");
        stopwatch.end_meas("meas2");
        stopwatch.end_meas("meas1");
        if i % 3 == 2 {
            stopwatch.start_meas("meas3");
            stopwatch.end_meas("meas3");
        }
        stopwatch.start_meas("meas2");
        stopwatch.end_meas("meas2");
        if let Some(report) = stopwatch.finish_iter() {
            printed.push(report.to_string());
        }
    }
    stopwatch.end_one_time_measurement("complete_run");
    (stopwatch, printed)
}

#[test]
fn the_report_has_the_original_layout() {
    let (stopwatch, printed) = documented_example();
    let report = stopwatch.report().to_string();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/golden/stopwatch_report.txt"
            ),
            format!("{report}\n"),
        )
        .unwrap();
    }
    let golden = include_str!("golden/stopwatch_report.txt");
    assert_eq!(report, golden.strip_suffix('\n').unwrap_or(golden));
    // Reports printed at measured iterations 2, 4, ..., 10; iteration 16 - 5 = 11 is odd.
    assert_eq!(printed.len(), 5);
    assert!(printed[0].contains("Num. measured iterations: 2\n"));
    assert!(printed[4].contains("Num. measured iterations: 10\n"));
}

#[test]
fn the_report_numbers_are_the_measured_seconds() {
    let (stopwatch, _) = documented_example();
    let State::Measured {
        iterations,
        entries,
        cpu_usage,
    } = stopwatch.report().state
    else {
        panic!("measured");
    };
    assert_eq!(iterations, 11);
    let names: Vec<_> = entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["meas1", "meas2", "meas3"]);
    // meas1 spans 3 ticks (its start, meas2's two readings, its end): 30 ms per iteration.
    assert_eq!(entries[0].intervals, 11);
    assert!((entries[0].per_interval.unwrap() - 0.03).abs() < 1e-12);
    // meas2 is measured twice per iteration, 10 ms each.
    assert_eq!(entries[1].intervals, 22);
    assert!((entries[1].per_iteration - 0.02).abs() < 1e-12);
    assert!((entries[1].per_interval.unwrap() - 0.01).abs() < 1e-12);
    // meas3 runs in some iterations only: per iteration well below per interval.
    assert!(entries[2].per_iteration < entries[2].per_interval.unwrap());
    // CPU usage alternates 30, 50, 30, ... over 11 equal intervals: (6 * 30 + 5 * 50) / 11.
    let cpu = cpu_usage.unwrap();
    assert!((cpu.mean_percent.unwrap() - 430.0 / 11.0).abs() < 1e-9);
    assert_eq!(cpu.peak_rss_bytes, Some(110 << 20));
}

#[test]
fn warmup_and_print_schedule() {
    let mut stopwatch = scripted(2, Some(3));
    let mut measured = Vec::new();
    let mut printed_at = Vec::new();
    for i in 1..=9 {
        stopwatch.start_meas("step");
        stopwatch.end_meas("step");
        if stopwatch.finish_iter().is_some() {
            printed_at.push(i);
        }
        measured.push(stopwatch.num_nonwarmup_iters_measured());
    }
    assert_eq!(measured, [0, 0, 1, 2, 3, 4, 5, 6, 7]);
    // The warm-up-ending iteration never prints; then every 3 measured iterations.
    assert_eq!(printed_at, [5, 8]);
}

#[test]
fn warmup_zero_measures_from_the_start_and_report_states() {
    let mut stopwatch = scripted(0, None);
    assert!(stopwatch.report().to_string().contains(
        "\nwarmup finished (0 iterations), but no iterations were performed after that\n"
    ));
    stopwatch.start_meas("a");
    stopwatch.end_meas("a");
    assert!(
        stopwatch.finish_iter().is_none(),
        "no print interval: never prints"
    );
    assert_eq!(stopwatch.num_nonwarmup_iters_measured(), 1);

    let mut warming = scripted(3, None);
    warming.finish_iter();
    assert!(
        warming
            .report()
            .to_string()
            .contains("\nwarmup not finished (1 out of 3 warmup iterations finished)\n")
    );
}

#[test]
fn a_name_seen_only_in_warmup_prints_n_a_instead_of_crashing() {
    let mut stopwatch = scripted(1, None);
    stopwatch.start_meas("warmup only");
    stopwatch.end_meas("warmup only");
    stopwatch.finish_iter();
    stopwatch.start_meas("b");
    stopwatch.end_meas("b");
    stopwatch.finish_iter();
    let report = stopwatch.report().to_string();
    assert!(
        report.contains(
            "Average runtime per measured interval:\n  `warmup only`: n/a\n  `b`: 0.01\n"
        ),
        "{report}"
    );
    assert!(
        report.contains("Average runtime per iteration:\n  `warmup only`: 0.0\n"),
        "{report}"
    );
}

#[test]
fn a_running_one_time_measurement_prints_running() {
    let mut stopwatch = scripted(0, None);
    stopwatch.start_one_time_measurement("total");
    assert!(
        stopwatch
            .report()
            .to_string()
            .contains("One-time measurements:\n  `total`: running\n")
    );
}

#[test]
fn misuse_messages_are_the_originals() {
    type Misuse = Box<dyn FnOnce(&mut Stopwatch)>;
    let cases: Vec<(&str, Misuse)> = vec![
        (
            "Trying to start a time emasurement which is already running",
            Box::new(|s| {
                s.start_meas("a");
                s.start_meas("a");
            }),
        ),
        (
            "Trying to end a time measurement which was not started",
            Box::new(|s| {
                s.start_meas("a");
                s.end_meas("a");
                s.end_meas("a");
            }),
        ),
        (
            "Entry `nope` not present, cannot end measurment",
            Box::new(|s| s.end_meas("nope")),
        ),
        (
            "At the end of an iteration, all started measurements need to be ended. Measurement                 for 'a' is started but not ended.",
            Box::new(|s| {
                s.start_meas("a");
                s.finish_iter();
            }),
        ),
        (
            "One-time measurement `t` already present, cannot start it again",
            Box::new(|s| {
                s.start_one_time_measurement("t");
                s.end_one_time_measurement("t");
                s.start_one_time_measurement("t");
            }),
        ),
        (
            "One-time measurement `t` not present, cannot end it",
            Box::new(|s| s.end_one_time_measurement("t")),
        ),
        (
            "Trying to end a time measurement which was not started",
            Box::new(|s| {
                s.start_one_time_measurement("t");
                s.end_one_time_measurement("t");
                s.end_one_time_measurement("t");
            }),
        ),
        (
            "Calling `get_accum_time()` not supported while measurement is running",
            Box::new(|s| {
                s.start_meas("a");
                s.end_meas("a");
                s.finish_iter();
                s.start_meas("a");
                let _ = s.report();
            }),
        ),
    ];
    for (expected, misuse) in cases {
        let mut stopwatch = scripted(0, None);
        assert_eq!(panic_message(|| misuse(&mut stopwatch)), expected);
    }
}

#[test]
fn ending_in_measurement_what_warmup_started_is_an_error() {
    let mut stopwatch = scripted(1, None);
    stopwatch.start_meas("a");
    stopwatch.end_meas("a");
    stopwatch.start_meas("a"); // not timed: still warm-up
    // The warm-up iteration ends with `a` open only in name; the check is on running timers.
    stopwatch.finish_iter();
    assert_eq!(
        panic_message(|| stopwatch.end_meas("a")),
        "Trying to end a time measurement which was not started"
    );
}

#[test]
fn cpu_usage_name_rules() {
    let mut stopwatch = scripted(0, None);
    stopwatch.set_cpu_usage_meas_name("loop").unwrap();
    stopwatch.set_cpu_usage_meas_name("loop").unwrap();
    assert_eq!(
        stopwatch
            .set_cpu_usage_meas_name("other")
            .unwrap_err()
            .to_string(),
        "CPU usage measurement name `loop` already set. Cannot set it to `other`."
    );
    let mut stopwatch = scripted(1, None);
    stopwatch.start_meas("seen");
    stopwatch.end_meas("seen");
    assert_eq!(
        stopwatch.set_cpu_usage_meas_name("seen"),
        Err(CpuNameError::AlreadyMeasured("seen".into()))
    );
    assert_eq!(
        CpuNameError::AlreadyMeasured("seen".into()).to_string(),
        "Measurement name `seen` already present. A measurement must be selected for CPU usage measurements before being performed for the first time."
    );
}

#[test]
fn sync_happens_before_every_timestamp_of_repeated_measurements_only() {
    let syncs = Arc::new(AtomicU64::new(0));
    // A `DeviceSync` over `Profiled<NdArray>` reports its syncs as `sync` ops.
    use burn::backend::NdArray;
    use burn_profiled::probe::{self, Op, OpObserver};
    use burn_profiled::{DeviceSync, Profiled};
    struct CountSyncs(Arc<AtomicU64>, std::thread::ThreadId);
    impl OpObserver for CountSyncs {
        fn op_started(&self, op: &'static Op) {
            if op.name() == "sync" && std::thread::current().id() == self.1 {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        fn op_finished(&self, _op: &'static Op) {}
    }
    let _observing = probe::observe(Arc::new(CountSyncs(
        syncs.clone(),
        std::thread::current().id(),
    )));
    let mut stopwatch = Stopwatch::new(StopwatchConfig::new(1, None).sync(DeviceSync::new::<
        Profiled<NdArray>,
    >(
        Default::default()
    )));
    stopwatch.start_meas("a");
    stopwatch.end_meas("a");
    assert_eq!(syncs.load(Ordering::Relaxed), 0, "no sync in warm-up");
    stopwatch.finish_iter();
    stopwatch.start_meas("a");
    stopwatch.end_meas("a");
    assert_eq!(
        syncs.load(Ordering::Relaxed),
        2,
        "a sync before each timestamp"
    );
    stopwatch.start_one_time_measurement("once");
    stopwatch.end_one_time_measurement("once");
    assert_eq!(
        syncs.load(Ordering::Relaxed),
        2,
        "one-time measurements never sync"
    );
}

#[test]
fn the_report_serialises_to_json() {
    let (stopwatch, _) = documented_example();
    let json: serde_json::Value = serde_json::from_str(&stopwatch.report().to_json()).unwrap();
    assert_eq!(json["state"]["state"], "measured");
    assert_eq!(json["state"]["iterations"], 11);
    assert_eq!(json["state"]["entries"][1]["name"], "meas2");
    assert_eq!(json["state"]["entries"][1]["intervals"], 22);
    assert_eq!(json["one_time"][0]["name"], "complete_run");
}
