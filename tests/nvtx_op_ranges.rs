//! What reaches NVTX from op ranges, seen by the NVTX recorder attached in-process.

use std::sync::{Arc, Mutex};

use burn::backend::{Autodiff, NdArray};
use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{Linear, LinearConfig};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Distribution, Tensor};
use burn_backend::ops::FloatTensorOps;
use burn_profiled::Profiled;
use burn_profiled::probe::{self, Op, OpObserver};
use burn_std::IntDType;
use nvtx_recorder::{Kind, Message};

nvtx_recorder::install_static!();

/// The switches and observers are process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

#[derive(Module, Debug)]
struct Net<B: Backend> {
    conv: Conv2d<B>,
    linear: Linear<B>,
}

/// One forward and backward step.
fn step<B: AutodiffBackend>() {
    let device = Default::default();
    let net = Net::<B> {
        conv: Conv2dConfig::new([1, 2], [3, 3]).init(&device),
        linear: LinearConfig::new(2 * 4 * 4, 1).init(&device),
    };
    let x = Tensor::<B, 4>::random([2, 1, 6, 6], Distribution::Default, &device);
    let features: Tensor<B, 2> = net.conv.forward(x).flatten(1, 3);
    let y = net.linear.forward(features).mean();
    let _grads = y.backward();
}

/// The names of the ops started on this thread.
#[derive(Default)]
struct Started(Mutex<Vec<&'static str>>);

impl OpObserver for Started {
    fn op_started(&self, op: &'static Op) {
        self.0.lock().unwrap().push(op.name());
    }
    fn op_finished(&self, _op: &'static Op) {}
}

#[test]
fn a_training_step_emits_one_registered_range_per_op_in_the_burn_domain() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tid = nvtx_recorder::current_tid();

    step::<Autodiff<Profiled<NdArray>>>();
    assert_eq!(
        nvtx_recorder::events_of_thread(tid),
        [],
        "op ranges are off: nothing is emitted"
    );

    let started = Arc::new(Started::default());
    let observing = probe::observe(started.clone());
    probe::set_op_ranges(true);
    step::<Autodiff<Profiled<NdArray>>>();
    probe::set_op_ranges(false);
    drop(observing);
    let ops = started.0.lock().unwrap().clone();
    let events = nvtx_recorder::events_of_thread(tid);
    assert!(nvtx_recorder::is_attached());

    // Each op name is registered once in the process (the other test may have done it, on its
    // own thread), in the `burn` domain.
    let all_events = nvtx_recorder::events();
    let registered: Vec<&str> = all_events
        .iter()
        .filter(|e| e.kind == Kind::RegisterString)
        .map(|e| e.message.text().unwrap())
        .collect();
    let mut distinct = ops.clone();
    distinct.sort();
    distinct.dedup();
    for op in &distinct {
        let registrations: Vec<_> = all_events
            .iter()
            .filter(|e| e.kind == Kind::RegisterString && e.message.text() == Some(op))
            .collect();
        assert_eq!(registrations.len(), 1, "{op}: {registered:?}");
        assert_eq!(registrations[0].domain.as_deref(), Some("burn"));
    }

    // Pushes and pops alternate at depth 0 (ops do not nest), in the `burn` domain, with the
    // registered op name as message, in the order the ops ran.
    let ranges: Vec<_> = events
        .iter()
        .filter(|e| matches!(e.kind, Kind::Push | Kind::Pop))
        .collect();
    assert_eq!(ranges.len(), 2 * ops.len());
    for (pair, op) in ranges.chunks(2).zip(&ops) {
        let (push, pop) = (pair[0], pair[1]);
        assert_eq!(push.kind, Kind::Push);
        assert_eq!(push.message, Message::Registered(op.to_string()));
        assert_eq!((push.domain.as_deref(), push.depth), (Some("burn"), 0));
        assert_eq!(pop.kind, Kind::Pop);
        assert_eq!((pop.domain.as_deref(), pop.depth), (Some("burn"), 0));
    }

    // Forward kernels and the backward kernels Autodiff runs on `Profiled<NdArray>` both show.
    for op in [
        "conv2d",
        "linear",
        "float_mean",
        "conv2d_weight_backward",
        "linear_weight_backward",
    ] {
        assert!(ops.contains(&op), "{op} missing from {ops:?}");
    }

    // Off again: nothing more.
    let before = nvtx_recorder::events_of_thread(tid).len();
    step::<Autodiff<Profiled<NdArray>>>();
    assert_eq!(nvtx_recorder::events_of_thread(tid).len(), before);
}

/// Op ranges alone (no observer, no statistics: the usual setup under `nsys`) take a shorter
/// path; it must emit exactly what the full one does, and pop its range when the op panics.
#[test]
fn op_ranges_alone_emit_the_same_ranges_and_pop_on_a_panic() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tid = nvtx_recorder::current_tid();
    let pushed = |events: &[nvtx_recorder::Event]| -> Vec<String> {
        events
            .iter()
            .filter(|e| matches!(e.kind, Kind::Push | Kind::Pop))
            .map(
                |e| match (&e.kind, &e.message, e.domain.as_deref(), e.depth) {
                    (Kind::Push, Message::Registered(name), Some("burn"), 0) => name.clone(),
                    (Kind::Pop, _, Some("burn"), 0) => "pop".to_owned(),
                    other => panic!("unexpected event {other:?}"),
                },
            )
            .collect()
    };

    let started = Arc::new(Started::default());
    let observing = probe::observe(started.clone());
    probe::set_op_ranges(true);
    let before = nvtx_recorder::events_of_thread(tid).len();
    step::<Autodiff<Profiled<NdArray>>>();
    let with_observer = pushed(&nvtx_recorder::events_of_thread(tid)[before..]);
    drop(observing);

    let before = nvtx_recorder::events_of_thread(tid).len();
    step::<Autodiff<Profiled<NdArray>>>();
    let alone = pushed(&nvtx_recorder::events_of_thread(tid)[before..]);
    assert_eq!(alone, with_observer);
    let ops = started.0.lock().unwrap().clone();
    let expected: Vec<String> = ops
        .iter()
        .flat_map(|op| [op.to_string(), "pop".to_owned()])
        .collect();
    assert_eq!(alone, expected);

    // NdArray has no argtopk: the op panics, and its range is popped while unwinding.
    let device = Default::default();
    let x = Tensor::<Profiled<NdArray>, 1>::from_floats([3.0, 1.0, 2.0], &device);
    let before = nvtx_recorder::events_of_thread(tid).len();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Profiled::<NdArray>::float_argtopk(x.into_primitive().tensor(), 0, 2, IntDType::I64)
    }));
    probe::set_op_ranges(false);
    assert!(panicked.is_err());
    assert_eq!(
        pushed(&nvtx_recorder::events_of_thread(tid)[before..]),
        ["float_argtopk", "pop"]
    );
}

