//! Train the vision model of `examples/train.rs` through a burn-train `Learner`, profiled by
//! one registration ([`TrainProfiling::train_loader`]).
//!
//! ```text
//! cargo run --release --features train --example learner -- [--epochs N] [--out DIR] [--preset P] [--config FILE]
//! BURN_PROFILED=debug cargo run --release --features train --example learner
//! cargo run --release --features train --example learner -- --side-by-side 10
//!     # epoch time without the integration and with it (everything off), alternated
//! cargo run --release --features cuda,train --example learner       # on a CUDA GPU
//! cargo run --release --features wgpu,train --example learner       # on burn's Wgpu (fused)
//! cargo run --release --features wgpu,train --example learner -- --unfused   # without fusion
//! ```
//!
//! burn-train's dashboard shows `Step Time` and `Top Op Share` next to loss and accuracy (in a
//! terminal; elsewhere `burn_profiled::train::PlainProgress` prints a line every 5 iterations,
//! where burn-train's plain renderer would print a debug dump of every one). At the end:
//! burn-train's Learner Summary (each metric's best and worst epoch), the stopwatch report and
//! the op table, and `trace.json`, `ops.json`, `run.json` in the
//! output directory (burn-train's own logs go to `DIR/learner`); with `debug`, the last step's
//! batch under `dumps/`.

use std::path::PathBuf;

use burn::data::dataloader::DataLoaderBuilder;
use burn::data::dataloader::batcher::Batcher;
use burn::data::dataset::Dataset;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Int, Tensor, TensorData};
use burn::train::metric::{AccuracyMetric, LossMetric};
use burn::train::{
    ClassificationOutput, InferenceStep, Learner, SupervisedTraining, TrainOutput, TrainStep,
};
use burn_profiled::LaunchThread;
use burn_profiled::config::{Preset, RuntimeConfig};
use burn_profiled::dump::Map;
use burn_profiled::nvtx;
use burn_profiled::train::{PlainProgress, TrainProfiling};

#[path = "common/backend.rs"]
mod backend;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/vision.rs"]
mod vision;
use cli::ConfigArgs;
use vision::{VisionModel, generated_batch};

/// One generated image and its class.
#[derive(Clone, Debug)]
struct Item {
    index: usize,
}

/// `len` generated images; the same index gives the same image.
struct Generated {
    len: usize,
    offset: usize,
}

impl Dataset<Item> for Generated {
    fn get(&self, index: usize) -> Option<Item> {
        (index < self.len).then_some(Item {
            index: self.offset + index,
        })
    }

    fn len(&self) -> usize {
        self.len
    }
}

#[derive(Clone, Debug)]
pub struct Batch<B: Backend> {
    images: Tensor<B, 4>,
    labels: Tensor<B, 1, Int>,
}

#[derive(Clone, Default)]
struct ImageBatcher;

impl<B: Backend> Batcher<B, Item, Batch<B>> for ImageBatcher {
    fn batch(&self, items: Vec<Item>, device: &B::Device) -> Batch<B> {
        // One generated image per item: its class and pixels depend on its index only.
        let mut pixels = Vec::with_capacity(items.len() * 196);
        let mut labels = Vec::with_capacity(items.len());
        for item in &items {
            let (image, label) = generated_batch(item.index, 1);
            pixels.extend(image.to_vec::<f32>().unwrap_or_default());
            labels.extend(label.to_vec::<i64>().unwrap_or_default());
        }
        let count = items.len();
        Batch {
            images: Tensor::from_data(TensorData::new(pixels, [count, 1, 14, 14]), device),
            labels: Tensor::from_data(TensorData::new(labels, [count]), device),
        }
    }
}

fn classify<B: Backend>(model: &VisionModel<B>, batch: Batch<B>) -> ClassificationOutput<B> {
    let logits = nvtx::scope("forward", || model.forward(batch.images, false));
    let loss = CrossEntropyLossConfig::new()
        .init(&logits.device())
        .forward(logits.clone(), batch.labels.clone());
    ClassificationOutput::new(loss, logits, batch.labels)
}

impl<B: AutodiffBackend> TrainStep for VisionModel<B> {
    type Input = Batch<B>;
    type Output = ClassificationOutput<B>;

