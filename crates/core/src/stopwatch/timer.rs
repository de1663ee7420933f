//! The stopwatch itself: measurements, iterations, warm-up and the print schedule.

use std::num::NonZeroUsize;
use std::time::Duration;

use super::report::{CpuUsage, Entry, OneTime, Report, State};
use crate::device_sync::DeviceSync;
use crate::host::CpuMeter;

/// How a [`Stopwatch`] measures; see [`Stopwatch::new`].
///
/// ```
/// # use burn_profiled_core as burn_profiled;
/// use std::num::NonZeroUsize;
/// use burn_profiled::DeviceSync;
/// use burn_profiled::stopwatch::StopwatchConfig;
///
/// // 5 warm-up iterations, a report every 10 measured ones, device synced at each timestamp
/// // (Burn 0.21: `DeviceSync::new::<B>(device)`).
/// let config = StopwatchConfig::new(5, NonZeroUsize::new(10))
///     .sync(DeviceSync::custom("my device", || { /* wait for it */ }));
/// ```
pub struct StopwatchConfig {
    num_warmup_iters: usize,
    print_every_n_iters: Option<NonZeroUsize>,
    sync: Option<DeviceSync>,
    clock: Box<dyn FnMut() -> Duration + Send>,
    cpu_meter: Box<dyn FnMut() -> f64 + Send>,
    rss_meter: Box<dyn FnMut() -> Option<u64> + Send>,
}

impl StopwatchConfig {
    /// Measure after `num_warmup_iters` iterations; print a report every `print_every_n_iters`
    /// measured iterations (never when `None`).
    pub fn new(num_warmup_iters: usize, print_every_n_iters: Option<NonZeroUsize>) -> Self {
        // Its baseline is now, as psutil's is its import.
        let mut cpu = CpuMeter::new();
        StopwatchConfig {
            num_warmup_iters,
            print_every_n_iters,
            sync: None,
            clock: Box::new(crate::context::clock::now),
            cpu_meter: Box::new(move || cpu.sample()),
            rss_meter: Box::new(crate::host::rss_bytes),
        }
    }

    /// Sync this device before every timestamp of a repeated measurement, so queued device work
    /// lands inside the measurement it was issued in (the original's `do_cuda_sync`).
    pub fn sync(mut self, device: impl Into<DeviceSync>) -> Self {
        self.sync = Some(device.into());
        self
    }

    /// Reads time from `clock` instead of the monotonic clock (for scripted runs and tests).
    pub fn clock(mut self, clock: impl FnMut() -> Duration + Send + 'static) -> Self {
        self.clock = Box::new(clock);
        self
    }

    /// Reads system-wide CPU usage in percent from `meter` instead of the OS.
    pub fn cpu_meter(mut self, meter: impl FnMut() -> f64 + Send + 'static) -> Self {
        self.cpu_meter = Box::new(meter);
        self
    }

    /// Reads the process's resident memory in bytes from `meter` instead of the OS.
    pub fn rss_meter(mut self, meter: impl FnMut() -> Option<u64> + Send + 'static) -> Self {
        self.rss_meter = Box::new(meter);
        self
    }
}

/// One named measurement's running state: the original's accumulator.
#[derive(Debug, Default, Clone)]
struct Accumulator {
    start: Duration,
    total: Duration,
    count: usize,
    running: bool,
}

impl Accumulator {
    fn start(&mut self, now: Duration) {
        assert!(
            !self.running,
            "Trying to start a time emasurement which is already running"
        );
        self.start = now;
        self.running = true;
    }

    /// Ends the interval; returns its length.
    fn end(&mut self, now: Duration) -> Duration {
        assert!(
            self.running,
            "Trying to end a time measurement which was not started"
        );
        let interval = now.saturating_sub(self.start);
        self.total += interval;
        self.count += 1;
        self.running = false;
        interval
    }

    fn total(&self) -> Duration {
        assert!(
            !self.running,
            "Calling `get_accum_time()` not supported while measurement is running"
        );
        self.total
    }
}

/// The CPU-usage measurement: time-weighted system CPU percent and resident memory.
#[derive(Debug, Default, Clone)]
struct CpuAccumulator {
    name: String,
    weighted_percent: f64,
    seconds: f64,
    rss_peak: Option<u64>,
    rss_sum: u128,
    rss_samples: u64,
}

/// Times named sections of an iterative program: the port of the original `Stopwatch`.
///
/// Usually used through the process-wide functions of [`stopwatch`](crate::stopwatch); a
/// `Stopwatch` value is the same thing owned by one piece of code.
///
/// Misuse panics with the original's message, verbatim (typos included, so logs read the
/// same): starting a running measurement, ending one that was not started or an unknown name,
/// finishing an iteration with a measurement running, reusing a one-time name.
pub struct Stopwatch {
    config: StopwatchConfig,
    times: Vec<(String, Accumulator)>,
    one_time: Vec<(String, Accumulator)>,
    num_iters_finished: usize,
    warmup_finished: bool,
    cpu: Option<CpuAccumulator>,
}

