//! The vision model burn-profiled's examples train, on Burn 0.22 (no backend type), and the
//! generated data it learns from: the same model and data as Burn 0.21's `examples/train.rs`.
//!
//! Two convolutions, max pooling, a LayerNorm and multi-head self-attention over the 5x5
//! feature patches, and a linear head; the attention block and the head run inside NVTX
//! ranges of their names.
// Each user (the example, the tests) uses part of it.
#![allow(dead_code)]

use burn::module::Module;
use burn::nn::attention::{MhaInput, MultiHeadAttention, MultiHeadAttentionConfig};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig, Relu};
use burn::tensor::{Device, Tensor, TensorData};
use burn_profiled_022::nvtx;

pub const CLASSES: usize = 10;
const CHANNELS: usize = 16;

#[derive(Module, Debug)]
pub struct VisionModel {
    pub conv1: Conv2d,
    pub conv2: Conv2d,
    pool: MaxPool2d,
    relu: Relu,
    norm: LayerNorm,
    attention: MultiHeadAttention,
    pub head: Linear,
}

impl VisionModel {
    pub fn new(device: &Device) -> Self {
        VisionModel {
            conv1: Conv2dConfig::new([1, 8], [3, 3]).init(device),
            conv2: Conv2dConfig::new([8, CHANNELS], [3, 3]).init(device),
            pool: MaxPool2dConfig::new([2, 2]).with_strides([2, 2]).init(),
            relu: Relu::new(),
            norm: LayerNormConfig::new(CHANNELS).init(device),
            attention: MultiHeadAttentionConfig::new(CHANNELS, 4).init(device),
            head: LinearConfig::new(CHANNELS, CLASSES).init(device),
        }
    }

    /// `images`: (batch, 1, 14, 14) -> logits (batch, classes).
    pub fn forward(&self, images: Tensor<4>) -> Tensor<2> {
        let x = self.relu.forward(self.conv1.forward(images));
        let x = self.pool.forward(self.relu.forward(self.conv2.forward(x))); // (b, 16, 5, 5)
        let [batch, channels, height, width] = x.dims();
        let patches = x.reshape([batch, channels, height * width]).swap_dims(1, 2); // (b, 25, 16)
        let patches = self.norm.forward(patches);
        let attended = nvtx::scope("attention", || {
            self.attention.forward(MhaInput::self_attn(patches)).context
        });
        let pooled: Tensor<2> = attended.mean_dim(1).squeeze_dim(1);
        nvtx::scope("head", || self.head.forward(pooled))
    }
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
