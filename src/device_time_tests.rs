//! Device time through the whole op path, with a stand-in for CUPTI: ops run on
//! `Profiled<NdArray>`, the stand-in records the ids they push, and the test plays CUPTI's part
//! with synthetic activity records.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use burn::backend::NdArray;
use burn::tensor::Tensor;

use burn_profiled_core::sinks::device_time::correlate::{Activity, Kernel};
use burn_profiled_core::sinks::device_time::{Source, SourceCounts, ingest, start_with, stop};

use crate::context::clock;
use crate::{Profiled, device_time, nvtx, probe, stats, trace};

/// The sinks' state is process-wide: these tests record into it one at a time.
static TEST_SERIAL: Mutex<()> = Mutex::new(());

/// Records, per push, the id and the ids open below it; counts pops. Its clock read
/// [`DEVICE_CLOCK_AT_START`] when it was made, and runs at the shared clock's rate.
struct Recorded {
    pushes: Mutex<Vec<(u64, Vec<u64>)>>,
    open: Mutex<Vec<u64>>,
    flushes: Mutex<usize>,
    made: Duration,
}

impl Default for Recorded {
    fn default() -> Self {
        Self {
            pushes: Mutex::default(),
            open: Mutex::default(),
            flushes: Mutex::default(),
            made: clock::now(),
        }
    }
}

impl Source for Recorded {
    fn push(&self, id: u64) {
        let mut open = self.open.lock().unwrap();
        self.pushes.lock().unwrap().push((id, open.clone()));
        open.push(id);
    }
    fn pop(&self, id: u64) {
        assert_eq!(
            self.open.lock().unwrap().pop(),
            Some(id),
            "pops the id it pushed"
        );
    }
    fn flush(&self) {
        *self.flushes.lock().unwrap() += 1;
    }
    fn stop(&self) -> SourceCounts {
        SourceCounts {
            dropped_records: 2,
            tag_errors: 0,
            ..SourceCounts::default()
        }
    }
    fn timestamp_ns(&self) -> u64 {
        DEVICE_CLOCK_AT_START + (clock::now() - self.made).as_nanos() as u64
    }
}

