//! Device time per block, from CubeCL's launch observer, without CUPTI: every kernel is timed
//! by the device (CUDA and HIP events, wgpu's timestamp queries), its measurement kept unread
//! while the step runs (`TimingRequest::Deferred`) and read when the session collects device
//! time, after a device sync. The observer is called on the thread that issues the launch,
//! the fusion thread, inside the block that launched it: that block is the kernel's op.
//!
//! Measured on the host instead (`TimingMethod::System`, wgpu's fallback without timestamp
//! queries) is never device time: those launches are counted apart.
//!
//! The observer has one slot in CubeCL: installing it displaces another (burn-instrument), and
//! one installed later displaces it. The session says so when it sees either.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use burn_profiled_core::device_time::correlate::{Activity, Kernel};
use burn_profiled_core::device_time::{self, DeviceTimeError, Source, SourceCounts};
use cubecl_runtime::config::{TypeNameFormatLevel, type_name_format};
use cubecl_runtime::logging::{
    Duration, LaunchObservation, LaunchObserver, ProfileDuration, TimingMethod, TimingRequest,
};

/// A kernel's measurement, unread, with the block that launched it.
struct Timed {
    correlation: u32,
    /// The block's op id; none for a launch outside every block.
    op: Option<u64>,
    kernel: &'static str,
    measurement: Measurement,
}

enum Measurement {
    /// `profiled`: to be read once the step is over.
    Deferred(ProfileDuration),
    /// `timed`: read by CubeCL already (its profiling logger is on), a length without a start.
    Read {
        ended: Instant,
        length: Duration,
        method: TimingMethod,
    },
}

thread_local! {
    /// The blocks open on this thread, innermost last.
    static OPEN: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// What the observer hands over, and what it counted.
struct Launches {
    /// Off once the session stopped recording: an observer installed after it and dropped
    /// after it puts this one back in CubeCL's slot, where it must cost nothing.
    active: AtomicBool,
    epoch: Instant,
    timed: Mutex<Vec<Timed>>,
    next_correlation: AtomicU32,
    host_timed_kernels: AtomicU64,
    host_timed_ns: AtomicU64,
    unmeasured_kernels: AtomicU64,
}

impl Launches {
    /// Launches measured on a clock that starts at `epoch`.
    fn since(epoch: Instant) -> Self {
        Launches {
            active: AtomicBool::new(true),
            epoch,
            timed: Mutex::new(Vec::new()),
            next_correlation: AtomicU32::new(1),
            host_timed_kernels: AtomicU64::new(0),
            host_timed_ns: AtomicU64::new(0),
            unmeasured_kernels: AtomicU64::new(0),
        }
    }

    fn keep(&self, kernel: &'static str, measurement: Measurement) {
        if !self.active.load(Ordering::Relaxed) {
            return;
        }
        let timed = Timed {
            correlation: self.next_correlation.fetch_add(1, Ordering::Relaxed),
            op: OPEN.with(|open| open.borrow().last().copied()),
            kernel,
            measurement,
        };
        self.timed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(timed);
    }

    fn nanos_since_epoch(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.epoch).as_nanos() as u64
    }

    /// Reads every measurement kept so far (each waits for its kernel), as activity records.
    fn read(&self, names: &mut HashMap<&'static str, String>) -> Vec<Activity> {
        let timed = std::mem::take(&mut *self.timed.lock().unwrap_or_else(PoisonError::into_inner));
        let mut records = Vec::with_capacity(2 * timed.len());
        for Timed {
            correlation,
            op,
            kernel,
            measurement,
        } in timed
        {
            // Start and end on the epoch's clock, and the length as measured.
            let span = match measurement {
                Measurement::Deferred(measurement) => {
                    let method = measurement.timing_method();
                    let ticks = cubecl_environment::future::block_on(measurement.resolve());
                    ticks.map(|ticks| {
                        let start = ticks.start_duration_since(self.epoch).as_nanos() as u64;
                        let end = ticks.end_duration_since(self.epoch).as_nanos() as u64;
                        (start, end, ticks.duration().as_nanos() as u64, method)
                    })
                }
                Measurement::Read {
                    ended,
                    length,
                    method,
                } => {
                    let (end, length) = (self.nanos_since_epoch(ended), length.as_nanos() as u64);
                    Some((end.saturating_sub(length), end, length, method))
                }
            };
            match span {
                None => {
                    self.unmeasured_kernels.fetch_add(1, Ordering::Relaxed);
                }
                Some((_, _, length_ns, TimingMethod::System)) => {
                    self.host_timed_kernels.fetch_add(1, Ordering::Relaxed);
                    self.host_timed_ns.fetch_add(length_ns, Ordering::Relaxed);
                }
                Some((start_ns, end_ns, _, TimingMethod::Device)) => {
                    if let Some(external) = op {
                        records.push(Activity::External {
                            external,
                            correlation,
                        });
                    }
                    let name = names
                        .entry(kernel)
                        .or_insert_with(|| type_name_format(kernel, TypeNameFormatLevel::Balanced))
                        .clone();
                    records.push(Activity::Kernel(Kernel {
                        correlation,
                        start_ns,
                        end_ns,
                        name,
                        ..Kernel::default()
                    }));
                }
            }
        }
        records
    }
}