/// The error of [`Stopwatch::set_cpu_usage_meas_name`] (a `ValueError` in the original).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuNameError {
    /// Another name was set before.
    #[error("CPU usage measurement name `{old}` already set. Cannot set it to `{new}`.")]
    AlreadySet {
        /// The name set before.
        old: String,
        /// The name asked for now.
        new: String,
    },
    /// The name was measured before it was selected.
    #[error(
        "Measurement name `{0}` already present. A measurement must be selected for CPU usage measurements before being performed for the first time."
    )]
    AlreadyMeasured(String),
}

impl Stopwatch {
    /// A stopwatch that starts counting iterations now.
    pub fn new(config: StopwatchConfig) -> Self {
        Stopwatch {
            warmup_finished: config.num_warmup_iters == 0,
            config,
            times: Vec::new(),
            one_time: Vec::new(),
            num_iters_finished: 0,
            cpu: None,
        }
    }

    fn entry(&mut self, name: &str) -> Option<&mut Accumulator> {
        self.times
            .iter_mut()
            .find(|(n, _)| n == name)
            .map(|(_, acc)| acc)
    }

    /// Selects the measurement whose intervals also sample CPU usage and resident memory.
    ///
    /// Setting the same name again is a no-op, so it can be called every iteration. It must
    /// come before the name is first measured (warm-up included).
    pub fn set_cpu_usage_meas_name(&mut self, name: &str) -> Result<(), CpuNameError> {
        if let Some(cpu) = &self.cpu {
            return if cpu.name == name {
                Ok(())
            } else {
                Err(CpuNameError::AlreadySet {
                    old: cpu.name.clone(),
                    new: name.to_owned(),
                })
            };
        }
        if self.entry(name).is_some() {
            return Err(CpuNameError::AlreadyMeasured(name.to_owned()));
        }
        self.times.push((name.to_owned(), Accumulator::default()));
        self.cpu = Some(CpuAccumulator {
            name: name.to_owned(),
            ..CpuAccumulator::default()
        });
        Ok(())
    }

    /// Starts the repeated measurement `name` (created on first use, warm-up included). Timed
    /// only after warm-up, after syncing the device when configured.
    pub fn start_meas(&mut self, name: &str) {
        self.synced(name, Self::begin_start, Self::start_now);
    }

    /// The first half of [`start_meas`](Self::start_meas): creates the entry; when the start
    /// is timed, the device to sync before the timestamp. The process-wide stopwatch syncs
    /// between the halves without holding its lock.
    #[doc(hidden)]
    pub fn begin_start(&mut self, name: &str) -> Option<Option<DeviceSync>> {
        if self.entry(name).is_none() {
            self.times.push((name.to_owned(), Accumulator::default()));
        }
        self.warmup_finished.then(|| self.config.sync.clone())
    }

    /// The second half of [`start_meas`](Self::start_meas): the timestamp.
    #[doc(hidden)]
    pub fn start_now(&mut self, name: &str) {
        let now = (self.config.clock)();
        if let Some(acc) = self.entry(name) {
            acc.start(now);
        }
    }

    /// Ends the repeated measurement `name`.
    ///
    /// # Panics
    /// If `name` was never started, or (after warm-up) is not running.
    pub fn end_meas(&mut self, name: &str) {
        self.synced(name, Self::begin_end, Self::end_now);
    }

    /// `begin`, the device synced when it asks, then `now`.
    fn synced(
        &mut self,
        name: &str,
        begin: fn(&mut Self, &str) -> Option<Option<DeviceSync>>,
        now: fn(&mut Self, &str),
    ) {
        if let Some(sync) = begin(self, name) {
            sync.iter().for_each(DeviceSync::sync);
            now(self, name);
        }
    }

    /// The first half of [`end_meas`](Self::end_meas), as [`begin_start`](Self::begin_start).
    ///
    /// # Panics
    /// If `name` was never started.
    #[doc(hidden)]
    pub fn begin_end(&mut self, name: &str) -> Option<Option<DeviceSync>> {
        assert!(
            self.entry(name).is_some(),
            "Entry `{name}` not present, cannot end measurment"
        );
        self.warmup_finished.then(|| self.config.sync.clone())
    }

