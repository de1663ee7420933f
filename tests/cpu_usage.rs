//! System-wide CPU usage as the stopwatch samples it: a busy interval reads far higher than a
//! sleeping one. Its own test binary, so no other test loads the CPU meanwhile.

use std::time::{Duration, Instant};

use burn_profiled::host::CpuMeter;

fn busy_for(duration: Duration) {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let end = Instant::now() + duration;
                let mut x = 1.0f64;
                while Instant::now() < end {
                    x = std::hint::black_box(x * 1.000001 + 1e-9);
                }
            });
        }
    });
}

#[test]
fn a_busy_interval_reads_higher_than_a_sleeping_one() {
    let mut meter = CpuMeter::new();
    std::thread::sleep(Duration::from_millis(300));
    let _ = meter.sample();
    std::thread::sleep(Duration::from_millis(400));
    let sleeping = meter.sample();
    busy_for(Duration::from_millis(400));
    let busy = meter.sample();
    assert!(
        (0.0..=100.0).contains(&sleeping) && (0.0..=100.0).contains(&busy),
        "{sleeping} {busy}"
    );
    assert!(busy > 60.0, "all cores busy for 400 ms read {busy}%");
    assert!(
        busy > sleeping + 40.0,
        "busy {busy}% vs sleeping {sleeping}%"
    );
}
