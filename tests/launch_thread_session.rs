//! A `Session` with a launch thread: steps run there, ops outside steps queue their ranges
//! there, and op ranges open there only once warm-up is over. Its own test binary: a session
//! enables the process-wide tools once.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use burn::backend::NdArray;
use burn::tensor::Tensor;
use burn_profiled::config::{Preset, RuntimeConfig};
use burn_profiled::probe;
use burn_profiled::{Profiled, Session, nvtx};
use nvtx_recorder::{Kind, Message};

mod support;
use support::Started;
use support::stand_in::stand_in;

nvtx_recorder::install_static!();

#[test]
fn steps_run_on_the_launch_thread_and_op_ranges_start_there_after_warmup() {
    type B = Profiled<NdArray>;
    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::preset(Preset::Profile);
    config.stopwatch.warmup_iters = 2;
    assert!(config.nvtx.steps_on_launch_thread);
    let device = Default::default();
    let mut session = Session::start::<B>(config, &device, out.path());
    let device_thread = stand_in("stand-in session device");
    device_thread.launch.name_thread();
    session.set_launch_thread(device_thread.launch.clone());
    let caller = nvtx_recorder::current_tid();
    let started = Arc::new(Started::default());
    let _observing = probe::observe(started.clone());

    let mut step_threads = Vec::new();
    for _ in 0..4 {
        let before = started.0.lock().unwrap().len();
        let tid = session.run_step(|| {
            nvtx::scope("forward", || {
                let x = Tensor::<B, 1>::from_floats([1.0, 2.0, 3.0], &device);
                let _ = x.exp().sum();
            });
            nvtx_recorder::current_tid()
        });
        step_threads.push((tid, before));
        session.finish_iter().unwrap();
    }
    // Outside steps, ops run where they are called and queue their ranges on the launch thread.
    let outside = Tensor::<B, 1>::from_floats([1.0], &device).cos();
    drop(outside);
    let summary = session.finish().unwrap();

    assert!(
        step_threads
            .iter()
            .all(|(tid, _)| *tid == device_thread.tid)
    );
    let ops = started.0.lock().unwrap().clone();
    assert!(
        ops.iter()
            .any(|(name, tid)| *name == "float_cos" && *tid == caller),
        "{ops:?}"
    );
    assert_eq!(
        device_thread.sent.load(Ordering::SeqCst),
        1 + 4 + 1,
        "naming, four steps, and the wait for the queue when the session finished"
    );

    // Op ranges on the launch thread only after warm-up: the third and fourth steps, then the
    // two ops outside steps and the session's closing sync, queued, and run by the time the
    // session finished.
    let ranges: Vec<String> = nvtx_recorder::events_of_thread(device_thread.tid)
        .iter()
        .filter(|e| e.kind == Kind::Push && e.domain.as_deref() == Some("burn"))
        .map(|e| match &e.message {
            Message::Registered(name) => name.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    let step = ["float_from_data", "float_exp", "float_sum"];
    let outside = ["float_from_data", "float_cos", "sync"];
    let expected: Vec<&str> = step.iter().chain(&step).chain(&outside).copied().collect();
    assert_eq!(ranges, expected);
    // The capture (`profile`: after warm-up) ends after the last queued range closed.
    let events = nvtx_recorder::events();
    let last_range_end = events
        .iter()
        .rposition(|e| e.kind == Kind::Pop && e.domain.as_deref() == Some("burn"))
        .unwrap();
    let capture_end = events.iter().rposition(|e| e.kind == Kind::End).unwrap();
    assert!(
        capture_end > last_range_end,
        "the capture ended before the ranges queued on the launch thread ran"
    );
    assert_eq!(
        device_thread.queued.load(Ordering::SeqCst),
        2 * outside.len(),
        "each op outside a step queued its range's start and end"
    );
    let on_caller = nvtx_recorder::events_of_thread(caller)
        .iter()
        .filter(|e| e.kind == Kind::Push && e.domain.as_deref() == Some("burn"))
        .count();
    assert_eq!(on_caller, 0, "no op range on the calling thread");

    // The step's phase reached the statistics; the launch thread has its own timeline track.
    let ops_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("ops.json")).unwrap())
            .unwrap();
    let exp = ops_json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["op"] == "float_exp")
        .unwrap();
    assert_eq!(
        (exp["phase"].as_str(), exp["calls"].as_u64()),
        (Some("forward"), Some(2))
    );
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("trace.json")).unwrap())
            .unwrap();
    let track = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "thread_name" && e["tid"] == device_thread.tid)
        .expect("a named track for the launch thread");
    assert_eq!(track["args"]["name"], "stand-in session device");
    assert_eq!(summary.steps, 4);
}
