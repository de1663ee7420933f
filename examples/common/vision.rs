//! The vision model the examples train, and the generated data it learns from.
//!
//! Two convolutions, max pooling, a LayerNorm and multi-head self-attention over the 5x5
//! feature patches, and a linear head; the attention block and the head are `Ranged`
//! sub-modules (an NVTX range each).
// Each example uses part of it.
#![allow(dead_code)]

use burn::module::Module;
use burn::nn::attention::{MhaInput, MultiHeadAttention, MultiHeadAttentionConfig};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig, Relu};
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use burn_profiled::dump::{self, AddOptions, DumpType};
use burn_profiled::nvtx::Ranged;

pub const CLASSES: usize = 10;
const CHANNELS: usize = 16;

#[derive(Module, Debug)]
pub struct VisionModel<B: Backend> {
    pub conv1: Conv2d<B>,
    pub conv2: Conv2d<B>,
    pool: MaxPool2d,
    relu: Relu,
    norm: LayerNorm<B>,
    attention: Ranged<MultiHeadAttention<B>>,
    pub head: Ranged<Linear<B>>,
}

impl<B: Backend> VisionModel<B> {
    pub fn new(device: &B::Device) -> Self {
        VisionModel {
            conv1: Conv2dConfig::new([1, 8], [3, 3]).init(device),
            conv2: Conv2dConfig::new([8, CHANNELS], [3, 3]).init(device),
            pool: MaxPool2dConfig::new([2, 2]).with_strides([2, 2]).init(),
            relu: Relu::new(),
            norm: LayerNormConfig::new(CHANNELS).init(device),
            attention: Ranged::new(
                "attention",
                MultiHeadAttentionConfig::new(CHANNELS, 4).init(device),
            ),
            head: Ranged::new("head", LinearConfig::new(CHANNELS, CLASSES).init(device)),
        }
    }

    /// `images`: (batch, 1, 14, 14) -> logits (batch, classes). With `tap`, the activations
    /// and their gradients go into the dump (`activations.*`).
    pub fn forward(&self, images: Tensor<B, 4>, tap: bool) -> Tensor<B, 2> {
        let x = self.relu.forward(self.conv1.forward(images));
        let x = self.pool.forward(self.relu.forward(self.conv2.forward(x))); // (b, 16, 5, 5)
        let x = activation("activations.features", x, tap);
        let [batch, channels, height, width] = x.dims();
        let patches = x.reshape([batch, channels, height * width]).swap_dims(1, 2); // (b, 25, 16)
        let patches = self.norm.forward(patches);
        let attended = self.attention.forward(MhaInput::self_attn(patches)).context;
        let attended = activation("activations.attention", attended, tap);
        let pooled: Tensor<B, 2> = attended.mean_dim(1).squeeze_dim(1);
        activation("activations.logits", self.head.forward(pooled), tap)
    }
}

/// With `tap`: dumps `x` at `path` and taps its gradient (an identity op whose backward records
/// the incoming gradient); otherwise `x` itself.
fn activation<B: Backend, const D: usize>(path: &str, x: Tensor<B, D>, tap: bool) -> Tensor<B, D> {
    if !tap {
        return x;
    }
    let json = AddOptions::new(DumpType::Json);
    dump::global::add_tensor_data(path, x.clone(), json.clone()).expect("a fresh path in the dump");
    dump::global::grad_tap(path, x, json).expect("grad taps are enabled for this backend")
}

/// A batch whose images carry their class as a bright row, so the model has something to learn.
pub fn generated_batch(step: usize, batch: usize) -> (TensorData, TensorData) {
    let labels: Vec<i64> = (0..batch).map(|i| ((i + step) % CLASSES) as i64).collect();
    let mut pixels = vec![0f32; batch * 14 * 14];
    for (sample, label) in labels.iter().enumerate() {
        for (i, pixel) in pixels[sample * 196..(sample + 1) * 196]
            .iter_mut()
            .enumerate()
        {
            let noise = ((i * 7919 + sample * 104_729 + step * 31) % 1000) as f32 / 1000.0 - 0.5;
            let row = i / 14;
            *pixel = noise * 0.5 + if row == *label as usize + 2 { 1.5 } else { 0.0 };
        }
    }
    (
        TensorData::new(pixels, [batch, 1, 14, 14]),
        TensorData::new(labels, [batch]),
    )
}
