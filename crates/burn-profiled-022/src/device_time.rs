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

use burn_profiled_core::context::thread;
use burn_profiled_core::device_time::correlate::{Activity, ApiCall, Kernel};
use burn_profiled_core::device_time::{self, DeviceTimeError, Source, SourceCounts};
use burn_profiled_core::trace::CUBECL_LAUNCH;
use cubecl_runtime::config::{TypeNameFormatLevel, type_name_format};
use cubecl_runtime::logging::{
    Duration, LaunchObservation, LaunchObserver, ProfileDuration, TimingMethod, TimingRequest,
};

/// A kernel's name as the timeline and the op table show it: CubeCL's balanced form (the
/// type without its path, then its generic arguments) cut to the type and its first argument
/// (`KernelBinop | AddOp`, `MatmulEntry | FusedMatmulArgs`): a matmul's full form runs to 25
/// arguments, and HTA's kernel breakdown leaves such names out.
fn kernel_name(kernel: &str) -> String {
    let balanced = type_name_format(kernel, TypeNameFormatLevel::Balanced);
    let parts: Vec<&str> = balanced.split(" | ").take(2).collect();
    parts.join(" | ")
}

/// A kernel's measurement, unread, with the block that launched it.
struct Timed {
    correlation: u32,
    /// The block's op id; none for a launch outside every block.
    op: Option<u64>,
    kernel: &'static str,
    measurement: Measurement,
}

enum Measurement {
    /// `profiled`: to be read once the step is over, with its launch call (the launch had
    /// been submitted when it was handed over).
    Deferred(ProfileDuration, LaunchCall),
    /// `timed`: read by CubeCL already (its profiling logger is on), a length without a start.
    Read {
        ended: Instant,
        length: Duration,
        method: TimingMethod,
    },
}

/// A launch call as the launching thread saw it: from `launched` to `profiled`.
struct LaunchCall {
    started: Instant,
    ended: Instant,
    thread: u32,
}

thread_local! {
    /// The blocks open on this thread, innermost last.
    static OPEN: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    /// When this thread's launch in progress was issued.
    static LAUNCHED: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
}

/// What the observer hands over, and what it counted.
struct Launches {
    /// Off once the session stopped recording: an observer installed after it and dropped
    /// after it puts this one back in CubeCL's slot, where it must cost nothing.
    active: AtomicBool,
    epoch: Instant,
    /// The earliest instant before `epoch` the host's clock holds (up to about a day): device
    /// timestamps before the epoch are placed from it.
    floor: Instant,
    timed: Mutex<Vec<Timed>>,
    next_correlation: AtomicU32,
    host_timed_kernels: AtomicU64,
    host_timed_ns: AtomicU64,
    unmeasured_kernels: AtomicU64,
    /// How far the device's timestamps are ahead of the host's clock, once they were seen to
    /// be (a kernel placed before its own launch, or after it was read), in ns.
    device_clock_ahead: Mutex<Option<i128>>,
}

/// A measurement read: start and end on the epoch's clock (signed: a device clock anchored
/// off the host's can put them before it), the length as measured, how it was measured, and
/// when its launch was handed over, for device timestamps.
struct Span {
    start: i128,
    end: i128,
    length: u64,
    method: TimingMethod,
    issued: Option<i128>,
    /// Its launch call, on the epoch's clock, for device timestamps.
    call: Option<ApiCall>,
}