/// The names of the ops started, in order.
#[derive(Default)]
struct Started(Mutex<Vec<&'static str>>);

impl probe::OpObserver for Started {
    fn op_started(&self, op: &'static probe::Op) {
        self.0.lock().unwrap().push(op.name());
    }
    fn op_finished(&self, _op: &'static probe::Op) {}
}

/// The device clock when recording starts: kernels run 1 us per correlation id later.
const DEVICE_CLOCK_AT_START: u64 = 5_000_000_000;

fn kernel(correlation: u32, ns: u64, stream: u32) -> Activity {
    Activity::Kernel(Kernel {
        correlation,
        start_ns: DEVICE_CLOCK_AT_START + 1_000 * u64::from(correlation),
        end_ns: DEVICE_CLOCK_AT_START + 1_000 * u64::from(correlation) + ns,
        device: 0,
        stream,
        name: format!("kernel_{correlation}"),
        ..Kernel::default()
    })
}

use TEST_SERIAL as SERIAL;

#[test]
fn each_ops_kernels_add_up_in_its_row_of_the_op_table() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    nvtx::enable(nvtx::RangeConfig::new());
    stats::reset();
    stats::start(stats::StatsConfig::default());
    trace::clear();
    trace::start(trace::TraceConfig::default());
    let started = Arc::new(Started::default());
    let observing = probe::observe(started.clone());
    let before_start = clock::now();
    let source = Arc::new(Recorded::default());
    start_with(source.clone());
    let after_start = clock::now();
    let x =
        Tensor::<Profiled<NdArray>, 2>::from_floats([[1.0, 2.0], [3.0, 4.0]], &Default::default());
    let y = nvtx::scope("forward", || x.clone().matmul(x.clone()).exp());
    let _ = y + x;
    drop(observing);

    // Every op pushed its id on an empty stack (no op runs inside another here) and popped it.
    let pushes = source.pushes.lock().unwrap().clone();
    assert!(pushes.len() >= 4, "{pushes:?}");
    assert!(
        pushes.iter().all(|(_, below)| below.is_empty()),
        "{pushes:?}"
    );
    assert!(source.open.lock().unwrap().is_empty());
    // Ops and ids were handed out in the same order: the observer's names give each id its op.
    let names = started.0.lock().unwrap().clone();
    assert_eq!(names.len(), pushes.len());
    let id_of = |name: &str| {
        let index = names.iter().position(|n| *n == name).unwrap();
        pushes[index].0
    };
    let (matmul, exp) = ("float_matmul", "float_exp");
    // The matmul's two kernels: one record before, one after the correlation record, in two
    // buffers; the exp's kernel on another stream; the add launched nothing; a kernel of a call
    // made under no op.
    ingest([
        kernel(20, 700, 7),
        Activity::External {
            external: id_of(matmul),
            correlation: 20,
        },
    ]);
    ingest([
        Activity::External {
            external: id_of(matmul),
            correlation: 21,
        },
        kernel(21, 300, 7),
        Activity::External {
            external: id_of(exp),
            correlation: 22,
        },
        kernel(22, 50, 9),
        kernel(99, 5, 7),
    ]);
    assert_eq!(probe::flush_device_time(), 3);
    assert_eq!(*source.flushes.lock().unwrap(), 1);
    assert_eq!(
        stop(),
        device_time::DeviceTimeSummary {
            unattributed_kernels: 1,
            unattributed_ns: 5,
            incomplete_kernels: 0,
            tagged_api_calls: 3,
            dropped_records: 2,
            tag_errors: 0,
            source: "CUPTI",
            ..Default::default()
        }
    );
    stats::stop();
    trace::stop();

    let snapshot = stats::snapshot();
    let rows = snapshot.rows(stats::GroupBy::OpAndPhase);
    let row = |op: &str| rows.iter().find(|row| row.op == op).unwrap().clone();
    let (matmul, exp, add) = (row("float_matmul"), row("float_exp"), row("float_add"));
    assert_eq!(
        (
            matmul.kernels,
            matmul.device_total_ns,
            matmul.device_mean_ns
        ),
        (Some(2), Some(1_000), Some(1_000))
    );
    assert_eq!(matmul.phase.as_deref(), Some("forward"));
    assert_eq!((exp.kernels, exp.device_total_ns), (Some(1), Some(50)));
    assert_eq!((add.kernels, add.device_total_ns), (Some(0), Some(0)));
    let percent = matmul.device_percent.unwrap();
    assert!(
        (percent - 100.0 * 1_000.0 / 1_050.0).abs() < 1e-9,
        "{percent}"
    );
    // Sorted by device time.
    assert_eq!(rows[0].op, "float_matmul");
    assert_eq!(
        snapshot.device_totals(),
        Some((3, Duration::from_nanos(1_050)))
    );

    let table = snapshot.table(stats::GroupBy::Op);
    let header = table.lines().nth(1).unwrap();
    assert!(
        header.ends_with("Kernels  Device Total   Device Mean      Device %"),
        "{header}"
    );
    let matmul_line = table.lines().find(|l| l.contains("float_matmul")).unwrap();
    assert!(
        matmul_line.ends_with("2       1.000us       1.000us        95.24%"),
        "{matmul_line}"
    );
    assert!(
        table.ends_with("; device time: 1.050us (3 kernels)"),
        "{table}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&snapshot.to_json(stats::GroupBy::Op)).unwrap();
    assert_eq!(json["total_kernels"], 3);
    assert_eq!(json["device_total_ns"], 1_050);
    assert_eq!(json["rows"][0]["device_total_ns"], 1_000);

    // The timeline, as Kineto writes it: a process per device, a track per stream, the kernels
    // on the shared clock, an `ac2g` flow arrow from each launching op (no launch call was
    // recorded here) to its kernel.
    let (json, _) = trace::to_json();
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let track_named = |name: &str| {
        events
            .iter()
            .find(|e| e["name"] == "thread_name" && e["args"]["name"] == name && e["pid"] == 0)
            .map(|e| e["tid"].clone())
            .unwrap_or_else(|| panic!("no track {name}"))
    };
    let (stream_7, stream_9) = (track_named("stream 7"), track_named("stream 9"));
    assert_eq!((&stream_7, &stream_9), (&7.into(), &9.into()));
    let kernels: Vec<&serde_json::Value> = events.iter().filter(|e| e["cat"] == "kernel").collect();
    let names: Vec<(&str, &serde_json::Value)> = kernels
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), &e["tid"]))
        .collect();
    assert_eq!(
        names,
        [
            ("kernel_20", &stream_7),
            ("kernel_21", &stream_7),
            ("kernel_22", &stream_9)
        ]
    );
    // Kernel 20 ran 20 us after recording started, on the device's clock (read within a
    // fraction of a microsecond of the shared clock).
    let start_us = kernels[0]["ts"].as_f64().unwrap();
    let us = |time: Duration| time.as_nanos() as f64 / 1e3;
    assert!(
        us(before_start) + 19.9 <= start_us && start_us <= us(after_start) + 20.1,
        "kernel 20 at {start_us} us, recording started between {before_start:?} and {after_start:?}"
    );
    assert_eq!(kernels[0]["dur"], 0.7);
    let flows: Vec<(&str, &serde_json::Value, &serde_json::Value)> = events
        .iter()
        .filter(|e| e["cat"] == "ac2g")
        .map(|e| (e["ph"].as_str().unwrap(), &e["id"], &e["tid"]))
        .collect();
    let thread = serde_json::Value::from(burn_profiled_core::context::thread::os_thread_id());
    assert_eq!(flows.len(), 6);
    for pair in flows.chunks(2) {
        assert_eq!((pair[0].0, pair[0].2), ("s", &thread));
        assert_eq!((pair[1].0, pair[1].1), ("f", pair[0].1));
    }
}

