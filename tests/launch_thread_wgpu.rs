//! Steps on CubeCL's real device thread: burn's `Wgpu` backend, which runs without a GPU on
//! Mesa's lavapipe (a Vulkan driver on the CPU; `.ci/run` installs it). Run with
//! `cargo test --features wgpu --test launch_thread_wgpu`.
#![cfg(feature = "wgpu")]

use std::sync::{Arc, Mutex};

use burn::backend::wgpu::WgpuDevice;
use burn::backend::{Autodiff, Wgpu};
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use burn_profiled::probe;
use burn_profiled::{LaunchThread, Profiled};
use nvtx_recorder::{Event, Kind, Message};

mod support;
use support::Started;

nvtx_recorder::install_static!();

/// The switches and the registry are process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// The OS thread CubeCL launches the kernels on, from the NVTX name `cubecl` gives it.
fn device_thread(launch: &LaunchThread) -> u64 {
    let named: Vec<Event> = nvtx_recorder::events()
        .into_iter()
        .filter(|e| e.kind == Kind::NameThread && e.message.text() == Some(launch.thread_name()))
        .collect();
    assert!(!named.is_empty(), "{} was not named", launch.thread_name());
    named[0].tid
}

fn op_ranges(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter(|e| matches!(e.kind, Kind::Push | Kind::Pop) && e.domain.as_deref() == Some("burn"))
        .map(|e| match (&e.kind, &e.message) {
            (Kind::Push, Message::Registered(name)) => name.clone(),
            _ => "pop".to_owned(),
        })
        .collect()
}

fn small_ops<B: Backend>(device: &B::Device) -> TensorData {
    let x = Tensor::<B, 2>::from_floats([[1.0, 2.0], [3.0, 4.0]], device);
    let y = x.clone().matmul(x.clone()).exp() + x;
    y.into_data()
}

#[test]
fn cubecl_ops_of_a_step_run_on_the_device_thread_inside_their_ranges() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<Wgpu>(&device);
    assert!(
        launch.thread_name().starts_with("cubecl wgpu"),
        "{}",
        launch.thread_name()
    );
    let runner = device_thread(&launch);
    let caller = nvtx_recorder::current_tid();
    assert_ne!(runner, caller);

    let expected = small_ops::<Wgpu>(&device);
    let before = nvtx_recorder::events_of_thread(runner).len();
    let started = Arc::new(Started::default());
    let observing = probe::observe(started.clone());
    probe::set_op_ranges(true);
    let on_device = launch.run(|| small_ops::<Profiled<Wgpu>>(&device));
    probe::set_op_ranges(false);
    drop(observing);

    assert_eq!(on_device, expected, "results change on the device thread");
    let ops = started.0.lock().unwrap().clone();
    assert!(ops.iter().all(|(_, tid)| *tid == runner), "{ops:?}");
    let on_runner = op_ranges(&nvtx_recorder::events_of_thread(runner)[before..]);
    let expected: Vec<String> = ops
        .iter()
        .flat_map(|(name, _)| [name.to_string(), "pop".to_owned()])
        .collect();
    assert_eq!(on_runner, expected);
    assert!(expected.contains(&"float_matmul".to_owned()));
}

#[test]
fn a_training_step_on_the_device_thread_reads_and_syncs_without_deadlock() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    type B = Autodiff<Profiled<Wgpu>>;
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<Wgpu>(&device);
    let runner = device_thread(&launch);
    let started = Arc::new(Started::default());
    let observing = probe::observe(started.clone());
    probe::set_op_ranges(true);
    let step = |device: &WgpuDevice| {
        let w = Tensor::<B, 2>::from_floats([[0.5, -1.0], [2.0, 0.25]], device).require_grad();
        let x = Tensor::<B, 2>::from_floats([[1.0, 2.0], [3.0, 4.0]], device);
        let loss = x.matmul(w.clone()).tanh().sum();
        let grads = loss.backward();
        let grad = w.grad(&grads).unwrap().into_data();
        B::sync(device).unwrap();
        grad
    };
    let on_device = launch.run(|| step(&device));
    probe::set_op_ranges(false);
    drop(observing);

    assert_eq!(
        on_device,
        step(&device),
        "results change on the device thread"
    );
    let ops = started.0.lock().unwrap().clone();
    assert!(ops.iter().any(|(name, _)| *name == "float_tanh"), "{ops:?}");
    assert!(ops.iter().all(|(_, tid)| *tid == runner), "{ops:?}");
}