/// With forward links on, each op range carries a payload as `emit_nvtx`'s sequence numbers
/// do: a forward op's range its call, a backward op's range the call of the forward op it
/// works for, so Nsight Systems ties them.
#[test]
fn with_forward_links_a_backward_range_carries_its_forward_ranges_payload() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    static RANGES: std::sync::Once = std::sync::Once::new();
    RANGES.call_once(|| burn_profiled::nvtx::enable(burn_profiled::nvtx::RangeConfig::new()));
    let tid = nvtx_recorder::current_tid();
    let before = nvtx_recorder::events_of_thread(tid).len();
    burn_profiled::stats::start(burn_profiled::stats::StatsConfig {
        forward_links: true,
        ..Default::default()
    });
    probe::set_op_ranges(true);
    type B = Autodiff<Profiled<NdArray>>;
    let device = Default::default();
    let net = Net::<B> {
        conv: Conv2dConfig::new([1, 2], [3, 3]).init(&device),
        linear: LinearConfig::new(2 * 4 * 4, 1).init(&device),
    };
    let x = Tensor::<B, 4>::random([2, 1, 6, 6], Distribution::Default, &device);
    let y = burn_profiled::nvtx::scope("forward", || {
        let features: Tensor<B, 2> = net.conv.forward(x).flatten(1, 3);
        net.linear.forward(features).mean()
    });
    let _grads = burn_profiled::nvtx::scope("backward", || y.backward());
    probe::set_op_ranges(false);
    burn_profiled::stats::stop();
    burn_profiled::stats::reset();

    let pushes: Vec<(String, Option<nvtx_recorder::Payload>)> =
        nvtx_recorder::events_of_thread(tid)[before..]
            .iter()
            .filter(|e| e.kind == Kind::Push && e.domain.as_deref() == Some("burn"))
            .map(|e| (e.message.text().unwrap_or_default().to_owned(), e.payload))
            .collect();
    let payload_of = |op: &str| -> Vec<Option<nvtx_recorder::Payload>> {
        pushes
            .iter()
            .filter(|(name, _)| name == op)
            .map(|(_, payload)| *payload)
            .collect()
    };
    let [conv] = payload_of("conv2d")[..] else {
        panic!("one conv2d range: {pushes:?}");
    };
    let [linear] = payload_of("linear")[..] else {
        panic!("one linear range: {pushes:?}");
    };
    assert!(
        matches!(conv, Some(nvtx_recorder::Payload::U64(_))),
        "{pushes:?}"
    );
    assert_ne!(conv, linear);
    for op in ["conv2d_weight_backward", "conv2d_bias_backward"] {
        assert_eq!(payload_of(op), [conv], "{op}: {pushes:?}");
    }
    for op in [
        "linear_weight_backward",
        "linear_bias_backward",
        "linear_x_backward",
    ] {
        assert_eq!(payload_of(op), [linear], "{op}: {pushes:?}");
    }
}