    fn step(&self, batch: Batch<B>) -> TrainOutput<ClassificationOutput<B>> {
        let output = classify(self, batch);
        let grads = nvtx::scope("backward", || output.loss.backward());
        TrainOutput::new(self, grads, output)
    }

    fn optimize<B2, O>(self, optim: &mut O, lr: f64, grads: GradientsParams) -> Self
    where
        B2: AutodiffBackend,
        O: Optimizer<Self, B2>,
        Self: burn::module::AutodiffModule<B2>,
    {
        nvtx::scope("optimizer", || optim.step(lr, self, grads))
    }
}

impl<B: Backend> InferenceStep for VisionModel<B> {
    type Input = Batch<B>;
    type Output = ClassificationOutput<B>;

    fn step(&self, batch: Batch<B>) -> ClassificationOutput<B> {
        classify(self, batch)
    }
}

/// The train and validation loaders of `args`.
#[allow(clippy::type_complexity)]
fn loaders<B: AutodiffBackend>(
    args: &Args,
) -> (
    std::sync::Arc<dyn burn::data::dataloader::DataLoader<B, Batch<B>>>,
    std::sync::Arc<dyn burn::data::dataloader::DataLoader<B::InnerBackend, Batch<B::InnerBackend>>>,
) {
    // Batches are made by worker threads, which put their tensors on the device while the
    // training thread runs (on a GPU, both queue their ops on the one device thread).
    let train = DataLoaderBuilder::new(ImageBatcher)
        .batch_size(args.batch)
        .shuffle(0)
        .num_workers(args.workers)
        .build(Generated {
            len: args.items,
            offset: 0,
        });
    let valid = DataLoaderBuilder::new(ImageBatcher)
        .batch_size(args.batch)
        .build(Generated {
            len: args.items / 4,
            offset: 1_000_000,
        });
    (train, valid)
}

/// A renderer that shows nothing, for the side-by-side timing.
struct Quiet;

impl burn::train::renderer::MetricsRendererTraining for Quiet {
    fn update_train(&mut self, _: burn::train::renderer::MetricState) {}
    fn update_valid(&mut self, _: burn::train::renderer::MetricState) {}
    fn render_train(
        &mut self,
        _: burn::train::renderer::TrainingProgress,
        _: Vec<burn::train::renderer::ProgressType>,
    ) {
    }
    fn render_valid(
        &mut self,
        _: burn::train::renderer::TrainingProgress,
        _: Vec<burn::train::renderer::ProgressType>,
    ) {
    }
}

impl burn::train::renderer::MetricsRendererEvaluation for Quiet {
    fn update_test(
        &mut self,
        _: burn::train::renderer::EvaluationName,
        _: burn::train::renderer::MetricState,
    ) {
    }
    fn render_test(
        &mut self,
        _: burn::train::renderer::EvaluationProgress,
        _: Vec<burn::train::renderer::ProgressType>,
    ) {
    }
}

impl burn::train::renderer::MetricsRenderer for Quiet {
    fn manual_close(&mut self) {}
    fn register_metric(&mut self, _: burn::train::metric::MetricDefinition) {}
}

/// One epoch without the integration and one with it (the `train` preset: everything off),
/// `rounds` times, alternated; prints the median epoch time of each.
fn side_by_side<B: AutodiffBackend>(args: &Args, rounds: usize) {
    let device = B::Device::default();
    let quiet = args.out.join("side-by-side");
    let epoch = |profiling: Option<&TrainProfiling>| {
        B::seed(&device, 0);
        let (train, valid) = loaders::<B>(args);
        let train = match profiling {
            Some(profiling) => profiling.train_loader(train),
            None => train,
        };
        let started = std::time::Instant::now();
        SupervisedTraining::new(&quiet, train, valid)
            .metrics((AccuracyMetric::new(), LossMetric::new()))
            .renderer(Quiet)
            .with_application_logger(None)
            .num_epochs(1)
            .launch(Learner::new(
                VisionModel::<B>::new(&device),
                AdamConfig::new().init(),
                1e-2,
            ));
        started.elapsed().as_secs_f64()
    };
    let profiling =
        TrainProfiling::start::<B>(RuntimeConfig::preset(Preset::Train), &device, &quiet);
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        without.push(epoch(None));
        with.push(epoch(Some(&profiling)));
    }
    let median = |times: &mut Vec<f64>| {
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    };
    let (without, with) = (median(&mut without), median(&mut with));
    println!(
        "epoch time, median of {rounds}: without the integration {:.1} ms, with it (everything off) {:.1} ms: {:.4}x",
        without * 1e3,
        with * 1e3,
        with / without
    );
}

