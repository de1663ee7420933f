//! `Profiled<B>` under burn's `distributed` feature, on burn's `Wgpu` backend (Mesa's lavapipe
//! runs it without a GPU). Run with `cargo test --features wgpu,distributed --test distributed`.
//!
//! CubeCL implements `all_reduce` and `sync_collective` on CUDA only (NCCL); on the other
//! runtimes they are `unimplemented!()`. They are checked here at compile level; the methods
//! that run without a collective (the sync server, registration, submission) are run.
#![cfg(all(feature = "wgpu", feature = "distributed"))]

use std::sync::{Arc, Mutex};

use burn::backend::wgpu::WgpuDevice;
use burn::backend::{Autodiff, Wgpu};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Tensor, TensorPrimitive};
use burn_backend::distributed::{
    DistributedBackend, DistributedConfig, DistributedParamId, DistributedParams, ReduceOperation,
    TensorRef,
};
use burn_profiled::Profiled;
use burn_profiled::probe::{self, Op, OpObserver};

/// The ops reported, in order.
#[derive(Default)]
struct Reported(Mutex<Vec<&'static str>>);

impl OpObserver for Reported {
    fn op_started(&self, op: &'static Op) {
        self.0.lock().unwrap().push(op.name());
    }
    fn op_finished(&self, _op: &'static Op) {}
}

fn is_training_backend<B: AutodiffBackend>() {}
fn is_distributed<B: DistributedBackend>() {}

#[test]
fn profiled_backends_are_distributed_training_backends() {
    is_distributed::<Profiled<Wgpu>>();
    is_training_backend::<Autodiff<Profiled<Wgpu>>>();
    is_distributed::<Autodiff<Profiled<Wgpu>>>();
    is_training_backend::<Profiled<Autodiff<Wgpu>>>();
    is_distributed::<Profiled<Autodiff<Wgpu>>>();
    // Both collectives exist on the profiled backend (they run on CUDA only).
    let _all_reduce: fn(_, ReduceOperation, _) -> _ =
        <Profiled<Wgpu> as DistributedBackend>::all_reduce;
    let _sync_collective: fn(&WgpuDevice) = <Profiled<Wgpu> as DistributedBackend>::sync_collective;
}

#[test]
fn each_forwarded_method_reports_exactly_itself() {
    type P = Profiled<Wgpu>;
    let device = WgpuDevice::default();
    let reported = Arc::new(Reported::default());
    let observing = probe::observe(reported.clone());
    let params = DistributedParams {
        param_id: DistributedParamId::from(7),
    };
    let mut grad = Tensor::<P, 1>::from_floats([1.0, 2.0], &device)
        .into_primitive()
        .tensor();
    reported.0.lock().unwrap().clear();
    let mut calls = Vec::new();
    let mut call = |name: &'static str, f: &mut dyn FnMut()| {
        let before = reported.0.lock().unwrap().len();
        f();
        calls.push((name, reported.0.lock().unwrap()[before..].to_vec()));
    };
    // Two devices announced, one registers: the server waits for the other, so no collective
    // is launched (none could run here).
    call("start_communication_server", &mut || {
        P::start_communication_server(
            &[device.clone(), device.clone()],
            DistributedConfig {
                all_reduce_op: ReduceOperation::Sum,
            },
        )
    });
    call("register_sync_parameters", &mut || {
        P::register_sync_parameters(&device, vec![params.clone()])
    });
    call("submit_gradient_sync", &mut || {
        P::submit_gradient_sync(TensorRef(&mut grad), params.clone())
    });
    call("comm_device", &mut || {
        let device_of = unsafe { P::comm_device(&TensorRef(&mut grad)) };
        assert_eq!(device_of, device);
    });
    let mut copy = None;
    call("float_from_ref", &mut || {
        copy = Some(unsafe { P::float_from_ref(&TensorRef(&mut grad)) });
    });
    call("close_communication_server", &mut || {
        P::close_communication_server(&device)
    });
    drop(observing);
    let copy = Tensor::<P, 1>::from_primitive(TensorPrimitive::Float(copy.unwrap()));
    assert_eq!(copy.into_data().to_vec::<f32>().unwrap(), [1.0, 2.0]);

    let expected: Vec<(&str, Vec<&str>)> = vec![
        (
            "start_communication_server",
            vec!["start_communication_server"],
        ),
        ("register_sync_parameters", vec!["register_sync_parameters"]),
        ("submit_gradient_sync", vec!["submit_gradient_sync"]),
        // Queries, like `float_device`: forwarded without a report.
        ("comm_device", vec![]),
        ("float_from_ref", vec![]),
        (
            "close_communication_server",
            vec!["close_communication_server"],
        ),
    ];
    assert_eq!(calls, expected);
}
