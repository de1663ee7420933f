//! The workloads the overhead benches run: the smallest op and a small training step.

use burn::module::Module;
use burn::nn::loss::{MseLoss, Reduction};
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{Adam, AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Tensor, TensorData};

/// `a + b` on 2x2 tensors: 3 backend ops (`float_device` twice for the device check, then
/// `float_add`), the worst case for a per-op cost.
pub struct TinyOp<B: Backend> {
    a: Tensor<B, 2>,
    b: Tensor<B, 2>,
}

impl<B: Backend> TinyOp<B> {
    pub fn new() -> Self {
        let a = Tensor::<B, 2>::from_data(
            TensorData::new(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2]),
            &Default::default(),
        );
        TinyOp { b: a.clone(), a }
    }

    pub fn run(&self) -> Tensor<B, 2> {
        self.a.clone() + self.b.clone()
    }
}

#[derive(Module, Debug)]
pub struct Mlp<B: Backend> {
    input: Linear<B>,
    relu: Relu,
    output: Linear<B>,
}

/// One training step (forward, MSE loss, backward, Adam) of a Linear 32-64-1 MLP on a batch
/// of 16.
pub struct MlpStep<B: AutodiffBackend> {
    model: Mlp<B>,
    optim: OptimizerAdaptor<Adam, Mlp<B>, B>,
    x: Tensor<B, 2>,
    y: Tensor<B, 2>,
}

impl<B: AutodiffBackend> MlpStep<B> {
    pub fn new() -> Self {
        let device = Default::default();
        B::seed(&device, 7);
        MlpStep {
            model: Mlp {
                input: LinearConfig::new(32, 64).init(&device),
                relu: Relu::new(),
                output: LinearConfig::new(64, 1).init(&device),
            },
            optim: AdamConfig::new().init(),
            x: Tensor::ones([16, 32], &device),
            y: Tensor::zeros([16, 1], &device),
        }
    }

    pub fn run(&mut self) {
        let model = &self.model;
        let pred = model
            .output
            .forward(model.relu.forward(model.input.forward(self.x.clone())));
        let loss = MseLoss::new().forward(pred, self.y.clone(), Reduction::Mean);
        let grads = GradientsParams::from_grads(loss.backward(), model);
        self.model = self.optim.step(1e-3, self.model.clone(), grads);
    }
}