fn train<B: AutodiffBackend>(
    config: RuntimeConfig,
    args: Args,
    launch_thread: impl FnOnce(&B::Device) -> Option<LaunchThread>,
) -> std::io::Result<()> {
    nvtx::name_current_thread("training");
    let device = B::Device::default();
    B::seed(&device, 0);
    println!(
        "backend {}, {} epochs of {} images, preset config:\n{}",
        B::name(&device),
        args.epochs,
        args.items,
        config.to_toml()
    );
    let profiling = TrainProfiling::start::<B>(config, &device, &args.out);
    if let Some(launch_thread) = launch_thread(&device) {
        profiling.set_launch_thread(launch_thread);
    }
    let (train_loader, valid_loader) = loaders::<B>(&args);
    // The one registration: each batch starts a profiled step (and, with dumps on, the last
    // step's batch is dumped).
    let train_loader = profiling.train_loader_dumping(train_loader, |batch: &Batch<B>| {
        Map::new()
            .with("images", batch.images.clone())
            .with("labels", batch.labels.clone())
    });
    let mut training =
        SupervisedTraining::new(args.out.join("learner"), train_loader, valid_loader)
            .metrics((AccuracyMetric::new(), LossMetric::new()))
            .metric_train_numeric(profiling.step_time_metric())
            .metric_train_numeric(profiling.top_op_metric())
            .num_epochs(args.epochs)
            .summary();
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        // burn-train's terminal UI cannot draw: a line every 5 iterations instead of its
        // plain renderer's dump of every one.
        training = training.renderer(PlainProgress::every(5));
    }
    // The memory guard (`[host] memory_limit_mib`) stops the run through it.
    profiling.set_interrupter(training.interrupter());
    let model = VisionModel::<B>::new(&device);
    let _result = training.launch(Learner::new(model, AdamConfig::new().init(), 1e-2));
    if let Some(summary) = profiling.finish()? {
        for file in &summary.files {
            println!("wrote {}", file.display());
        }
        if summary.stopped_by.is_some() {
            // A memory limit stopped the run (the session said which on stderr).
            std::process::exit(3);
        }
    }
    Ok(())
}

/// Train the vision model through a burn-train Learner, profiled per the configuration.
#[derive(clap::Parser)]
struct Args {
    /// Epochs.
    #[arg(long, default_value_t = 2)]
    epochs: usize,
    /// Training images per epoch (a quarter as many for validation).
    #[arg(long, default_value_t = 640)]
    items: usize,
    /// Images per batch.
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// Data-loader worker threads making the training batches.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Where `trace.json`, `ops.json` and `run.json` go (burn-train's files under `learner/`).
    #[arg(long, default_value = "target/burn-profiled/learner")]
    out: PathBuf,
    #[command(flatten)]
    config: ConfigArgs,
    /// With `cuda` or `wgpu`: profile the GPU backend without fusion (`Profiled<Cuda>`),
    /// to compare with the fused one profiled by default (`burn_profiled::fused::Cuda`).
    #[arg(long)]
    unfused: bool,
    /// Instead of training: time ROUNDS epochs without the integration and with it
    /// (everything off), alternated, and print the median of each.
    #[arg(long, value_name = "ROUNDS")]
    side_by_side: Option<usize>,
}

fn main() {
    let args = <Args as clap::Parser>::parse();
    let config = args.config.runtime_config();
    if let Some(rounds) = args.side_by_side {
        return match args.unfused {
            false => side_by_side::<backend::Training>(&args, rounds.max(1)),
            true => side_by_side::<backend::Unfused>(&args, rounds.max(1)),
        };
    }
    let trained = match args.unfused {
        false => train::<backend::Training>(config, args, backend::launch_thread),
        true => train::<backend::Unfused>(config, args, backend::unfused_launch_thread),
    };
    if let Err(error) = trained {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}