impl Launches {
    /// Launches measured on a clock that starts at `epoch`.
    fn since(epoch: Instant) -> Self {
        Launches {
            active: AtomicBool::new(true),
            epoch,
            floor: earliest_before(epoch),
            timed: Mutex::new(Vec::new()),
            next_correlation: AtomicU32::new(1),
            host_timed_kernels: AtomicU64::new(0),
            host_timed_ns: AtomicU64::new(0),
            unmeasured_kernels: AtomicU64::new(0),
            device_clock_ahead: Mutex::new(None),
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

    fn signed_nanos(&self, at: Instant) -> i128 {
        self.since_floor(at.saturating_duration_since(self.floor))
    }

    /// A time given as its distance from [`Launches::floor`], on the epoch's clock.
    fn since_floor(&self, after_floor: Duration) -> i128 {
        after_floor.as_nanos() as i128 - self.epoch.duration_since(self.floor).as_nanos() as i128
    }

    /// Puts device timestamps on the host's clock where they are not: CubeCL anchors each
    /// device's clock to the host's once, and on Mesa's lavapipe that anchor was measured
    /// off by the machine's uptime (kernels hours after their launches, their lengths right).
    /// A kernel cannot start before its launch was submitted, nor end after it was read; when
    /// one does, the device clock's lead is taken as the least of each kernel's start minus
    /// its launch (the kernel that waited least, which on an idle device waited almost
    /// nothing), and kept for the rest of the run.
    fn align(&self, spans: &mut [Option<Span>], read_at: i128) {
        let device = || spans.iter().flatten().filter(|span| span.issued.is_some());
        let misplaced = device().any(|span| {
            span.issued.is_some_and(|issued| span.start < issued) || span.end > read_at
        });
        let mut ahead = self
            .device_clock_ahead
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if misplaced {
            let lead = device()
                .filter_map(|span| Some(span.start - span.issued?))
                .min();
            if let Some(lead) = lead {
                *ahead = Some(ahead.map_or(lead, |ahead: i128| ahead.min(lead)));
            }
        }
        if let Some(ahead) = *ahead {
            for span in spans
                .iter_mut()
                .flatten()
                .filter(|span| span.issued.is_some())
            {
                span.start -= ahead;
                span.end -= ahead;
            }
        }
    }

    /// Reads every measurement kept so far (each waits for its kernel), as activity records.
    fn read(&self, names: &mut HashMap<&'static str, String>) -> Vec<Activity> {
        let timed = std::mem::take(&mut *self.timed.lock().unwrap_or_else(PoisonError::into_inner));
        let mut read = Vec::with_capacity(timed.len());
        let mut spans = Vec::with_capacity(timed.len());
        for Timed {
            correlation,
            op,
            kernel,
            measurement,
        } in timed
        {
            let span = match measurement {
                Measurement::Deferred(measurement, call) => {
                    let method = measurement.timing_method();
                    let ticks = cubecl_environment::future::block_on(measurement.resolve());
                    let device = method == TimingMethod::Device;
                    ticks.map(|ticks| Span {
                        start: self.since_floor(ticks.start_duration_since(self.floor)),
                        end: self.since_floor(ticks.end_duration_since(self.floor)),
                        length: ticks.duration().as_nanos() as u64,
                        method,
                        issued: device.then(|| self.signed_nanos(call.started)),
                        call: device.then(|| ApiCall {
                            cbid: CUBECL_LAUNCH,
                            start_ns: self.nanos_since_epoch(call.started),
                            end_ns: self.nanos_since_epoch(call.ended),
                            thread: call.thread,
                        }),
                    })
                }
                Measurement::Read {
                    ended,
                    length,
                    method,
                } => {
                    let end = self.signed_nanos(ended);
                    Some(Span {
                        start: end - length.as_nanos() as i128,
                        end,
                        length: length.as_nanos() as u64,
                        method,
                        issued: None,
                        call: None,
                    })
                }
            };
            read.push((correlation, op, kernel));
            spans.push(span);
        }
        self.align(&mut spans, self.signed_nanos(Instant::now()));
        let mut records = Vec::with_capacity(2 * read.len());
        for ((correlation, op, kernel), span) in read.into_iter().zip(spans) {
            let Some(span) = span else {
                self.unmeasured_kernels.fetch_add(1, Ordering::Relaxed);
                continue;
            };
            if span.method == TimingMethod::System {
                self.host_timed_kernels.fetch_add(1, Ordering::Relaxed);
                self.host_timed_ns.fetch_add(span.length, Ordering::Relaxed);
                continue;
            }
            if let Some(external) = op {
                records.push(Activity::External {
                    external,
                    correlation,
                });
                if let Some(call) = span.call {
                    records.push(Activity::Api { correlation, call });
                }
            }
            let name = names
                .entry(kernel)
                .or_insert_with(|| kernel_name(kernel))
                .clone();
            records.push(Activity::Kernel(Kernel {
                correlation,
                start_ns: span.start.max(0) as u64,
                end_ns: span.end.max(0) as u64,
                name,
                ..Kernel::default()
            }));
        }
        records
    }
}

/// The earliest instant at most about a day before `at` that the host's clock can hold (a
/// monotonic clock starts at boot).
fn earliest_before(at: Instant) -> Instant {
    let mut back = Duration::from_secs(1 << 16);
    loop {
        if let Some(earlier) = at.checked_sub(back) {
            return earlier;
        }
        if back.is_zero() {
            return at;
        }
        back /= 2;
    }
}

impl LaunchObserver for Launches {
    fn launched(&self, _kernel: &'static str) {
        if self.active.load(Ordering::Relaxed) {
            LAUNCHED.set(Some(Instant::now()));
        }
    }

    fn timing(&self) -> TimingRequest {
        if self.active.load(Ordering::Relaxed) {
            TimingRequest::Deferred
        } else {
            TimingRequest::None
        }
    }

    fn profiled(&self, kernel: &'static str, profile: ProfileDuration) {
        let ended = Instant::now();
        let call = LaunchCall {
            started: LAUNCHED.take().unwrap_or(ended),
            ended,
            thread: thread::os_thread_id(),
        };
        self.keep(kernel, Measurement::Deferred(profile, call));
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

    /// A measurement that resolves to a kernel of `micros` ending `ahead` after it is read.
    fn read_later(micros: u64, ahead: Duration) -> ProfileDuration {
        ProfileDuration::new_device_time(async move {
            let end = Instant::now() + ahead;
            cubecl_runtime::logging::ProfileTicks::from_start_end(
                end - Duration::from_micros(micros),
                end,
            )
        })
    }

    #[test]
    fn a_kernel_the_device_timed_in_a_block_is_that_blocks_with_its_start_and_end() {
        let issued = Instant::now();
        let launches = Launches::since(issued);
        OPEN.with(|open| open.borrow_mut().push(7));
        launches.profiled("cubecl::elemwise_fuse<f32>", read_later(3, Duration::ZERO));
        OPEN.with(|open| open.borrow_mut().pop());
        std::thread::sleep(Duration::from_millis(1));
        let records = launches.read(&mut HashMap::new());
        assert_eq!(
            records[0],
            Activity::External {
                external: 7,
                correlation: 1
            }
        );
        let [(1, start, end, "elemwise_fuse | f32")] = kernels(&records)[..] else {
            panic!("one kernel: {records:?}");
        };
        assert_eq!(end - start, 3_000);
        assert!(
            start >= 1_000_000,
            "placed where the device put it: {start} ns"
        );
        assert_eq!(*launches.device_clock_ahead.lock().unwrap(), None);
    }

    #[test]
    fn device_timestamps_an_hour_ahead_of_the_host_are_put_back_after_their_launch() {
        let launches = Launches::since(Instant::now());
        launches.profiled("matmul", read_later(5, Duration::from_secs(3600)));
        let launched = launches.nanos_since_epoch(Instant::now());
        launches.profiled("exp", read_later(2, Duration::from_secs(3600)));
        let records = launches.read(&mut HashMap::new());
        let read = launches.nanos_since_epoch(Instant::now());
        let kernels = kernels(&records);
        assert_eq!(kernels.len(), 2);
        for &(_, start, end, name) in &kernels {
            assert!(
                start <= launched + 1_000_000 && end <= read,
                "{name}: {start}..{end} ns, launched by {launched}, read at {read}"
            );
        }
        assert_eq!(
            kernels[0].2 - kernels[0].1,
            5_000,
            "lengths are the device's"
        );
    }

    #[test]
    fn a_kernel_launched_outside_every_block_is_named_by_no_block() {
        let launches = Launches::since(Instant::now());
        launches.profiled("copy", read_later(1, Duration::ZERO));
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