/// Stands for a kernel launch we can see: every op sends a mark through CubeCL's blocking
/// `exclusive`, into the queue its kernel launches go through.
struct Launching(LaunchThread);

impl probe::OpObserver for Launching {
    fn op_started(&self, op: &'static probe::Op) {
        let text = std::ffi::CString::new(format!("launch of {}", op.name())).unwrap();
        self.0.run(move || nvtx::mark_ascii(&text));
    }
    fn op_finished(&self, _op: &'static probe::Op) {}
}

#[test]
fn cubecl_ops_outside_a_step_queue_their_ranges_in_cubecls_own_queue() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<Wgpu>(&device);
    let runner = device_thread(&launch);
    let caller = nvtx_recorder::current_tid();
    let expected = small_ops::<Wgpu>(&device);
    let before = (
        nvtx_recorder::events_of_thread(caller).len(),
        nvtx_recorder::events_of_thread(runner).len(),
    );
    let attached = launch.attach().expect("CubeCL's launch thread has a queue");
    let started = Arc::new(Started::default());
    let observing = (
        probe::observe(started.clone()),
        probe::observe(Arc::new(Launching(launch.clone()))),
    );
    probe::set_op_ranges(true);
    let here = small_ops::<Profiled<Wgpu>>(&device);
    probe::set_op_ranges(false);
    drop(observing);
    <Wgpu as Backend>::sync(&device).unwrap();
    drop(attached);

    assert_eq!(here, expected, "results change");
    let ops = started.0.lock().unwrap().clone();
    assert!(ops.iter().all(|(_, tid)| *tid == caller), "{ops:?}");
    let on_runner: Vec<String> = nvtx_recorder::events_of_thread(runner)[before.1..]
        .iter()
        .filter_map(|e| match (&e.kind, &e.message) {
            (Kind::Push, Message::Registered(name)) if e.domain.as_deref() == Some("burn") => {
                Some(name.clone())
            }
            (Kind::Pop, _) if e.domain.as_deref() == Some("burn") => Some("pop".to_owned()),
            (Kind::Mark, message) => Some(message.text().unwrap_or("?").to_owned()),
            _ => None,
        })
        .collect();
    let expected: Vec<String> = ops
        .iter()
        .flat_map(|(name, _)| [name.to_string(), format!("launch of {name}"), "pop".into()])
        .collect();
    assert!(expected.contains(&"float_matmul".to_owned()));
    assert_eq!(on_runner, expected);
    assert!(
        op_ranges(&nvtx_recorder::events_of_thread(caller)[before.0..]).is_empty(),
        "no op range on the calling thread"
    );
}

#[test]
fn detaching_runs_the_ranges_still_queued() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<Wgpu>(&device);
    let runner = device_thread(&launch);
    let x = Tensor::<Profiled<Wgpu>, 2>::from_floats([[1.0, 2.0], [3.0, 4.0]], &device);
    <Wgpu as Backend>::sync(&device).unwrap();
    let before = nvtx_recorder::events_of_thread(runner).len();
    let attached = launch.attach().expect("CubeCL's launch thread has a queue");
    probe::set_op_ranges(true);
    // CubeCL holds what is queued without a flush until its queue fills or a blocking call:
    // the last op's range is still in there, with nothing after it.
    let y = x.clone() + x;
    probe::set_op_ranges(false);
    drop(attached);

    assert_eq!(
        op_ranges(&nvtx_recorder::events_of_thread(runner)[before..]),
        // `+` asks both tensors for their device first.
        [
            "float_device",
            "pop",
            "float_device",
            "pop",
            "float_add",
            "pop"
        ],
        "the queued ranges ran when the launch thread was detached"
    );
    drop(y);
}
