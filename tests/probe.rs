//! The per-op probe: observers, threads, switching at run time, per-op sync.

use std::sync::{Arc, Mutex};
use std::thread::{self, ThreadId};

use burn::backend::{Autodiff, NdArray};
use burn::tensor::Tensor;
use burn_profiled::Profiled;
use burn_profiled::probe::{self, Op, OpObserver};

/// Records `+name` / `-name` per thread.
#[derive(Default)]
struct Recorder(Mutex<Vec<(ThreadId, String)>>);

impl OpObserver for Recorder {
    fn op_started(&self, op: &'static Op) {
        self.push(format!("+{}", op.name()));
    }
    fn op_finished(&self, op: &'static Op) {
        self.push(format!("-{}", op.name()));
    }
}

impl Recorder {
    fn push(&self, event: String) {
        self.0.lock().unwrap().push((thread::current().id(), event));
    }

    /// This thread's events, in order.
    fn mine(&self) -> Vec<String> {
        let me = thread::current().id();
        let events = self.0.lock().unwrap();
        events
            .iter()
            .filter(|(t, _)| *t == me)
            .map(|(_, e)| e.clone())
            .collect()
    }
}

fn recorder() -> (Arc<Recorder>, probe::Observing) {
    let recorder = Arc::new(Recorder::default());
    let observing = probe::observe(recorder.clone());
    (recorder, observing)
}

#[test]
fn one_event_pair_per_op_on_the_calling_thread() {
    let (recorder, _observing) = recorder();
    let device = Default::default();
    let a = Tensor::<Profiled<NdArray>, 1>::from_floats([1.0, 2.0], &device);
    let b = (a.clone() * 2.0).exp();
    assert_eq!(
        recorder.mine(),
        [
            "+float_from_data",
            "-float_from_data",
            "+float_mul_scalar",
            "-float_mul_scalar",
            "+float_exp",
            "-float_exp"
        ]
    );
    drop(b);
}

/// A small workload: 1 + 2 * 500 ops, and the device lookups `matmul` makes.
fn matmul_loop() {
    let device = Default::default();
    let mut x = Tensor::<Profiled<NdArray>, 2>::ones([4, 4], &device);
    for _ in 0..500 {
        x = x.clone().matmul(x) / 4.0;
    }
}

#[test]
fn ops_on_several_threads_are_recorded_per_thread_none_lost() {
    let (recorder, _observing) = recorder();
    matmul_loop();
    let expected = recorder.mine();
    assert_eq!(
        expected.iter().filter(|e| *e == "+float_matmul").count(),
        500
    );
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let recorder = recorder.clone();
            thread::spawn(move || {
                matmul_loop();
                recorder.mine()
            })
        })
        .collect();
    for worker in workers {
        let events = worker.join().unwrap();
        assert!(
            events == expected,
            "a thread recorded {} events instead of {}",
            events.len(),
            expected.len()
        );
    }
}

#[test]
fn an_uninstalled_observer_sees_nothing_more() {
    let (recorder, observing) = recorder();
    let device = Default::default();
    let a = Tensor::<Profiled<NdArray>, 1>::zeros([3], &device);
    drop(observing);
    let _b = a.clone() + a;
    assert_eq!(recorder.mine(), ["+float_zeros", "-float_zeros"]);
}

#[test]
fn autodiff_over_profiled_shows_forward_and_backward_kernels() {
    let (recorder, _observing) = recorder();
    let device = Default::default();
    let x =
        Tensor::<Autodiff<Profiled<NdArray>>, 1>::from_floats([1.0, 2.0], &device).require_grad();
    let before_backward = {
        let y = x.clone().sin().sum();
        let n = recorder.mine().len();
        let grads = y.backward();
        x.grad(&grads).unwrap();
        n
    };
    let events = recorder.mine();
    let (forward, backward) = events.split_at(before_backward);
    assert!(forward.contains(&"+float_sin".to_string()), "{forward:?}");
    // d/dx sin(x) = cos(x): the backward pass runs float_cos as its own op.
    assert!(backward.contains(&"+float_cos".to_string()), "{backward:?}");
    assert!(!events.contains(&"+backward".to_string()), "{events:?}");
}

#[test]
fn profiled_over_autodiff_shows_the_backward_pass_as_one_op() {
    let (recorder, _observing) = recorder();
    let device = Default::default();
    let x =
        Tensor::<Profiled<Autodiff<NdArray>>, 1>::from_floats([1.0, 2.0], &device).require_grad();
    let y = x.clone().sin().sum();
    let n = recorder.mine().len();
    let grads = y.backward();
    assert_eq!(recorder.mine()[n..], ["+backward", "-backward"]);
    assert!(recorder.mine()[..n].contains(&"+float_set_require_grad".to_string()));
    assert_eq!(
        x.grad(&grads).unwrap().into_data().to_vec::<f32>().unwrap(),
        [1.0f32.cos(), 2.0f32.cos()]
    );
}

#[test]
fn per_op_sync_syncs_the_op_device_before_push_and_before_pop() {
    // The inner `Profiled` reports its `sync`, so the outer one's per-op syncs become visible.
    type B = Profiled<Profiled<NdArray>>;
    let device = Default::default();
    let a = Tensor::<B, 1>::from_floats([1.0, 2.0], &device);
    let (recorder, _observing) = recorder();
    probe::set_op_sync(true);
    let _b = a.clone().neg();
    probe::set_op_sync(false);
    let events = recorder.mine();
    #[rustfmt::skip]
    assert_eq!(
        events,
        [
            // The outer op asks the inner backend for its tensor's device (the profiler's own
            // lookup, not reported) and syncs it,
            "+sync", "-sync",
            // starts, runs the inner op,
            "+float_neg", "+float_neg", "-float_neg",
            // and syncs again before it finishes.
            "+sync", "-sync", "-float_neg",
        ]
    );
}
