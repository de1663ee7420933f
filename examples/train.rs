//! Train a small CNN on `Autodiff<Profiled<NdArray>>`, with NVTX op ranges after warm-up.
//!
//! ```text
//! cargo run --release --example train -- [--steps N]
//! nsys profile --trace=nvtx cargo run --release --example train     # on a machine with Nsight
//! ```
//! Every forward and backward kernel shows up as its own range in the NVTX domain `burn`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use burn::backend::{Autodiff, NdArray};
use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Distribution, Int, Tensor};
use burn_profiled::Profiled;
use burn_profiled::probe::{self, Op, OpObserver};

const WARMUP_STEPS: usize = 3;

#[derive(Module, Debug)]
struct Cnn<B: Backend> {
    conv1: Conv2d<B>,
    conv2: Conv2d<B>,
    pool: MaxPool2d,
    relu: Relu,
    head: Linear<B>,
}

impl<B: Backend> Cnn<B> {
    fn new(device: &B::Device) -> Self {
        Cnn {
            conv1: Conv2dConfig::new([1, 8], [3, 3]).init(device),
            conv2: Conv2dConfig::new([8, 16], [3, 3]).init(device),
            pool: MaxPool2dConfig::new([2, 2]).with_strides([2, 2]).init(),
            relu: Relu::new(),
            head: LinearConfig::new(16 * 5 * 5, 10).init(device),
        }
    }

    fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        let x = self.relu.forward(self.conv1.forward(images));
        let x = self.pool.forward(self.relu.forward(self.conv2.forward(x)));
        self.head.forward(x.flatten(1, 3))
    }
}

/// Counts ops by name, to show what the NVTX ranges would contain.
#[derive(Default)]
struct OpCounts(Mutex<BTreeMap<&'static str, usize>>);

impl OpObserver for OpCounts {
    fn op_started(&self, op: &'static Op) {
        *self.0.lock().unwrap().entry(op.name()).or_default() += 1;
    }
    fn op_finished(&self, _op: &'static Op) {}
}

fn train<B: AutodiffBackend>(steps: usize) {
    let device = B::Device::default();
    B::seed(&device, 0);
    let mut model = Cnn::<B>::new(&device);
    let mut optim = AdamConfig::new().init();
    let images = Tensor::<B, 4>::random([32, 1, 14, 14], Distribution::Normal(0.0, 1.0), &device);
    let labels = Tensor::<B, 1, Int>::from_data(
        (0..32)
            .map(|i| (i % 10) as i64)
            .collect::<Vec<_>>()
            .as_slice(),
        &device,
    );
    let counts = Arc::new(OpCounts::default());
    let mut observing = None;
    let start = Instant::now();
    for step in 0..steps {
        if step == WARMUP_STEPS {
            probe::set_op_ranges(true);
            observing = Some(probe::observe(counts.clone()));
        }
        let logits = model.forward(images.clone());
        let loss = CrossEntropyLossConfig::new()
            .init(&device)
            .forward(logits, labels.clone());
        let loss_value = loss.clone().into_scalar();
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(1e-3, model, grads);
        println!("step {step:>3}  loss {loss_value:.5}");
    }
    B::sync(&device).expect("the device syncs");
    drop(observing);
    probe::set_op_ranges(false);

    let counts = counts.0.lock().unwrap();
    let measured = steps.saturating_sub(WARMUP_STEPS);
    println!(
        "\n{steps} steps in {:.2?}; {} ops ({} distinct) ran inside NVTX op ranges over the {measured} steps after warm-up.",
        start.elapsed(),
        counts.values().sum::<usize>(),
        counts.len(),
    );
    let mut by_count: Vec<_> = counts.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    println!("Most frequent ops:");
    for (name, count) in by_count.iter().take(12) {
        println!("  {name:<28} {count:>6}");
    }
}

/// Train a small CNN on `Autodiff<Profiled<NdArray>>`, with NVTX op ranges after warm-up.
#[derive(clap::Parser)]
struct Args {
    /// Training steps, the first 3 of them warm-up.
    #[arg(long, default_value_t = 20)]
    steps: usize,
}

fn main() {
    let args = <Args as clap::Parser>::parse();
    train::<Autodiff<Profiled<NdArray>>>(args.steps);
}