#[test]
fn a_kernel_handed_over_one_collection_late_still_finds_its_op() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    static OP: crate::context::op::Op = crate::context::op::Op::new("late_op\0");
    start_with(Arc::new(Recorded::default()));
    let id = device_time::new_op_id();
    device_time::op_started(id, &OP, (0, 0, 0, 0), None, Duration::ZERO);
    device_time::op_finished(id);
    ingest([Activity::External {
        external: id,
        correlation: 1,
    }]);
    assert!(
        device_time::collect().is_empty(),
        "its kernel is still running"
    );
    ingest([kernel(1, 10, 0)]);
    let matched: Vec<&str> = device_time::collect()
        .iter()
        .map(|m| m.launch.op.name())
        .collect();
    assert_eq!(matched, ["late_op"]);
    // Forgotten after that interval: a kernel even later has no op any more.
    device_time::collect();
    ingest([
        Activity::External {
            external: id,
            correlation: 2,
        },
        kernel(2, 10, 0),
    ]);
    assert!(device_time::collect().is_empty());
    assert_eq!(stop().unattributed_kernels, 1);
}

/// Plays CUPTI for one kernel of `ns` launched under the op `id`, collects it, stops device
/// time and statistics, and returns the row of `float_exp`.
fn one_kernel_of(id: u64, ns: u64) -> stats::Row {
    ingest([
        Activity::External {
            external: id,
            correlation: 30,
        },
        kernel(30, ns, 0),
    ]);
    assert_eq!(probe::flush_device_time(), 1);
    assert_eq!(stop().unattributed_kernels, 0);
    stats::stop();
    let rows = stats::snapshot().rows(stats::GroupBy::Op);
    rows.into_iter()
        .find(|row| row.op == "float_exp")
        .expect("a float_exp row")
}

#[test]
fn nested_ops_push_their_ids_in_order_and_a_kernel_goes_to_the_innermost() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // `Profiled<Autodiff<Profiled<NdArray>>>`: the outer `float_exp` runs Autodiff's, which
    // runs the inner `Profiled`'s: two ops, one inside the other.
    type Nested = Profiled<burn::backend::Autodiff<Profiled<NdArray>>>;
    let source = Arc::new(Recorded::default());
    stats::reset();
    stats::start(stats::StatsConfig::default());
    let x = Tensor::<Nested, 1>::from_floats([1.0, 2.0], &Default::default());
    start_with(source.clone());
    let _ = x.exp();
    let pushes = source.pushes.lock().unwrap().clone();
    let (outer, inner) = (pushes[0].0, pushes[1].0);
    assert_eq!(pushes, [(outer, vec![]), (inner, vec![outer])]);
    assert!(source.open.lock().unwrap().is_empty(), "both popped");
    // CUPTI tags the launch with the innermost id.
    let exp = one_kernel_of(inner, 40);
    // Both layers report under the same name: two calls, one kernel.
    assert_eq!(
        (exp.calls, exp.kernels, exp.device_total_ns),
        (2, Some(1), Some(40))
    );
}

/// Records each id pushed with the OS thread it was pushed on, and each pop's thread.
#[derive(Default)]
struct Threads {
    events: Mutex<Vec<(Option<u64>, u32)>>,
}

