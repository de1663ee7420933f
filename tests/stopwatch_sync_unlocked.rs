//! The process-wide stopwatch syncs the device without holding its lock: on CubeCL the sync
//! runs on the device thread, which may be running a step (`LaunchThread::run`) that measures
//! too. One test: the stopwatch is enabled once per process.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use burn_profiled::DeviceSync;
use burn_profiled::stopwatch::{self, StopwatchConfig};

#[test]
fn a_sync_that_waits_for_a_step_measuring_on_another_thread_does_not_deadlock() {
    let (entered, in_sync) = mpsc::channel::<()>();
    let (release, released) = mpsc::channel::<()>();
    let (entered, released) = (Mutex::new(entered), Mutex::new(released));
    let timed_out = Arc::new(AtomicBool::new(false));
    let timed_out_in_sync = timed_out.clone();
    // The loader's first sync is queued behind the step the device thread runs: it returns
    // once that step has measured `forward`. Every other sync returns at once.
    stopwatch::enable(
        StopwatchConfig::new(0, NonZeroUsize::new(1000)).sync(DeviceSync::custom(
            "device thread running a step",
            move || {
                if std::thread::current().name() == Some("loader")
                    && entered.lock().unwrap().send(()).is_ok()
                {
                    let answer = released
                        .lock()
                        .unwrap()
                        .recv_timeout(Duration::from_secs(20));
                    timed_out_in_sync.fetch_or(answer.is_err(), Ordering::Relaxed);
                }
            },
        )),
    );
    let loader = std::thread::Builder::new()
        .name("loader".into())
        .spawn(|| stopwatch::measure("load batch", || ()))
        .unwrap();
    in_sync.recv().unwrap();
    drop(in_sync); // the loader's end sync returns at once
    stopwatch::measure("forward", || ());
    release.send(()).unwrap();
    loader.join().unwrap();
    assert!(
        !timed_out.load(Ordering::Relaxed),
        "the step's measurement waited for the loader's sync, which waited for the step"
    );
    stopwatch::finish_iter();
    assert_eq!(stopwatch::num_nonwarmup_iters_measured(), 1);
}
