//! A test backend with one wrong kernel call: NdArray behind burn-router, with the output of
//! the third `exp` of a run ([`reset`] starts one), or of its first `linear`
//! ([`reset_with_wrong_linear`]: a composite op, which fusion runs as a matmul and an add),
//! scaled by `1 + 1e-3`, as a faulty kernel or a changed fusion would compute it. Everything
//! else is NdArray's own, bit for bit.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use burn::backend::NdArray;
use burn::backend::ndarray::NdArrayDevice;
use burn::tensor::{DType, Shape, TensorData};
use burn_backend::backend::ExecutionError;
use burn_ir::{FloatOperationIr, ModuleOperationIr, OperationIr, TensorId, TensorIr, TensorStatus};
use burn_router::{
    BackendRouter, MultiBackendBridge, RouterTensor, Runner, RunnerChannel, RunnerClient,
};

/// The backend: `BackendRouter` over [`Perturbing`].
pub type Perturbed = BackendRouter<Perturbing>;

/// Which `exp` of a run is wrong (from 0).
const WRONG_EXP: usize = 2;

static EXPS: AtomicUsize = AtomicUsize::new(0);

/// Whether the first `linear` is the wrong op (not the third `exp`).
static LINEAR: AtomicBool = AtomicBool::new(false);

static LINEARS: AtomicUsize = AtomicUsize::new(0);

/// Starts counting `exp` ops again: a run's first step begins, its third `exp` wrong.
pub fn reset() {
    EXPS.store(0, Ordering::Relaxed);
    LINEAR.store(false, Ordering::Relaxed);
}

/// Starts a run whose first `linear` is wrong (its exps right).
#[allow(dead_code)]
pub fn reset_with_wrong_linear() {
    LINEARS.store(0, Ordering::Relaxed);
    LINEAR.store(true, Ordering::Relaxed);
}

/// The channel: one NdArray runner, no other backend to bridge to.
#[derive(Clone)]
pub struct Perturbing;

/// NdArray's runner, with the wrong `exp`.
#[derive(Clone)]
pub struct PerturbingClient(Runner<NdArray>);

/// One device: nothing to move between backends.
pub struct NoBridge;

impl MultiBackendBridge for NoBridge {
    type TensorHandle = <NdArray as burn_ir::BackendIr>::Handle;
    type Device = NdArrayDevice;

    fn change_backend_float(
        _tensor: Self::TensorHandle,
        _shape: Shape,
        _target: &NdArrayDevice,
    ) -> Self::TensorHandle {
        unreachable!("the perturbed backend has one device")
    }

    fn change_backend_int(
        _tensor: Self::TensorHandle,
        _shape: Shape,
        _target: &NdArrayDevice,
    ) -> Self::TensorHandle {
        unreachable!("the perturbed backend has one device")
    }

    fn change_backend_bool(
        _tensor: Self::TensorHandle,
        _shape: Shape,
        _target: &NdArrayDevice,
    ) -> Self::TensorHandle {
        unreachable!("the perturbed backend has one device")
    }
}

impl RunnerChannel for Perturbing {
    type Device = NdArrayDevice;
    type Bridge = NoBridge;
    type Client = PerturbingClient;
    type FloatElem = f32;
    type IntElem = i64;
    type BoolElem = bool;

    fn name(_device: &NdArrayDevice) -> String {
        "perturbed<ndarray>".to_owned()
    }

    fn init_client(device: &NdArrayDevice) -> PerturbingClient {
        PerturbingClient(Runner::new(*device))
    }

    fn get_tensor_handle(
        tensor: &TensorIr,
        client: &PerturbingClient,
    ) -> <NoBridge as MultiBackendBridge>::TensorHandle {
        client.0.get_tensor_handle(tensor)
    }

    fn register_tensor(
        client: &PerturbingClient,
        handle: <NoBridge as MultiBackendBridge>::TensorHandle,
        shape: Shape,
        dtype: DType,
    ) -> RouterTensor<PerturbingClient> {
        client
            .0
            .register_tensor(handle, shape, dtype, client.clone())
    }
}

impl RunnerClient for PerturbingClient {
    type Device = NdArrayDevice;

    fn register_op(&self, op: OperationIr) {
        let linear = LINEAR.load(Ordering::Relaxed);
        let wrong = match &op {
            OperationIr::Float(_, FloatOperationIr::Exp(unary)) if !linear => {
                let n = EXPS.fetch_add(1, Ordering::Relaxed);
                (n == WRONG_EXP).then(|| unary.out.clone())
            }
            OperationIr::Module(ModuleOperationIr::Linear(desc)) if linear => {
                let n = LINEARS.fetch_add(1, Ordering::Relaxed);
                (n == 0).then(|| desc.out.clone())
            }
            _ => None,
        };
        self.0.register_op(op);
        if let Some(out) = wrong {
            let read = TensorIr {
                status: TensorStatus::ReadOnly,
                ..out.clone()
            };
            let data = burn_backend::try_read_sync(self.0.read_tensor_async(read))
                .and_then(Result::ok)
                .expect("the wrong op's output reads back");
            let values: Vec<f32> = data.iter::<f32>().map(|x| x * (1.0 + 1e-3)).collect();
            self.0
                .register_tensor_data_id(out.id, TensorData::new(values, out.shape));
        }
    }

    fn read_tensor_async(
        &self,
        tensor: TensorIr,
    ) -> burn_std::future::DynFut<Result<TensorData, ExecutionError>> {
        self.0.read_tensor_async(tensor)
    }

    fn sync(&self) -> Result<(), ExecutionError> {
        self.0.sync()
    }

    fn create_empty_handle(&self) -> TensorId {
        self.0.create_empty_handle()
    }

    fn register_tensor_data(&self, data: TensorData) -> RouterTensor<Self> {
        let ir = self.0.register_tensor_data_desc(data);
        RouterTensor::new(ir.id, ir.shape, ir.dtype, self.clone())
    }

    fn device(&self) -> NdArrayDevice {
        self.0.device()
    }

    fn seed(&self, seed: u64) {
        self.0.seed(seed)
    }

    fn dtype_usage(&self, dtype: DType) -> burn_backend::DTypeUsageSet {
        self.0.dtype_usage(dtype)
    }
}
