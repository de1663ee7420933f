//! A two-layer model trained with Adam, in forward, backward and optimizer ranges, with one
//! code change a user might make: an op inserted after the activation (times 1.001), or the
//! activation removed.

use std::path::Path;

use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::activation::relu;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Tensor, TensorData};
use burn_profiled::config::CheckFinite;
use burn_profiled::numerics::{self, OpRecord};
use burn_profiled::{Session, nvtx};

use super::model::numerics_config;

#[derive(Module, Debug)]
pub struct TwoLayers<B: Backend> {
    hidden: Linear<B>,
    out: Linear<B>,
}

/// What the changed program does after the activation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(dead_code)] // numerics_wgpu.rs makes no change
pub enum Change {
    /// The program as written.
    None,
    /// The activation times 1.001: an op the reference does not have.
    Inserted,
    /// No activation: an op the reference has, removed.
    Removed,
}

impl<B: Backend> TwoLayers<B> {
    fn loss(&self, x: Tensor<B, 2>, change: Change) -> Tensor<B, 1> {
        let hidden = self.hidden.forward(x);
        let hidden = match change {
            Change::None => relu(hidden),
            Change::Inserted => relu(hidden).mul_scalar(1.001),
            Change::Removed => hidden,
        };
        self.out.forward(hidden).powf_scalar(2.0).mean()
    }
}

/// A linear layer of `d_input` by `d_output` whose parameters are made from data (`seed`
/// varies them): the same numbers on every backend.
fn linear<B: Backend>(d_input: usize, d_output: usize, seed: f32, device: &B::Device) -> Linear<B> {
    let k = (1.0 / d_input as f32).sqrt();
    let values = |count: usize, phase: f32| -> Vec<f32> {
        (0..count)
            .map(|i| ((i as f32 + phase) * seed).sin() * k)
            .collect()
    };
    let weight = TensorData::new(values(d_input * d_output, 0.0), [d_input, d_output]);
    let bias = TensorData::new(values(d_output, 0.5), [d_output]);
    Linear {
        weight: Param::from_tensor(Tensor::from_data(weight, device)),
        bias: Some(Param::from_tensor(Tensor::from_data(bias, device))),
    }
}

/// `steps` steps of Adam on the same batch, the change made in every step's forward; the
/// run's records.
pub fn train_adam<B: AutodiffBackend>(dir: &Path, change: Change, steps: usize) -> Vec<OpRecord> {
    let device = Default::default();
    let mut session = Session::start::<B>(numerics_config(CheckFinite::Warn), &device, dir);
    let mut model = TwoLayers::<B> {
        hidden: linear(8, 16, 0.13, &device),
        out: linear(16, 4, 0.29, &device),
    };
    let mut optim = AdamConfig::new().init();
    let x = Tensor::<B, 2>::from_data(
        TensorData::new((0..32).map(|i| (i as f32 * 0.37).sin()).collect(), [4, 8]),
        &device,
    );
    for _ in 0..steps {
        let loss = nvtx::scope("forward", || model.loss(x.clone(), change));
        let grads = nvtx::scope("backward", || loss.backward());
        model = nvtx::scope("optimizer", || {
            let grads = GradientsParams::from_grads(grads, &model);
            optim.step(1e-2, model.clone(), grads)
        });
        session.finish_iter().expect("no limit set");
    }
    session.finish().expect("the run is written");
    numerics::file::read(dir).expect("numerics.jsonl reads back")
}
