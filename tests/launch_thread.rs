//! Steps on the launch thread, against a stand-in for CubeCL's device thread with the same
//! semantics: tasks run one at a time in the order they were sent, the sender blocks until its
//! task has run, and a task sent from the device thread itself runs inline. What reaches NVTX
//! is seen by the recorder attached in-process.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Once};

use burn::backend::{Autodiff, NdArray};
use burn::tensor::{Distribution, Tensor, TensorData};
use burn_backend::ops::FloatTensorOps;
use burn_profiled::nvtx::{self, RangeConfig};
use burn_profiled::probe;
use burn_profiled::{LaunchThread, Profiled, stats, trace};
use burn_std::IntDType;
use nvtx_recorder::{Event, Kind, Message};

mod support;
use support::stand_in::stand_in;
use support::{Started, small_ops};

nvtx_recorder::install_static!();

/// The switches and the registry are process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn user_ranges() {
    static ENABLE: Once = Once::new();
    ENABLE.call_once(|| nvtx::enable(RangeConfig::new()));
}

/// The op ranges (domain `burn`) of `events`: the op's name at a push, `pop` at a pop, with
/// the depth NVTX reported.
fn op_ranges(events: &[Event]) -> Vec<(String, i32)> {
    events
        .iter()
        .filter(|e| matches!(e.kind, Kind::Push | Kind::Pop) && e.domain.as_deref() == Some("burn"))
        .map(|e| match (&e.kind, &e.message) {
            (Kind::Push, Message::Registered(name)) => (name.clone(), e.depth),
            (Kind::Pop, _) => ("pop".to_owned(), e.depth),
            other => panic!("unexpected op range event {other:?}"),
        })
        .collect()
}

#[test]
fn a_step_opens_its_op_ranges_on_the_launch_thread_in_op_order() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = stand_in("stand-in device 0");
    device.launch.name_thread();
    let caller = nvtx_recorder::current_tid();
    let before = (
        nvtx_recorder::events_of_thread(caller).len(),
        nvtx_recorder::events_of_thread(device.tid).len(),
    );

    let started = Arc::new(Started::default());
    let observing = probe::observe(started.clone());
    probe::set_op_ranges(true);
    let on_device = device.launch.run(small_ops::<Profiled<NdArray>>);
    // Outside a step, ops run where they are called.
    let here = small_ops::<Profiled<NdArray>>();
    probe::set_op_ranges(false);
    drop(observing);

    assert_eq!(
        on_device,
        small_ops::<NdArray>(),
        "results change on the launch thread"
    );
    assert_eq!(here, on_device);
    let ops = started.0.lock().unwrap().clone();
    let (in_step, outside) = ops.split_at(ops.len() / 2);
    let names = |ops: &[(&'static str, u64)]| -> Vec<&'static str> {
        ops.iter().map(|(name, _)| *name).collect()
    };
    let expected = [
        "float_from_data",
        "float_matmul",
        "float_exp",
        "float_add",
        "float_into_data",
    ];
    assert_eq!(
        (names(in_step), names(outside)),
        (expected.to_vec(), expected.to_vec())
    );
    assert!(in_step.iter().all(|(_, tid)| *tid == device.tid), "{ops:?}");
    assert!(outside.iter().all(|(_, tid)| *tid == caller), "{ops:?}");
    let ranges_of = |ops: &[(&'static str, u64)]| -> Vec<(String, i32)> {
        ops.iter()
            .flat_map(|(name, _)| [(name.to_string(), 0), ("pop".to_owned(), 0)])
            .collect()
    };
    let on_device = op_ranges(&nvtx_recorder::events_of_thread(device.tid)[before.1..]);
    assert_eq!(on_device, ranges_of(in_step));
    let on_caller = op_ranges(&nvtx_recorder::events_of_thread(caller)[before.0..]);
    assert_eq!(on_caller, ranges_of(outside));
    assert_eq!(
        device.sent.load(Ordering::SeqCst),
        2,
        "naming, then the step"
    );
}

#[test]
fn a_training_step_runs_every_op_on_the_launch_thread_as_one_task() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = stand_in("stand-in device 1");
    device.launch.name_thread();
    let started = Arc::new(Started::default());
    let observing = probe::observe(started.clone());
    probe::set_op_ranges(true);
    let (step, data) = device.launch.run(|| {
        let x = Tensor::<Autodiff<Profiled<NdArray>>, 2>::random(
            [3, 4],
            Distribution::Default,
            &Default::default(),
        )
        .require_grad();
        let grads = x.clone().tanh().sum().backward();
        let grad = x.grad(&grads).unwrap();
        (nvtx_recorder::current_tid(), grad.into_data())
    });
    probe::set_op_ranges(false);
    drop(observing);

    assert_eq!(step, device.tid);
    assert_eq!(data.shape, [3, 4].into());
    let ops = started.0.lock().unwrap().clone();
    assert!(ops.len() > 5, "{ops:?}");
    assert!(ops.iter().all(|(_, tid)| *tid == device.tid), "{ops:?}");
    assert!(ops.iter().any(|(name, _)| *name == "float_tanh"));
    assert_eq!(
        device.sent.load(Ordering::SeqCst),
        2,
        "naming, then the step"
    );
}

#[test]
fn ops_keep_the_callers_phase_on_the_launch_thread() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    user_ranges();
    let device = stand_in("stand-in device 2");
    stats::reset();
    stats::start(stats::StatsConfig::default());
    nvtx::scope("outer", || {
        device.launch.run(small_ops::<Profiled<NdArray>>)
    });
    let _step = nvtx::range("stepping");
    device.launch.run(|| {
        let x = Tensor::<Profiled<NdArray>, 1>::from_floats([1.0, 2.0], &Default::default());
        let _ = nvtx::scope("inner", || x.clone().sin());
        let _ = x.cos();
    });
    drop(_step);
    // Back on the launch thread with no caller range: no phase.
    device
        .launch
        .run(|| Tensor::<Profiled<NdArray>, 1>::zeros([2], &Default::default()));
    stats::stop();

    let mut rows: Vec<(String, String)> = stats::snapshot()
        .rows(stats::GroupBy::OpAndPhase)
        .into_iter()
        .map(|row| (row.op, row.phase.unwrap()))
        .collect();
    rows.sort();
    let expected = [
        ("float_add", "outer"),
        ("float_cos", "stepping"),
        ("float_exp", "outer"),
        ("float_from_data", "outer"),
        ("float_from_data", "stepping"),
        ("float_into_data", "outer"),
        ("float_matmul", "outer"),
        ("float_sin", "inner"),
        ("float_zeros", "-"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(op, phase)| (op.to_string(), phase.to_string()))
        .collect();
    assert_eq!(rows, expected);
}

#[test]
fn a_panicking_op_reaches_the_caller_and_leaves_no_range_open() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = stand_in("stand-in device 3");
    let before = nvtx_recorder::events_of_thread(device.tid).len();
    probe::set_op_ranges(true);
    // NdArray has no argtopk: the op panics on the device thread.
    let x = Tensor::<Profiled<NdArray>, 1>::from_floats([3.0, 1.0, 2.0], &Default::default());
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        device.launch.run(|| {
            Profiled::<NdArray>::float_argtopk(x.into_primitive().tensor(), 0, 2, IntDType::I64)
        })
    }));
    // The device thread goes on.
    let after = device
        .launch
        .run(|| Tensor::<Profiled<NdArray>, 1>::ones([2], &Default::default()).into_data());
    probe::set_op_ranges(false);

    let message = panicked.expect_err("the panic reached the caller");
    let text = message
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| message.downcast_ref::<&str>().copied());
    assert_eq!(
        text,
        Some("not implemented: float_argtopk not implemented for ndarray")
    );
    assert_eq!(after, TensorData::from([1.0f32, 1.0]));
    let ranges = op_ranges(&nvtx_recorder::events_of_thread(device.tid)[before..]);
    let names: Vec<&str> = ranges.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "float_argtopk",
            "pop",
            "float_ones",
            "pop",
            "float_into_data",
            "pop"
        ]
    );
    assert!(ranges.iter().all(|(_, depth)| *depth == 0));
}