impl Source for Threads {
    fn push(&self, id: u64) {
        let tid = burn_profiled_core::context::thread::os_thread_id();
        self.events.lock().unwrap().push((Some(id), tid));
    }
    fn pop(&self, _id: u64) {
        let tid = burn_profiled_core::context::thread::os_thread_id();
        self.events.lock().unwrap().push((None, tid));
    }
    fn flush(&self) {}
    fn stop(&self) -> SourceCounts {
        SourceCounts::default()
    }
    fn timestamp_ns(&self) -> u64 {
        DEVICE_CLOCK_AT_START
    }
}

#[test]
fn an_op_outside_a_step_tags_its_launches_on_the_attached_launch_thread() {
    use std::sync::mpsc;

    use crate::context::launch::LaunchThread;

    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // A launch thread that only queues: a FIFO of jobs on a thread of its own.
    let (jobs, queue) = mpsc::channel::<Box<dyn FnOnce() + Send>>();
    let (tid_sender, tid) = mpsc::channel();
    let device_thread = std::thread::spawn(move || {
        tid_sender
            .send(burn_profiled_core::context::thread::os_thread_id())
            .unwrap();
        for job in queue {
            job();
        }
    });
    let launch_tid = tid.recv().unwrap();
    let queued = Mutex::new(jobs.clone());
    let launch = LaunchThread::new::<NdArray>(Default::default(), "queue only", |_task| {
        Err("this stand-in only queues".to_owned())
    })
    .with_queue(move |task| {
        let _ = queued.lock().unwrap().send(Box::new(move || task.run()));
    });
    let source = Arc::new(Threads::default());
    stats::reset();
    stats::start(stats::StatsConfig::default());
    let x = Tensor::<Profiled<NdArray>, 1>::from_floats([1.0, 2.0], &Default::default());
    let attached = launch.attach().unwrap();
    start_with(source.clone());
    let _ = x.exp();
    drop(attached);
    // Every queued job has run once the thread ends.
    drop(jobs);
    drop(launch);
    device_thread.join().unwrap();

    let events = source.events.lock().unwrap().clone();
    let id = events[0].0.expect("a push first");
    assert_eq!(events, [(Some(id), launch_tid), (None, launch_tid)]);
    assert_ne!(
        launch_tid,
        burn_profiled_core::context::thread::os_thread_id()
    );
    let exp = one_kernel_of(id, 70);
    assert_eq!(
        (exp.calls, exp.kernels, exp.device_total_ns),
        (1, Some(1), Some(70))
    );
}

/// Plays CUPTI's last forced flush when stopped: a kernel of the op `op`, one launched under an
/// id no op of this run had, and one handed over without an end.
#[derive(Default)]
struct HandsOverAtStop {
    pushed: Mutex<Vec<u64>>,
}

impl Source for HandsOverAtStop {
    fn push(&self, id: u64) {
        self.pushed.lock().unwrap().push(id);
    }
    fn pop(&self, _id: u64) {}
    fn flush(&self) {}
    fn stop(&self) -> SourceCounts {
        let op = *self.pushed.lock().unwrap().last().unwrap();
        let mut unended = kernel(42, 0, 0);
        if let Activity::Kernel(kernel) = &mut unended {
            (kernel.start_ns, kernel.end_ns) = (DEVICE_CLOCK_AT_START, 0);
        }
        ingest([
            Activity::External {
                external: op,
                correlation: 40,
            },
            kernel(40, 25, 0),
            Activity::External {
                external: u64::MAX,
                correlation: 41,
            },
            kernel(41, 5, 0),
            unended,
        ]);
        SourceCounts::default()
    }
    fn timestamp_ns(&self) -> u64 {
        DEVICE_CLOCK_AT_START
    }
}

#[test]
fn what_cupti_hands_over_while_stopping_reaches_the_op_table() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    stats::reset();
    stats::start(stats::StatsConfig::default());
    let x = Tensor::<Profiled<NdArray>, 1>::from_floats([1.0, 2.0], &Default::default());
    start_with(Arc::new(HandsOverAtStop::default()));
    let _ = x.exp();
    assert_eq!(
        stop(),
        device_time::DeviceTimeSummary {
            unattributed_kernels: 1,
            unattributed_ns: 5,
            incomplete_kernels: 1,
            tagged_api_calls: 2,
            dropped_records: 0,
            tag_errors: 0,
            source: "CUPTI",
            ..Default::default()
        }
    );
    assert_eq!(
        probe::flush_device_time(),
        1,
        "the exp's kernel, after stop"
    );
    stats::stop();
    let rows = stats::snapshot().rows(stats::GroupBy::Op);
    let exp = rows.iter().find(|row| row.op == "float_exp").unwrap();
    assert_eq!((exp.kernels, exp.device_total_ns), (Some(1), Some(25)));
}

