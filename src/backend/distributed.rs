//! `Profiled<B>` under burn's `distributed` feature: every method of `DistributedBackend`
//! forwarded to `B`, the provided ones included. With the feature on, `Autodiff<Profiled<B>>`
//! is a training backend only if `Profiled<B>` is a `DistributedBackend`.
//!
//! The methods that do work are ops, reported under their Burn names; the two that only look
//! at a tensor reference (`comm_device`, `float_from_ref`) are forwarded without a report.

use burn_backend::DeviceId;
use burn_backend::distributed::{
    CollectiveTensor, DistributedBackend, DistributedConfig, DistributedParams, ReduceOperation,
    TensorRef,
};
use burn_backend::tensor::{Device, FloatTensor};

use super::Profiled;
use crate::probe::{Op, probe};

/// `TensorRef<Profiled<B>>` points at a `B` primitive: the same pointer, re-tagged.
fn inner_ref<B: DistributedBackend>(tensor: &TensorRef<Profiled<B>>) -> TensorRef<B> {
    TensorRef(tensor.0)
}

impl<B: DistributedBackend> DistributedBackend for Profiled<B> {
    fn start_communication_server(devices: &[Device<Self>], config: DistributedConfig) {
        static OP: Op = Op::new("start_communication_server\0");
        let _op = probe!(&OP, B, || devices.first().cloned(), Vec::new);
        B::start_communication_server(devices, config)
    }

    fn close_communication_server(device: &Device<Self>) {
        static OP: Op = Op::new("close_communication_server\0");
        let _op = probe!(&OP, B, || Some(device.clone()), Vec::new);
        B::close_communication_server(device)
    }

    fn register_sync_parameters(device: &Device<Self>, distributed_params: Vec<DistributedParams>) {
        static OP: Op = Op::new("register_sync_parameters\0");
        let _op = probe!(&OP, B, || Some(device.clone()), Vec::new);
        B::register_sync_parameters(device, distributed_params)
    }

    fn submit_sync_collective(device: &Device<Self>) {
        static OP: Op = Op::new("submit_sync_collective\0");
        let _op = probe!(&OP, B, || Some(device.clone()), Vec::new);
        B::submit_sync_collective(device)
    }

    fn submit_gradient_sync(tensor: TensorRef<Self>, distributed_params: DistributedParams) {
        static OP: Op = Op::new("submit_gradient_sync\0");
        // SAFETY (of the read): burn hands over a live gradient that nothing touches meanwhile.
        let _op = probe!(
            &OP,
            B,
            || Some(unsafe { B::comm_device(&inner_ref(&tensor)) }),
            Vec::new
        );
        B::submit_gradient_sync(inner_ref(&tensor), distributed_params)
    }

    fn all_reduce(
        tensor: FloatTensor<Self>,
        op: ReduceOperation,
        device_ids: Vec<DeviceId>,
    ) -> CollectiveTensor<Self> {
        static OP: Op = Op::new("all_reduce\0");
        let _op = probe!(&OP, B, || Some(B::float_device(&tensor)), Vec::new);
        let collective = B::all_reduce(tensor, op, device_ids);
        // SAFETY: the handle is wrapped again at once; whoever resolves it syncs as before.
        CollectiveTensor::new(unsafe { collective.assume_resolved() })
    }

    fn sync_collective(device: &Device<Self>) {
        static OP: Op = Op::new("sync_collective\0");
        let _op = probe!(&OP, B, || Some(device.clone()), Vec::new);
        B::sync_collective(device)
    }

    unsafe fn comm_device(tensor: &TensorRef<Self>) -> Device<Self> {
        // SAFETY: the caller's contract, passed on.
        unsafe { B::comm_device(&inner_ref(tensor)) }
    }

    unsafe fn float_from_ref(tensor: &TensorRef<Self>) -> FloatTensor<Self> {
        // SAFETY: the caller's contract, passed on.
        unsafe { B::float_from_ref(&inner_ref(tensor)) }
    }
}
