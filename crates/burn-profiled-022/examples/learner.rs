//! Train the vision model of `examples/train.rs` through a burn-train 0.22 `Learner`, profiled
//! by one registration ([`TrainProfiling::train_loader`]).
//!
//! ```text
//! cargo run --release -p burn-profiled-022 --features train --example learner_022 -- [--epochs N] [--batches N] [--out DIR] [--preset P] [--config FILE]
//! BURN_PROFILED=profile cargo run --release -p burn-profiled-022 --features train --example learner_022
//! ```
//!
//! On `Device::default()` (CUDA with `--features cuda`, else wgpu: Mesa's lavapipe without a
//! GPU), autodiff on. burn-train's dashboard shows `Step Time` and `Top Op Share` next to
//! loss and accuracy; where stdout is not a terminal, a plain line every 5 iterations
//! (`PlainProgress`). At the end: burn-train's summary, the stopwatch report and the op table,
//! and `trace.json`, `ops.json`, `run.json` in the output directory (burn-train's own files go
//! to `DIR/learner`); with `debug`, the last step's batch under `dumps/`.

use std::path::PathBuf;

use burn::data::dataloader::DataLoaderBuilder;
use burn::data::dataloader::batcher::Batcher;
use burn::data::dataset::InMemDataset;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::AdamConfig;
use burn::optim::lr_scheduler::constant::ConstantLr;
use burn::tensor::{Device, Int, Tensor};
use burn::train::metric::{AccuracyMetric, LossMetric};
use burn::train::{
    ClassificationOutput, InferenceStep, Learner, SupervisedTraining, TrainOutput, TrainStep,
};
use burn_profiled_022::config::{Preset, RuntimeConfig};
use burn_profiled_022::dump::Map;
use burn_profiled_022::nvtx;
use burn_profiled_022::train::{PlainProgress, TrainProfiling};
use clap::Parser;

#[path = "common/vision.rs"]
mod vision;
use vision::{VisionModel, generated_batch};

/// Images per batch.
const BATCH: usize = 8;

/// A batch of generated images and their classes.
#[derive(Clone, Debug)]
pub struct Batch {
    pub images: Tensor<4>,
    pub labels: Tensor<1, Int>,
}

struct Batches;

impl Batcher<usize, Batch> for Batches {
    fn batch(&self, indices: Vec<usize>, device: &Device) -> Batch {
        let (images, labels) =
            generated_batch(indices.first().copied().unwrap_or(0), indices.len());
        Batch {
            images: Tensor::from_data(images, device),
            labels: Tensor::from_data(labels, device),
        }
    }
}

fn classify(model: &VisionModel, batch: Batch) -> ClassificationOutput {
    let logits = model.forward(batch.images);
    let loss = CrossEntropyLossConfig::new()
        .init(&logits.device())
        .forward(logits.clone(), batch.labels.clone());
    ClassificationOutput::new(loss, logits, batch.labels)
}

impl TrainStep for VisionModel {
    type Input = Batch;
    type Output = ClassificationOutput;

    fn step(&self, batch: Batch) -> TrainOutput<ClassificationOutput> {
        let output = nvtx::scope("forward", || classify(self, batch));
        let grads = nvtx::scope("backward", || output.loss.backward());
        TrainOutput::new(self, grads, output)
    }
}

impl InferenceStep for VisionModel {
    type Input = Batch;
    type Output = ClassificationOutput;

    fn step(&self, batch: Batch) -> ClassificationOutput {
        classify(self, batch)
    }
}

/// The options.
#[derive(Parser)]
struct Args {
    /// Training epochs.
    #[arg(long, default_value_t = 2)]
    epochs: usize,
    /// Batches per training epoch.
    #[arg(long, default_value_t = 12)]
    batches: usize,
    /// Where the run directory goes.
    #[arg(long, default_value = "target/learner-run")]
    out: PathBuf,
    /// A preset: train, eval, profile or debug (default: `$BURN_PROFILED`, else train).
    #[arg(long, conflicts_with = "config")]
    preset: Option<Preset>,
    /// A configuration file (TOML or JSON).
    #[arg(long)]
    config: Option<PathBuf>,
}

fn main() {
    let args = Args::parse();
    let config = match (args.preset, &args.config) {
        (Some(preset), _) => Ok(RuntimeConfig::preset(preset)),
        (None, Some(file)) => RuntimeConfig::from_file(file),
        (None, None) => RuntimeConfig::from_env_or(Preset::Train),
    };
    let config = config.unwrap_or_else(|error| {
        eprintln!("{error}");
        std::process::exit(2);
    });
    let device = Device::default().autodiff();
    device.seed(0);
    let profiling = TrainProfiling::start(config, &device, &args.out);

    // Batches of generated images: an item is its image's index.
    let loader = |batches: usize, offset: usize| {
        let indices: Vec<usize> = (offset..offset + batches * BATCH).collect();
        DataLoaderBuilder::new(Batches)
            .batch_size(BATCH)
            .build(InMemDataset::new(indices))
    };
    let train = profiling.train_loader_dumping(loader(args.batches, 0), |batch: &Batch| {
        Map::new()
            .with("images", &batch.images)
            .with("labels", &batch.labels)
    });
    let mut training = SupervisedTraining::new(args.out.join("learner"), train, loader(2, 10_000))
        .metric_train_numeric(LossMetric::new())
        .metric_valid_numeric(LossMetric::new())
        .metric_train_numeric(AccuracyMetric::new())
        .metric_valid_numeric(AccuracyMetric::new())
        .metric_train_numeric(profiling.step_time_metric())
        .metric_train_numeric(profiling.top_op_metric())
        .num_epochs(args.epochs)
        .summary();
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        // burn-train's terminal UI cannot draw: a line every 5 iterations instead of its
        // `ProgressSnapshot { .. }` dump of every one.
        training = training.renderer(Box::new(PlainProgress::every(5)));
    }
    profiling.set_interrupter(training.interrupter());
    let learner = Learner::new(
        VisionModel::new(&device),
        AdamConfig::new().init(),
        ConstantLr::new(1e-2),
    );
    let _result = training.launch(learner);
    match profiling.finish() {
        Ok(Some(summary)) if summary.stopped_by.is_some() => std::process::exit(3),
        Ok(_) => {}
        Err(error) => {
            eprintln!("burn-profiled: {error}");
            std::process::exit(1);
        }
    }
}
