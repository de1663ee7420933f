//! The model and the training step the binaries of this crate share: a small conv net, as a
//! user of burn's default features writes one, on Wgpu's default device.

use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{Linear, LinearConfig};
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{Adam, AdamConfig, GradientsParams, Optimizer};
use burn::prelude::*;
use burn::tensor::Distribution;
use burn::tensor::backend::AutodiffBackend;

/// The net of issues 31 and 37.
#[derive(Module, Debug)]
pub struct Net<B: Backend> {
    conv: Conv2d<B>,
    lin: Linear<B>,
}

/// A net, its optimizer and its input, made on `B`'s default device as the issues' programs
/// make them (seeded, so every process makes the same).
pub struct Training<B: AutodiffBackend> {
    net: Option<Net<B>>,
    opt: OptimizerAdaptor<Adam, Net<B>, B>,
    x: Tensor<B, 4>,
}

impl<B: AutodiffBackend> Training<B> {
    /// The model and the data, on the device: no step run yet.
    pub fn new() -> Self {
        let d = B::Device::default();
        B::seed(&d, 7);
        let net = Net {
            conv: Conv2dConfig::new([3, 8], [3, 3]).init::<B>(&d),
            lin: LinearConfig::new(8 * 14 * 14, 10).init::<B>(&d),
        };
        Training {
            net: Some(net),
            opt: AdamConfig::new().init::<B, Net<B>>(),
            x: Tensor::<B, 4>::random([4, 3, 16, 16], Distribution::Default, &d),
        }
    }

    /// One training step; its loss (read back: a device sync).
    pub fn step(&mut self) -> f32 {
        let net = self.net.take().expect("a net between steps");
        let h = burn::tensor::activation::gelu(net.conv.forward(self.x.clone()));
        let h = (h.clone() * h.exp().neg() + 0.5).flatten::<2>(1, 3);
        let y = net.lin.forward(h);
        let loss = (y.clone() * y).mean();
        let value = loss.clone().into_scalar().elem::<f32>();
        let g = GradientsParams::from_grads(loss.backward(), &net);
        self.net = Some(self.opt.step(1e-3, net, g));
        value
    }
}

impl<B: AutodiffBackend> Default for Training<B> {
    fn default() -> Self {
        Self::new()
    }
}

/// `steps` steps on a new net: their losses.
pub fn train<B: AutodiffBackend>(steps: usize) -> Vec<f32> {
    let mut training = Training::<B>::new();
    (0..steps).map(|_| training.step()).collect()
}

/// The line the binaries print: `losses <name> <f32 bits, hex>...`.
pub fn losses_line(name: &str, losses: &[f32]) -> String {
    let bits: Vec<String> = losses
        .iter()
        .map(|l| format!("{:08x}", l.to_bits()))
        .collect();
    format!("losses {name} {}", bits.join(" "))
}