    /// The second half of [`end_meas`](Self::end_meas): the timestamp and the interval.
    ///
    /// # Panics
    /// If `name` is not running.
    #[doc(hidden)]
    pub fn end_now(&mut self, name: &str) {
        let now = (self.config.clock)();
        let Some(acc) = self.entry(name) else { return };
        let start = acc.start;
        let interval = acc.end(now);
        crate::probe::measured(name, start, now);
        if self.cpu.as_ref().is_some_and(|cpu| cpu.name == name) {
            let usage = (self.config.cpu_meter)();
            let rss = (self.config.rss_meter)();
            if let Some(cpu) = &mut self.cpu {
                let seconds = interval.as_secs_f64();
                cpu.weighted_percent += seconds * usage;
                cpu.seconds += seconds;
                if let Some(rss) = rss {
                    cpu.rss_peak = Some(cpu.rss_peak.map_or(rss, |peak| peak.max(rss)));
                    cpu.rss_sum += u128::from(rss);
                    cpu.rss_samples += 1;
                }
            }
        }
    }

    /// Starts the one-time measurement `name`: not affected by warm-up, never synced, may span
    /// iterations.
    ///
    /// # Panics
    /// If `name` was used for a one-time measurement before, even one that ended.
    pub fn start_one_time_measurement(&mut self, name: &str) {
        assert!(
            !self.one_time.iter().any(|(n, _)| n == name),
            "One-time measurement `{name}` already present, cannot start it again"
        );
        let mut acc = Accumulator::default();
        acc.start((self.config.clock)());
        self.one_time.push((name.to_owned(), acc));
    }

    /// Ends the one-time measurement `name`.
    ///
    /// # Panics
    /// If `name` was never started, or ended before.
    pub fn end_one_time_measurement(&mut self, name: &str) {
        let now = (self.config.clock)();
        let acc = self
            .one_time
            .iter_mut()
            .find(|(n, _)| n == name)
            .map(|(_, acc)| acc);
        let Some(acc) = acc else {
            panic!("One-time measurement `{name}` not present, cannot end it");
        };
        let start = acc.start;
        acc.end(now);
        crate::probe::measured(name, start, now);
    }

    /// Ends an iteration; returns the report when the print schedule asks for one.
    ///
    /// # Panics
    /// If a repeated measurement is still running.
    pub fn finish_iter(&mut self) -> Option<Report> {
        if let Some((name, _)) = self.times.iter().find(|(_, acc)| acc.running) {
            panic!(
                "At the end of an iteration, all started measurements need to be ended. Measurement                 for '{name}' is started but not ended."
            );
        }
        self.num_iters_finished += 1;
        if !self.warmup_finished {
            self.warmup_finished = self.num_iters_finished == self.config.num_warmup_iters;
            return None;
        }
        let measured = self.num_nonwarmup_iters_measured();
        let due = self
            .config
            .print_every_n_iters
            .is_some_and(|every| measured > 0 && measured.is_multiple_of(every.get()));
        due.then(|| self.report())
    }

    /// Whether warm-up is over.
    pub fn warmup_finished(&self) -> bool {
        self.warmup_finished
    }

    /// Iterations finished after warm-up (0 during warm-up).
    pub fn num_nonwarmup_iters_measured(&self) -> usize {
        if self.warmup_finished {
            self.num_iters_finished
                .saturating_sub(self.config.num_warmup_iters)
        } else {
            0
        }
    }

    /// The measurements so far.
    ///
    /// # Panics
    /// If a repeated measurement is running (its total is not known yet).
    pub fn report(&self) -> Report {
        let state = if !self.warmup_finished {
            State::WarmupNotFinished {
                iterations_finished: self.num_iters_finished,
                warmup_iterations: self.config.num_warmup_iters,
            }
        } else if self.num_nonwarmup_iters_measured() == 0 {
            State::NoMeasuredIterations {
                warmup_iterations: self.config.num_warmup_iters,
            }
        } else {
            let iterations = self.num_nonwarmup_iters_measured();
            State::Measured {
                iterations,
                entries: self
                    .times
                    .iter()
                    .map(|(name, acc)| Entry::new(name, acc.total(), acc.count, iterations))
                    .collect(),
                cpu_usage: self.cpu.as_ref().map(|cpu| CpuUsage {
                    name: cpu.name.clone(),
                    // A weighted mean of readings in 0..=100, kept there against rounding
                    // (three readings of 100 once averaged 100.00000000000001).
                    mean_percent: (cpu.seconds > 0.0)
                        .then(|| (cpu.weighted_percent / cpu.seconds).clamp(0.0, 100.0)),
                    peak_rss_bytes: cpu.rss_peak,
                    mean_rss_bytes: (cpu.rss_samples > 0)
                        .then(|| (cpu.rss_sum / u128::from(cpu.rss_samples)) as u64),
                }),
            }
        };
        let one_time = self
            .one_time
            .iter()
            .map(|(name, acc)| OneTime {
                name: name.clone(),
                seconds: (!acc.running).then_some(acc.total.as_secs_f64()),
            })
            .collect();
        Report { state, one_time }
    }
}
