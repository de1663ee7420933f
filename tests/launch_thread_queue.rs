//! Ops outside a step, with a launch thread attached: each op queues the start and end of its
//! range on the launch thread, in the same FIFO as the work it sends there (its kernel
//! launches), and does not wait. Tested on a stand-in device thread with CubeCL's semantics.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use burn::backend::NdArray;
use burn::tensor::Tensor;
use burn_backend::ops::FloatTensorOps;
use burn_profiled::probe::{self, Op, OpObserver};
use burn_profiled::{LaunchThread, Profiled, stats};
use burn_std::IntDType;
use nvtx_recorder::{Event, Kind, Message};

mod support;
use support::stand_in::stand_in;
use support::{Started, small_ops};

nvtx_recorder::install_static!();

/// The switches and the registry are process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// The op ranges (domain `burn`) and marks of `events`: the op's name at a push, `pop` at a
/// pop, `mark <text>` at a mark.
fn ranges_and_marks(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match (&e.kind, &e.message) {
            (Kind::Push, Message::Registered(name)) if e.domain.as_deref() == Some("burn") => {
                Some(name.clone())
            }
            (Kind::Pop, _) if e.domain.as_deref() == Some("burn") => Some("pop".to_owned()),
            (Kind::Mark, message) => Some(format!("mark {}", message.text().unwrap_or("?"))),
            _ => None,
        })
        .collect()
}

/// Stands for the backend's kernel launch: every op sends a mark to the launch thread while
/// it runs, as CubeCL's ops send their launches.
struct Launching(LaunchThread);

impl OpObserver for Launching {
    fn op_started(&self, op: &'static Op) {
        let text = std::ffi::CString::new(format!("launch of {}", op.name())).unwrap();
        self.0.run(move || nvtx::mark_ascii(&text));
    }
    fn op_finished(&self, _op: &'static Op) {}
}

#[test]
fn ops_outside_a_step_queue_their_ranges_around_their_launches_on_the_attached_launch_thread() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = stand_in("queued device 0");
    let caller = nvtx_recorder::current_tid();
    let before = (
        nvtx_recorder::events_of_thread(caller).len(),
        nvtx_recorder::events_of_thread(device.tid).len(),
    );
    let attached = device.launch.attach().expect("the stand-in has a queue");
    let started = Arc::new(Started::default());
    let observing = (
        probe::observe(started.clone()),
        probe::observe(Arc::new(Launching(device.launch.clone()))),
    );
    probe::set_op_ranges(true);
    let here = small_ops::<Profiled<NdArray>>();
    probe::set_op_ranges(false);
    drop(observing);
    // Everything queued has run once a task sent after it has.
    device.launch.run(|| ());
    drop(attached);

    assert_eq!(here, small_ops::<NdArray>(), "results change");
    let ops = started.0.lock().unwrap().clone();
    assert!(ops.iter().all(|(_, tid)| *tid == caller), "{ops:?}");
    let expected: Vec<String> = ops
        .iter()
        .flat_map(|(name, _)| {
            [
                name.to_string(),
                format!("mark launch of {name}"),
                "pop".into(),
            ]
        })
        .collect();
    assert!(expected.contains(&"float_matmul".to_owned()));
    assert_eq!(
        ranges_and_marks(&nvtx_recorder::events_of_thread(device.tid)[before.1..]),
        expected,
        "each op's range, around its launch, on the launch thread"
    );
    assert_eq!(
        ranges_and_marks(&nvtx_recorder::events_of_thread(caller)[before.0..]),
        Vec::<String>::new(),
        "no op range on the calling thread"
    );
    assert_eq!(device.queued.load(Ordering::SeqCst), 2 * ops.len());
}

#[test]
fn ops_of_a_step_run_there_and_queue_nothing_and_detaching_brings_ranges_back() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = stand_in("queued device 1");
    let caller = nvtx_recorder::current_tid();
    let attached = device.launch.attach().expect("the stand-in has a queue");
    probe::set_op_ranges(true);
    let before = nvtx_recorder::events_of_thread(device.tid).len();
    let in_step = device.launch.run(small_ops::<Profiled<NdArray>>);
    let step_ranges = ranges_and_marks(&nvtx_recorder::events_of_thread(device.tid)[before..]);
    drop(attached);
    let before_caller = nvtx_recorder::events_of_thread(caller).len();
    let detached = small_ops::<Profiled<NdArray>>();
    probe::set_op_ranges(false);

    assert_eq!((&in_step, &detached), (&small_ops::<NdArray>(), &in_step));
    assert_eq!(
        device.queued.load(Ordering::SeqCst),
        0,
        "a step's ops run there"
    );
    assert_eq!(
        device.sent.load(Ordering::SeqCst),
        2,
        "the step, one task, and one at detaching that waits for the queue"
    );
    assert!(
        step_ranges.contains(&"float_exp".to_owned()),
        "{step_ranges:?}"
    );
    assert_eq!(
        ranges_and_marks(&nvtx_recorder::events_of_thread(caller)[before_caller..]),
        step_ranges,
        "once detached, the same ops keep their ranges where they run"
    );
}