#[test]
fn a_tag_is_popped_from_the_source_that_took_it_even_after_a_restart() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (first, second) = (Arc::new(Recorded::default()), Arc::new(Recorded::default()));
    start_with(first.clone());
    // An op's end queued on the launch thread runs after the recording stopped.
    device_time::tag_launches(7);
    stop();
    start_with(second.clone());
    device_time::tag_launches(8);
    device_time::untag_launches();
    device_time::untag_launches();
    stop();
    assert!(
        first.open.lock().unwrap().is_empty(),
        "7 popped from the first"
    );
    assert!(second.open.lock().unwrap().is_empty());
    assert_eq!(second.pushes.lock().unwrap().clone(), [(8, vec![])]);
}

#[test]
fn an_op_with_kernels_but_no_timed_call_has_a_row_without_percentiles() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    static OP: crate::context::op::Op = crate::context::op::Op::new("kernels_only\0");
    stats::reset();
    stats::start(stats::StatsConfig::default());
    start_with(Arc::new(Recorded::default()));
    // The op ran while statistics were off for its host time, e.g. in another session.
    let id = device_time::new_op_id();
    device_time::op_started(id, &OP, (0, 0, 0, 0), None, Duration::ZERO);
    device_time::op_finished(id);
    ingest([
        Activity::External {
            external: id,
            correlation: 50,
        },
        kernel(50, 80, 0),
    ]);
    stop();
    assert_eq!(probe::flush_device_time(), 1);
    stats::stop();
    let snapshot = stats::snapshot();
    let rows = snapshot.rows(stats::GroupBy::Op);
    let row = rows.iter().find(|row| row.op == "kernels_only").unwrap();
    assert_eq!(
        (row.calls, row.min_ns, row.p50_ns, row.p95_ns, row.max_ns),
        (0, 0, 0, 0, 0)
    );
    assert_eq!((row.kernels, row.device_total_ns), (Some(1), Some(80)));
    assert!(snapshot.table(stats::GroupBy::Op).contains("kernels_only"));
}

/// A device clock that gains 1% on the shared clock: far more than real clocks part (about a
/// microsecond a second), so that one offset for the whole recording would be off by tens of
/// microseconds within milliseconds.
struct Gaining {
    made: Duration,
}

impl Source for Gaining {
    fn push(&self, _id: u64) {}
    fn pop(&self, _id: u64) {}
    fn flush(&self) {}
    fn stop(&self) -> SourceCounts {
        SourceCounts::default()
    }
    fn timestamp_ns(&self) -> u64 {
        DEVICE_CLOCK_AT_START + (clock::now() - self.made).as_nanos() as u64 * 101 / 100
    }
}

/// Waits until the shared clock is `time` past `since`.
fn wait(since: Duration, time: Duration) {
    while clock::now() < since + time {
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_device_clock_that_parts_from_the_hosts_still_puts_each_kernel_where_it_ran() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    static OP: crate::context::op::Op = crate::context::op::Op::new("parted_op\0");
    let source = Arc::new(Gaining { made: clock::now() });
    start_with(source.clone());
    let mut placed = Vec::new();
    for (collection, correlation) in [60, 61, 62].into_iter().enumerate() {
        wait(clock::now(), Duration::from_millis(5));
        let id = device_time::new_op_id();
        device_time::op_started(id, &OP, (0, 0, 0, 0), None, clock::now());
        let before = clock::now();
        let device_ns = source.timestamp_ns();
        let after = clock::now();
        device_time::op_finished(id);
        ingest([
            Activity::External {
                external: id,
                correlation,
            },
            Activity::Kernel(Kernel {
                correlation,
                start_ns: device_ns,
                end_ns: device_ns + 1_010,
                name: format!("kernel_{correlation}"),
                ..Kernel::default()
            }),
        ]);
        wait(after, Duration::from_millis(5));
        let matched = device_time::collect();
        assert_eq!(matched.len(), 1, "collection {collection}");
        let kernel = &matched[0];
        let slack = Duration::from_micros(1);
        assert!(
            before - slack <= kernel.start && kernel.start <= after + slack,
            "collection {collection}: ran between {before:?} and {after:?}, placed at {:?}",
            kernel.start
        );
        placed.push(kernel.end - kernel.start);
    }
    stop();
    // Where a kernel ran follows the line; how long it ran is the device's own count.
    for duration in placed {
        assert_eq!(duration, Duration::from_nanos(1_010));
    }
}