impl LaunchObserver for Launches {
    fn launched(&self, _kernel: &'static str) {}

    fn timing(&self) -> TimingRequest {
        if self.active.load(Ordering::Relaxed) {
            TimingRequest::Deferred
        } else {
            TimingRequest::None
        }
    }

    fn profiled(&self, kernel: &'static str, profile: ProfileDuration) {
        self.keep(kernel, Measurement::Deferred(profile));
    }

    fn timed(&self, kernel: &'static str, length: Duration, method: TimingMethod) {
        let ended = Instant::now();
        self.keep(
            kernel,
            Measurement::Read {
                ended,
                length,
                method,
            },
        );
    }
}

/// The launch observer as the core's device-time source: installed while it records.
pub(crate) struct LaunchTimes {
    launches: Arc<Launches>,
    observation: Mutex<Option<LaunchObservation>>,
    names: Mutex<HashMap<&'static str, String>>,
}

/// Installs the launch observer, saying on stderr when it displaced another.
pub(crate) fn start() -> Result<Arc<dyn Source>, DeviceTimeError> {
    let launches = Arc::new(Launches::since(Instant::now()));
    let observation = LaunchObservation::new(launches.clone());
    if replaced_an_observer(&observation) {
        eprintln!("{}", displaced_note());
    }
    Ok(Arc::new(LaunchTimes {
        launches,
        observation: Mutex::new(Some(observation)),
        names: Mutex::new(HashMap::new()),
    }))
}

/// Whether installing `observation` took CubeCL's slot from another observer: its guard's
/// `Debug` is the only place CubeCL 0.11 says so.
fn replaced_an_observer(observation: &LaunchObservation) -> bool {
    format!("{observation:?}").contains("replaced_an_observer: true")
}

/// What the session says when its launch observer displaced another one.
pub(crate) fn displaced_note() -> String {
    "burn-profiled: another CubeCL launch observer was installed (burn-instrument, or a \
     program's own); CubeCL has one slot, so it sees no launch while burn-profiled records \
     device time, and gets the slot back when the session finishes"
        .to_owned()
}

impl Source for LaunchTimes {
    fn push(&self, id: u64) {
        OPEN.with(|open| open.borrow_mut().push(id));
    }

    fn pop(&self, id: u64) {
        OPEN.with(|open| {
            let mut open = open.borrow_mut();
            if open.last() == Some(&id) {
                open.pop();
            }
        });
    }

    fn flush(&self) {
        let mut names = self.names.lock().unwrap_or_else(PoisonError::into_inner);
        device_time::ingest(self.launches.read(&mut names));
    }