#[test]
fn a_panicking_op_outside_a_step_leaves_no_range_open_on_the_launch_thread() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = stand_in("queued device 2");
    let attached = device.launch.attach().expect("the stand-in has a queue");
    let before = nvtx_recorder::events_of_thread(device.tid).len();
    probe::set_op_ranges(true);
    let x = Tensor::<Profiled<NdArray>, 1>::from_floats([3.0, 1.0, 2.0], &Default::default());
    // NdArray has no argtopk: the op panics on the calling thread.
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Profiled::<NdArray>::float_argtopk(x.into_primitive().tensor(), 0, 2, IntDType::I64)
    }));
    probe::set_op_ranges(false);
    device.launch.run(|| ());
    drop(attached);

    assert!(panicked.is_err());
    let ranges = ranges_and_marks(&nvtx_recorder::events_of_thread(device.tid)[before..]);
    assert_eq!(ranges.last().map(String::as_str), Some("pop"), "{ranges:?}");
    let pushes = ranges.iter().filter(|r| *r != "pop").count();
    assert_eq!(pushes * 2, ranges.len(), "balanced: {ranges:?}");
    assert!(ranges.contains(&"float_argtopk".to_owned()), "{ranges:?}");
}

#[test]
fn statistics_stay_with_the_calling_thread_and_its_phase() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = stand_in("queued device 3");
    let attached = device.launch.attach().expect("the stand-in has a queue");
    burn_profiled::nvtx::enable(burn_profiled::nvtx::RangeConfig::new());
    stats::reset();
    stats::start(stats::StatsConfig::default());
    probe::set_op_ranges(true);
    burn_profiled::nvtx::scope("evaluate", small_ops::<Profiled<NdArray>>);
    probe::set_op_ranges(false);
    stats::stop();
    device.launch.run(|| ());
    drop(attached);

    let rows = stats::snapshot().rows(stats::GroupBy::OpAndPhase);
    let matmul = rows
        .iter()
        .find(|row| row.op == "float_matmul")
        .unwrap_or_else(|| panic!("no float_matmul row in {rows:?}"));
    assert_eq!(
        (matmul.phase.as_deref(), matmul.calls),
        (Some("evaluate"), 1)
    );
}

#[test]
fn a_launch_thread_without_a_queue_cannot_be_attached() {
    let launch = LaunchThread::new::<NdArray>(Default::default(), "no queue", |task| {
        task();
        Ok(())
    });
    assert!(!launch.has_queue());
    assert!(launch.attach().is_none());
}

#[test]
#[should_panic(expected = "the launch thread `twice` already has a queue: give it one queue, once")]
fn a_second_queue_is_refused() {
    let _ = LaunchThread::new::<NdArray>(Default::default(), "twice", |task| {
        task();
        Ok(())
    })
    .with_queue(|task| task.run())
    .with_queue(|task| task.run());
}

#[test]
fn a_launch_thread_attached_twice_stays_attached_until_both_detach() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = stand_in("queued device twice");
    // The session's attachment and the user's own.
    let (first, second) = (
        device.launch.attach().unwrap(),
        device.launch.attach().unwrap(),
    );
    probe::set_op_ranges(true);
    drop(first);
    let _ = Tensor::<Profiled<NdArray>, 1>::from_floats([1.0], &Default::default()).exp();
    let queued = device.queued.load(Ordering::SeqCst);
    drop(second);
    let _ = Tensor::<Profiled<NdArray>, 1>::from_floats([1.0], &Default::default()).exp();
    probe::set_op_ranges(false);
    assert_eq!(
        queued, 4,
        "still attached: two ops queued their start and end"
    );
    assert_eq!(
        device.queued.load(Ordering::SeqCst),
        queued,
        "detached: nothing queued"
    );
}

/// Panics when `float_exp` starts or finishes, as `at` says.
struct PanicsAt(&'static str);

impl OpObserver for PanicsAt {
    fn op_started(&self, op: &'static Op) {
        assert!(
            !(self.0 == "start" && op.name() == "float_exp"),
            "observer at start"
        );
    }
    fn op_finished(&self, op: &'static Op) {
        assert!(
            !(self.0 == "finish" && op.name() == "float_exp"),
            "observer at finish"
        );
    }
}

#[test]
fn a_panicking_observer_reaches_the_caller_with_the_ops_range_closed() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = stand_in("queued device, panicking observer");
    let attached = device.launch.attach().unwrap();
    let before = nvtx_recorder::events_of_thread(device.tid).len();
    let x = Tensor::<Profiled<NdArray>, 1>::from_floats([1.0], &Default::default());
    probe::set_op_ranges(true);
    for at in ["start", "finish"] {
        let observing = probe::observe(Arc::new(PanicsAt(at)));
        let panic =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| x.clone().exp())).unwrap_err();
        drop(observing);
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        assert_eq!(message, format!("observer at {at}"));
    }
    probe::set_op_ranges(false);
    device.launch.run(|| ());
    drop(attached);
    let events = &nvtx_recorder::events_of_thread(device.tid)[before..];
    let ranges = ranges_and_marks(events);
    assert_eq!(ranges, ["float_exp", "pop", "float_exp", "pop"]);
}