#[test]
fn steps_from_several_threads_run_one_at_a_time_without_deadlock() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = stand_in("stand-in device 4");
    let before = nvtx_recorder::events_of_thread(device.tid).len();
    probe::set_op_ranges(true);
    let results: Vec<TensorData> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    let data = device.launch.run(small_ops::<Profiled<NdArray>>);
                    // Reads and syncs on the calling thread meanwhile.
                    let x = Tensor::<Profiled<NdArray>, 1>::ones([8], &Default::default());
                    x.sum().into_scalar();
                    <Profiled<NdArray> as burn::tensor::backend::Backend>::sync(&Default::default())
                        .unwrap();
                    data
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    probe::set_op_ranges(false);

    for data in &results {
        assert_eq!(*data, small_ops::<NdArray>());
    }
    // Four steps, one at a time on the device thread: every range closes before the next
    // opens, and the steps do not interleave.
    let ranges = op_ranges(&nvtx_recorder::events_of_thread(device.tid)[before..]);
    assert_eq!(ranges.len() % 4, 0, "{ranges:?}");
    for pair in ranges.chunks(2) {
        assert_eq!(
            (pair[0].1, pair[1].0.as_str(), pair[1].1),
            (0, "pop", 0),
            "{ranges:?}"
        );
    }
    let step = ranges.len() / 4;
    for other in ranges.chunks(step) {
        assert_eq!(other, &ranges[..step]);
    }
    assert_eq!(device.sent.load(Ordering::SeqCst), 4);
}

#[test]
fn the_launch_thread_is_named_in_nvtx_and_on_the_timeline() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = stand_in("stand-in device 5");
    device.launch.name_thread();
    let named: Vec<Event> = nvtx_recorder::events_of_thread(device.tid)
        .into_iter()
        .filter(|e| e.kind == Kind::NameThread)
        .collect();
    assert_eq!(named.len(), 1);
    assert_eq!(named[0].message.text(), Some("stand-in device 5"));
    assert_eq!(named[0].handle, Some(device.tid));
    let (json, _) = trace::to_json();
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let track = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "thread_name" && e["tid"] == device.tid)
        .unwrap_or_else(|| panic!("no name for the device thread's track in {json}"));
    assert_eq!(track["args"]["name"], "stand-in device 5");
}

#[test]
fn a_launch_thread_that_cannot_run_the_task_says_so() {
    let launch = LaunchThread::new::<NdArray>(Default::default(), "gone", |_task| {
        Err("the channel is closed".to_owned())
    });
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| launch.run(|| 1)));
    let message = panicked.unwrap_err();
    assert_eq!(
        message.downcast_ref::<String>().map(String::as_str),
        Some("the launch thread `gone` of device Cpu did not run the task: the channel is closed")
    );
}
