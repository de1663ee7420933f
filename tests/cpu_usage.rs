//! The real CPU and memory meters, as the stopwatch samples them. Other processes fill the
//! machine's CPUs and memory as they like, so only what holds under any load is asserted here:
//! readings in range. How the
//! stopwatch weighs and reports the readings is tested with scripted meters in `stopwatch.rs`.

use std::num::NonZeroUsize;
use std::time::Duration;

use burn_profiled::host::CpuMeter;
use burn_profiled::stopwatch::{State, Stopwatch, StopwatchConfig};

fn spin(duration: Duration) {
    let end = std::time::Instant::now() + duration;
    let mut x = 1.0f64;
    while std::time::Instant::now() < end {
        x = std::hint::black_box(x * 1.000001 + 1e-9);
    }
}

#[test]
fn cpu_usage_reads_a_percentage_at_every_sample() {
    let mut meter = CpuMeter::new();
    let first = meter.sample();
    assert!((0.0..=100.0).contains(&first), "first sample {first}");
    for round in 0..4 {
        if round % 2 == 0 {
            std::thread::sleep(Duration::from_millis(50));
        } else {
            spin(Duration::from_millis(50));
        }
        let usage = meter.sample();
        assert!(
            usage.is_finite() && (0.0..=100.0).contains(&usage),
            "sample {round}: {usage}"
        );
    }
}

#[test]
fn the_stopwatch_reports_real_readings_in_range() {
    let mut stopwatch = Stopwatch::new(StopwatchConfig::new(0, NonZeroUsize::new(100)));
    stopwatch.set_cpu_usage_meas_name("step").unwrap();
    for _ in 0..3 {
        stopwatch.start_meas("step");
        spin(Duration::from_millis(20));
        stopwatch.end_meas("step");
        let _ = stopwatch.finish_iter();
    }
    let report = stopwatch.report();
    let State::Measured {
        iterations,
        cpu_usage: Some(cpu),
        ..
    } = &report.state
    else {
        panic!("3 measured iterations with CPU usage: {:?}", report.state);
    };
    assert_eq!(*iterations, 3);
    let mean = cpu.mean_percent.expect("time was measured");
    assert!((0.0..=100.0).contains(&mean), "mean CPU usage {mean}");
    let (peak, mean_rss) = (cpu.peak_rss_bytes.unwrap(), cpu.mean_rss_bytes.unwrap());
    assert!(
        0 < mean_rss && mean_rss <= peak,
        "RSS mean {mean_rss}, peak {peak}"
    );
}