    fn stop(&self) -> SourceCounts {
        self.launches.active.store(false, Ordering::Relaxed);
        drop(
            self.observation
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        self.flush();
        let launches = &self.launches;
        SourceCounts {
            host_timed_kernels: launches.host_timed_kernels.load(Ordering::Relaxed),
            host_timed_ns: launches.host_timed_ns.load(Ordering::Relaxed),
            unmeasured_kernels: launches.unmeasured_kernels.load(Ordering::Relaxed),
            ..SourceCounts::default()
        }
    }

    fn timestamp_ns(&self) -> u64 {
        self.launches.nanos_since_epoch(Instant::now())
    }

    fn name(&self) -> &'static str {
        "CubeCL's launch observer"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device_time(start: Instant, micros: u64) -> ProfileDuration {
        let end = start + Duration::from_micros(micros);
        ProfileDuration::new_device_time(async move {
            cubecl_runtime::logging::ProfileTicks::from_start_end(start, end)
        })
    }

    fn kernels(records: &[Activity]) -> Vec<(u32, u64, u64, &str)> {
        records
            .iter()
            .filter_map(|record| match record {
                Activity::Kernel(kernel) => Some((
                    kernel.correlation,
                    kernel.start_ns,
                    kernel.end_ns,
                    kernel.name.as_str(),
                )),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_kernel_the_device_timed_in_a_block_is_that_blocks_with_its_start_and_end() {
        let launches = Launches::since(Instant::now());
        let start = launches.epoch + Duration::from_micros(10);
        OPEN.with(|open| open.borrow_mut().push(7));
        launches.profiled("cubecl::elemwise_fuse<f32>", device_time(start, 3));
        OPEN.with(|open| open.borrow_mut().pop());
        let records = launches.read(&mut HashMap::new());
        assert_eq!(
            records[0],
            Activity::External {
                external: 7,
                correlation: 1
            }
        );
        assert_eq!(
            kernels(&records),
            [(1, 10_000, 13_000, "elemwise_fuse | f32")]
        );
    }

    #[test]
    fn a_kernel_launched_outside_every_block_is_named_by_no_block() {
        let launches = Launches::since(Instant::now());
        launches.profiled("copy", device_time(launches.epoch, 1));
        let records = launches.read(&mut HashMap::new());
        assert_eq!(kernels(&records).len(), 1);
        assert!(
            !records
                .iter()
                .any(|record| matches!(record, Activity::External { .. })),
            "{records:?}"
        );
    }

    #[test]
    fn launches_timed_on_the_host_are_counted_apart_never_as_kernels() {
        let launches = Launches::since(Instant::now());
        let start = Instant::now();
        launches.profiled(
            "matmul",
            ProfileDuration::new_system_time(start, start + Duration::from_micros(40)),
        );
        launches.timed("exp", Duration::from_micros(2), TimingMethod::System);
        assert!(launches.read(&mut HashMap::new()).is_empty());
        assert_eq!(launches.host_timed_kernels.load(Ordering::Relaxed), 2);
        assert_eq!(launches.host_timed_ns.load(Ordering::Relaxed), 42_000);
    }

    #[test]
    fn a_length_read_by_cubecl_ends_when_it_was_handed_over() {
        let now = Instant::now();
        let launches = Launches::since(now.checked_sub(Duration::from_secs(1)).unwrap_or(now));
        launches.timed("exp", Duration::from_micros(5), TimingMethod::Device);
        let records = launches.read(&mut HashMap::new());
        let [(_, start, end, _)] = kernels(&records)[..] else {
            panic!("one kernel: {records:?}");
        };
        assert_eq!(end - start, 5_000);
    }

    #[test]
    fn a_measurement_that_came_back_empty_is_counted_not_zero() {
        let launches = Launches::since(Instant::now());
        launches.profiled(
            "matmul",
            ProfileDuration::new_device_time_maybe(async { None }),
        );
        assert!(launches.read(&mut HashMap::new()).is_empty());
        assert_eq!(launches.unmeasured_kernels.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn once_stopped_it_asks_for_no_timing_and_keeps_nothing() {
        let launches = Launches::since(Instant::now());
        launches.active.store(false, Ordering::Relaxed);
        assert_eq!(launches.timing(), TimingRequest::None);
        launches.timed("exp", Duration::from_micros(5), TimingMethod::Device);
        assert!(launches.read(&mut HashMap::new()).is_empty());
    }

    #[test]
    fn taking_the_slot_from_another_observer_is_seen() {
        struct Other;
        impl LaunchObserver for Other {
            fn launched(&self, _kernel: &'static str) {}
        }
        let first = LaunchObservation::new(Arc::new(Other));
        let second = LaunchObservation::new(Arc::new(Other));
        assert!(replaced_an_observer(&second));
        drop(second);
        drop(first);
        let alone = LaunchObservation::new(Arc::new(Other));
        assert!(!replaced_an_observer(&alone));
    }
}
