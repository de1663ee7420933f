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
use nvtx_recorder::{Kind, Message};

mod support;
use support::Started;
use support::nesting::{
    Launching, device_thread, launches_outside_their_ranges, on_four_threads, op_ranges, thread_ops,
};

nvtx_recorder::install_static!();

/// The switches and the registry are process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

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
        // (`+` asks both tensors for their device first: a query, with no range.)
        ["float_add", "pop"],
        "the queued ranges ran when the launch thread was detached"
    );
    drop(y);
}

/// A data loader and a training loop on one device: ops of several threads queue their ranges
/// on the one device thread at once. Each must still hold its own launches, and the ranges
/// stay nested.
#[test]
fn ops_of_four_threads_on_one_device_keep_their_launches_in_their_own_ranges() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<Wgpu>(&device);
    let runner = device_thread(&launch);
    let expected: Vec<TensorData> = (0..4).map(|t| thread_ops::<Wgpu>(t, &device)).collect();
    let before = nvtx_recorder::events_of_thread(runner).len();
    let attached = launch.attach().expect("CubeCL's launch thread has a queue");
    let observing = probe::observe(Arc::new(Launching(launch.clone())));
    probe::set_op_ranges(true);
    let results = on_four_threads(25, |t| thread_ops::<Profiled<Wgpu>>(t, &device));
    probe::set_op_ranges(false);
    drop(observing);
    drop(attached);

    for (t, results) in results.iter().enumerate() {
        assert!(
            results.iter().all(|r| *r == expected[t]),
            "thread {t}'s results change"
        );
    }
    let (broken, marks) =
        launches_outside_their_ranges(&nvtx_recorder::events_of_thread(runner)[before..]);
    assert!(
        marks >= 4 * 25 * 4,
        "every op's launch reached the device thread: {marks}"
    );
    assert_eq!(broken, Vec::<String>::new(), "on the device thread");
}

/// Holds the first `float_exp` of another thread until the test has detached its launch
/// thread.
struct HeldExp {
    started: std::sync::Barrier,
    detached: std::sync::Barrier,
    once: std::sync::Once,
}

impl probe::OpObserver for HeldExp {
    fn op_started(&self, op: &'static probe::Op) {
        if op.name() == "float_exp" {
            self.once.call_once(|| {
                self.started.wait();
                self.detached.wait();
            });
        }
    }
    fn op_finished(&self, _op: &'static probe::Op) {}
}

/// `Session::finish` detaches the launch thread while another thread's op may be running: that
/// op's end is queued after the detach, and must still run, or its range stays open for good.
#[test]
fn an_op_that_ends_after_its_launch_thread_was_detached_still_closes_its_range() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<Wgpu>(&device);
    let runner = device_thread(&launch);
    let x = Tensor::<Profiled<Wgpu>, 2>::from_floats([[1.0, 2.0], [3.0, 4.0]], &device);
    <Wgpu as Backend>::sync(&device).unwrap();
    let held = Arc::new(HeldExp {
        started: std::sync::Barrier::new(2),
        detached: std::sync::Barrier::new(2),
        once: std::sync::Once::new(),
    });
    let before = nvtx_recorder::events_of_thread(runner).len();
    let attached = launch.attach().expect("CubeCL's launch thread has a queue");
    let observing = probe::observe(held.clone());
    probe::set_op_ranges(true);
    let other = std::thread::spawn(move || x.exp());
    held.started.wait();
    drop(attached);
    held.detached.wait();
    let y = other.join().unwrap();
    probe::set_op_ranges(false);
    drop(observing);

    assert_eq!(
        op_ranges(&nvtx_recorder::events_of_thread(runner)[before..]),
        ["float_exp", "pop"],
        "the op's end ran on the device thread after the detach"
    );
    drop(y);
}

/// Polls `future` until it is ready, parking the thread in between.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(value) = future.as_mut().poll(&mut context) {
            return value;
        }
        std::thread::park();
    }
}

/// Reads do not hold the device thread's queue while they are awaited, so two reads can be
/// open there at once, and the first can end first. Its range must end with it, not close the
/// second's: the second's range is closed and opened again around the first's end.
#[test]
fn overlapping_reads_keep_their_ranges_nested_and_each_ends_with_its_read() {
    use burn::tensor::ops::{FloatTensorOps, IntTensorOps};
    use burn::tensor::{Int, TensorPrimitive};
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    type P = Profiled<Wgpu>;
    let device = WgpuDevice::default();
    let launch = LaunchThread::cubecl::<Wgpu>(&device);
    let runner = device_thread(&launch);
    let floats = Tensor::<P, 1>::from_floats([1.0, 2.0], &device);
    let ints = Tensor::<P, 1, Int>::from_ints([3, 4], &device);
    let TensorPrimitive::Float(floats) = floats.into_primitive() else {
        unreachable!("a float tensor")
    };
    let ints = ints.into_primitive();
    <Wgpu as Backend>::sync(&device).unwrap();
    let before = nvtx_recorder::events_of_thread(runner).len();
    let attached = launch.attach().expect("CubeCL's launch thread has a queue");
    probe::set_op_ranges(true);
    let waker = std::task::Waker::noop();
    let mut context = std::task::Context::from_waker(waker);
    let mut first = Box::pin(P::float_into_data(floats));
    let mut second = Box::pin(P::int_into_data(ints));
    // The first poll of each opens its range: the float read's, then the int read's.
    let first_ready = first.as_mut().poll(&mut context);
    let second_ready = second.as_mut().poll(&mut context);
    // A read ready at its first poll ends there: before the second opens, when it is the first
    // (rare: the device thread had to copy the data out in between); before the first ends,
    // when it is the second, which then nests inside the first as any op does.
    let first_ends_first = first_ready.is_pending() && second_ready.is_pending();
    let first_ends_at_once = first_ready.is_ready();
    let first = match first_ready {
        std::task::Poll::Ready(data) => data,
        std::task::Poll::Pending => block_on(first),
    };
    let second = match second_ready {
        std::task::Poll::Ready(data) => data,
        std::task::Poll::Pending => block_on(second),
    };
    probe::set_op_ranges(false);
    drop(attached);

    assert_eq!(first.unwrap().to_vec::<f32>().unwrap(), [1.0, 2.0]);
    assert_eq!(second.unwrap().to_vec::<i32>().unwrap(), [3, 4]);
    let expected: &[&str] = match (first_ends_at_once, first_ends_first) {
        (true, _) => &["float_into_data", "pop", "int_into_data", "pop"],
        (false, true) => &[
            "float_into_data",
            "int_into_data",
            "pop",
            "pop",
            "int_into_data",
            "pop",
        ],
        (false, false) => &["float_into_data", "int_into_data", "pop", "pop"],
    };
    assert_eq!(
        op_ranges(&nvtx_recorder::events_of_thread(runner)[before..]),
        expected,
        "the float read's range ends with it; the int read's goes on after"
    );
}
