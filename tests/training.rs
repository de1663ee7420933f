//! Training through `Profiled` is bit-identical to training without it, in both compositions.

use burn::backend::{Autodiff, NdArray};
use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Int, Tensor, TensorData};
use burn_profiled::Profiled;

#[derive(Module, Debug)]
struct Net<B: burn::tensor::backend::Backend> {
    conv: Conv2d<B>,
    relu: Relu,
    linear: Linear<B>,
}

impl<B: burn::tensor::backend::Backend> Net<B> {
    fn new(device: &B::Device) -> Self {
        Net {
            conv: Conv2dConfig::new([1, 4], [3, 3]).init(device),
            relu: Relu::new(),
            linear: LinearConfig::new(4 * 6 * 6, 3).init(device),
        }
    }

    fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 2> {
        let x = self.relu.forward(self.conv.forward(x));
        self.linear.forward(x.flatten(1, 3))
    }
}

/// Deterministic inputs: 8 images of 8x8 and their labels.
fn batch<B: burn::tensor::backend::Backend>(
    device: &B::Device,
) -> (Tensor<B, 4>, Tensor<B, 1, Int>) {
    let pixels: Vec<f32> = (0..8 * 64)
        .map(|i| ((i * 37 % 101) as f32 / 50.0) - 1.0)
        .collect();
    let labels: Vec<i64> = (0..8).map(|i| i % 3).collect();
    (
        Tensor::from_data(TensorData::new(pixels, [8, 1, 8, 8]), device),
        Tensor::from_data(TensorData::new(labels, [8]), device),
    )
}

/// Losses of each step, then every parameter value after the last step.
fn train<B: AutodiffBackend>(steps: usize) -> (Vec<f32>, Vec<f32>) {
    let device = B::Device::default();
    B::seed(&device, 42);
    let mut model = Net::<B>::new(&device);
    let mut optim = AdamConfig::new().init();
    let (x, y) = batch::<B>(&device);
    let mut losses = Vec::new();
    for _ in 0..steps {
        let logits = model.forward(x.clone());
        let loss = CrossEntropyLossConfig::new()
            .init(&device)
            .forward(logits, y.clone());
        losses.push(loss.clone().into_data().to_vec::<f32>().unwrap()[0]);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(1e-2, model, grads);
    }
    let params = [
        model.conv.weight.val().into_data(),
        model
            .conv
            .bias
            .as_ref()
            .map(|b| b.val().into_data())
            .unwrap(),
        model.linear.weight.val().into_data(),
        model
            .linear
            .bias
            .as_ref()
            .map(|b| b.val().into_data())
            .unwrap(),
    ];
    let params = params
        .iter()
        .flat_map(|d| d.to_vec::<f32>().unwrap())
        .collect();
    (losses, params)
}

fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn training_is_bit_identical_in_both_compositions() {
    // One test: the backends share NdArray's global seed, so they must run one after another.
    let (plain_losses, plain_params) = train::<Autodiff<NdArray>>(5);
    assert!(
        plain_losses[4] < plain_losses[0],
        "the model learns: {plain_losses:?}"
    );

    let (losses, params) = train::<Autodiff<Profiled<NdArray>>>(5);
    assert_eq!(
        bits(&losses),
        bits(&plain_losses),
        "Autodiff<Profiled<NdArray>> losses"
    );
    assert_eq!(
        bits(&params),
        bits(&plain_params),
        "Autodiff<Profiled<NdArray>> parameters"
    );

    let (losses, params) = train::<Profiled<Autodiff<NdArray>>>(5);
    assert_eq!(
        bits(&losses),
        bits(&plain_losses),
        "Profiled<Autodiff<NdArray>> losses"
    );
    assert_eq!(
        bits(&params),
        bits(&plain_params),
        "Profiled<Autodiff<NdArray>> parameters"
    );
}
