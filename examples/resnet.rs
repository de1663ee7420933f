//! A ResNet-18 training step on generated images: a heavier step than `train`'s, profiled per
//! the configuration (the `eval` preset by default: the stopwatch and memory per step).
//!
//! ```text
//! cargo run --release --example resnet -- [--steps N] [--batch N] [--image PIXELS] [--out DIR]
//!     [--preset train|eval|profile|debug] [--config FILE]
//! ```
//!
//! The diff's floor for one run a side was measured with it and with `train`
//! (docs/guide/report-and-diff.md): 10 runs each, idle and with every core busy.

#[path = "common/backend.rs"]
mod backend;
#[path = "common/cli.rs"]
mod cli;

use std::path::PathBuf;

use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::pool::{AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig, MaxPool2d, MaxPool2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d, Relu};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Distribution, Int, Tensor, TensorData};
use burn_profiled::config::Preset;
use burn_profiled::{Session, nvtx, stopwatch};

use backend::Training;

const CLASSES: usize = 10;

/// Two 3x3 convolutions with batch norms, and a 1x1 projection of the input where the block
/// changes the channels or the resolution.
#[derive(Module, Debug)]
struct BasicBlock<B: Backend> {
    conv1: Conv2d<B>,
    norm1: BatchNorm<B>,
    conv2: Conv2d<B>,
    norm2: BatchNorm<B>,
    projection: Option<(Conv2d<B>, BatchNorm<B>)>,
    relu: Relu,
}

impl<B: Backend> BasicBlock<B> {
    fn new(input: usize, output: usize, stride: usize, device: &B::Device) -> Self {
        let conv = |i, o, stride| {
            Conv2dConfig::new([i, o], [3, 3])
                .with_stride([stride, stride])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .with_bias(false)
                .init(device)
        };
        let projection = (stride != 1 || input != output).then(|| {
            (
                Conv2dConfig::new([input, output], [1, 1])
                    .with_stride([stride, stride])
                    .with_bias(false)
                    .init(device),
                BatchNormConfig::new(output).init(device),
            )
        });
        BasicBlock {
            conv1: conv(input, output, stride),
            norm1: BatchNormConfig::new(output).init(device),
            conv2: conv(output, output, 1),
            norm2: BatchNormConfig::new(output).init(device),
            projection,
            relu: Relu::new(),
        }
    }

    fn forward(&self, x: Tensor<B, 4>) -> Tensor<B, 4> {
        let skip = match &self.projection {
            Some((conv, norm)) => norm.forward(conv.forward(x.clone())),
            None => x.clone(),
        };
        let y = self.relu.forward(self.norm1.forward(self.conv1.forward(x)));
        let y = self.norm2.forward(self.conv2.forward(y));
        self.relu.forward(y + skip)
    }
}

/// ResNet-18: a 7x7 stem, four stages of two basic blocks (64 to 512 channels), a linear head.
#[derive(Module, Debug)]
struct ResNet18<B: Backend> {
    stem: Conv2d<B>,
    stem_norm: BatchNorm<B>,
    pool: MaxPool2d,
    blocks: Vec<BasicBlock<B>>,
    average: AdaptiveAvgPool2d,
    head: Linear<B>,
    relu: Relu,
}

impl<B: Backend> ResNet18<B> {
    fn new(device: &B::Device) -> Self {
        let mut blocks = Vec::new();
        let mut input = 64;
        for (stage, output) in [64, 128, 256, 512].into_iter().enumerate() {
            let stride = if stage == 0 { 1 } else { 2 };
            blocks.push(BasicBlock::new(input, output, stride, device));
            blocks.push(BasicBlock::new(output, output, 1, device));
            input = output;
        }
        ResNet18 {
            stem: Conv2dConfig::new([3, 64], [7, 7])
                .with_stride([2, 2])
                .with_padding(PaddingConfig2d::Explicit(3, 3, 3, 3))
                .with_bias(false)
                .init(device),
            stem_norm: BatchNormConfig::new(64).init(device),
            pool: MaxPool2dConfig::new([3, 3])
                .with_strides([2, 2])
                .with_padding(PaddingConfig2d::Explicit(1, 1, 1, 1))
                .init(),
            blocks,
            average: AdaptiveAvgPool2dConfig::new([1, 1]).init(),
            head: LinearConfig::new(512, CLASSES).init(device),
            relu: Relu::new(),
        }
    }

    fn forward(&self, images: Tensor<B, 4>) -> Tensor<B, 2> {
        let x = self
            .relu
            .forward(self.stem_norm.forward(self.stem.forward(images)));
        let x = self
            .blocks
            .iter()
            .fold(self.pool.forward(x), |x, block| block.forward(x));
        self.head.forward(self.average.forward(x).flatten(1, 3))
    }
}

/// Train ResNet-18 on generated images, instrumented per the configuration.
#[derive(clap::Parser)]
struct Args {
    /// Training steps (the first `stopwatch.warmup_iters` of them warm-up).
    #[arg(long, default_value_t = 12)]
    steps: usize,
    /// Images per batch.
    #[arg(long, default_value_t = 8)]
    batch: usize,
    /// The images' height and width, in pixels.
    #[arg(long, default_value_t = 32)]
    image: usize,
    /// Where `ops.json` and `run.json` go.
    #[arg(long, default_value = "target/burn-profiled/resnet")]
    out: PathBuf,
    #[command(flatten)]
    config: cli::ConfigArgs,
}

fn train<B: AutodiffBackend>(args: Args) -> std::io::Result<()> {
    let config = match (args.config.preset, &args.config.config) {
        (None, None) if std::env::var_os("BURN_PROFILED").is_none() => {
            burn_profiled::config::RuntimeConfig::preset(Preset::Eval)
        }
        _ => args.config.runtime_config(),
    };
    let device = B::Device::default();
    B::seed(&device, 0);
    let mut session = Session::start::<B>(config, &device, args.out);
    let mut model = ResNet18::<B>::new(&device);
    let mut optim = AdamConfig::new().init();
    let shape = [args.batch, 3, args.image, args.image];
    for step in 0..args.steps {
        let images = Tensor::<B, 4>::random(shape, Distribution::Default, &device);
        let labels: Vec<i64> = (0..args.batch)
            .map(|i| ((i + step) % CLASSES) as i64)
            .collect();
        let labels = Tensor::<B, 1, Int>::from_data(TensorData::from(&labels[..]), &device);
        {
            let _step = stopwatch::meas("step");
            let logits = nvtx::scope("forward", || model.forward(images));
            let loss = CrossEntropyLossConfig::new()
                .init(&device)
                .forward(logits, labels);
            let grads = nvtx::scope("backward", || loss.backward());
            model = nvtx::scope("optimizer", || {
                let grads = GradientsParams::from_grads(grads, &model);
                optim.step(1e-3, model, grads)
            });
        }
        if session.finish_iter().is_err() {
            break;
        }
    }
    B::sync(&device).map_err(|error| std::io::Error::other(error.to_string()))?;
    for file in session.finish()?.files {
        println!("wrote {}", file.display());
    }
    Ok(())
}

fn main() {
    let args = <Args as clap::Parser>::parse();
    if let Err(error) = train::<Training>(args) {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}
