//! The stopwatch: runtime per code section over the iterations of a training loop, with
//! warm-up, per-iteration and per-interval averages, one-time measurements and CPU usage. The
//! port of the original `Stopwatch`, with its report layout.
//!
//! Process-wide: [`enable`] it once in the main program; everywhere else call the functions
//! here, which do nothing (and cost one atomic load) until then.
//!
//! ```
//! use std::num::NonZeroUsize;
//! # use burn_profiled_core as burn_profiled;
//! use burn_profiled::stopwatch::{self, StopwatchConfig};
//!
//! stopwatch::enable(StopwatchConfig::new(2, NonZeroUsize::new(10)));
//! stopwatch::set_cpu_usage_meas_name("step").unwrap();
//! stopwatch::start_one_time_measurement("complete run");
//! for _ in 0..5 {
//!     let _step = stopwatch::meas("step");
//!     stopwatch::measure("forward", || { /* ... */ });
//!     drop(_step);
//!     stopwatch::finish_iter();
//! }
//! stopwatch::end_one_time_measurement("complete run");
//! let report = stopwatch::report().unwrap();
//! println!("{report}");
//! ```
//!
//! Deviations from the original, on purpose: an entry never measured after warm-up prints
//! `n/a` as its per-interval time instead of crashing; the CPU-usage line is followed by the
//! process's peak and mean resident memory.

mod report;
mod timer;

use std::marker::PhantomData;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

pub use report::{CpuUsage, Entry, OneTime, Report, State};
pub use timer::{CpuNameError, Stopwatch, StopwatchConfig};

use crate::context::warmup;
use crate::device_sync::DeviceSync;

static STOPWATCH: OnceLock<Mutex<Stopwatch>> = OnceLock::new();

fn enabled() -> Option<MutexGuard<'static, Stopwatch>> {
    STOPWATCH
        .get()
        .map(|stopwatch| stopwatch.lock().unwrap_or_else(PoisonError::into_inner))
}

/// Enables the process-wide stopwatch.
///
/// # Panics
/// If it was enabled before: there is no disable.
pub fn enable(config: StopwatchConfig) {
    let stopwatch = Stopwatch::new(config);
    let warming_up = !stopwatch.warmup_finished();
    if STOPWATCH.set(Mutex::new(stopwatch)).is_err() {
        panic!(
            "Stopwatch singleton can be enabled only once (burn_profiled::stopwatch::enable was called twice)"
        );
    }
    warmup::set_in_warmup(warming_up);
}

/// Whether the stopwatch is enabled.
pub fn is_enabled() -> bool {
    STOPWATCH.get().is_some()
}

/// See [`Stopwatch::set_cpu_usage_meas_name`]; `Ok` while disabled.
pub fn set_cpu_usage_meas_name(name: &str) -> Result<(), CpuNameError> {
    enabled().map_or(Ok(()), |mut stopwatch| {
        stopwatch.set_cpu_usage_meas_name(name)
    })
}

/// See [`Stopwatch::start_meas`].
pub fn start_meas(name: &str) {
    synced(name, Stopwatch::begin_start, Stopwatch::start_now);
}

/// See [`Stopwatch::end_meas`].
pub fn end_meas(name: &str) {
    synced(name, Stopwatch::begin_end, Stopwatch::end_now);
}

/// A timestamp in two halves, `begin` then `now`, with the device synced between them without
/// the lock: on CubeCL the sync runs on the device thread, which may be running a step that
/// measures too (`LaunchThread::run`).
fn synced(
    name: &str,
    begin: fn(&mut Stopwatch, &str) -> Option<Option<DeviceSync>>,
    now: fn(&mut Stopwatch, &str),
) {
    let Some(sync) = enabled().and_then(|mut stopwatch| begin(&mut stopwatch, name)) else {
        return;
    };
    sync.iter().for_each(DeviceSync::sync);
    if let Some(mut stopwatch) = enabled() {
        now(&mut stopwatch, name);
    }
}

/// Measures `name` around `work` and returns its result.
pub fn measure<T>(name: &str, work: impl FnOnce() -> T) -> T {
    let _measurement = meas(name);
    work()
}

/// Starts measuring `name`; the measurement ends when the guard is dropped.
pub fn meas(name: &str) -> Measurement<'_> {
    let started = is_enabled();
    start_meas(name);
    Measurement {
        name: started.then_some(name),
        _not_send: PhantomData,
    }
}

/// A running measurement of [`meas`]; dropping it ends the measurement.
#[must_use = "the measurement ends when this guard is dropped"]
#[derive(Debug)]
pub struct Measurement<'a> {
    name: Option<&'a str>,
    _not_send: PhantomData<*const ()>,
}

impl Drop for Measurement<'_> {
    fn drop(&mut self) {
        if let Some(name) = self.name
            && !std::thread::panicking()
        {
            end_meas(name);
        }
    }
}

/// See [`Stopwatch::start_one_time_measurement`].
pub fn start_one_time_measurement(name: &str) {
    if let Some(mut stopwatch) = enabled() {
        stopwatch.start_one_time_measurement(name);
    }
}

/// See [`Stopwatch::end_one_time_measurement`].
pub fn end_one_time_measurement(name: &str) {
    if let Some(mut stopwatch) = enabled() {
        stopwatch.end_one_time_measurement(name);
    }
}

/// Ends an iteration and prints the report to stdout when the print schedule says so.
///
/// # Panics
/// If a repeated measurement is still running.
pub fn finish_iter() {
    let report = enabled().and_then(|mut stopwatch| {
        let report = stopwatch.finish_iter();
        warmup::set_in_warmup(!stopwatch.warmup_finished());
        report
    });
    if let Some(report) = report {
        println!("{report}");
    }
}

/// Prints the report to stdout (nothing while disabled).
pub fn print_eval_times() {
    if let Some(report) = report() {
        println!("{report}");
    }
}

/// The report so far; `None` while disabled.
pub fn report() -> Option<Report> {
    enabled().map(|stopwatch| stopwatch.report())
}

/// Iterations measured after warm-up; 0 while disabled or in warm-up.
pub fn num_nonwarmup_iters_measured() -> usize {
    enabled().map_or(0, |stopwatch| stopwatch.num_nonwarmup_iters_measured())
}
