//! A burn-train 0.22 `Learner` run profiled by one registration, the train data loader
//! (`burn_profiled_022::train`): every batch is a step of the session, with the stopwatch's
//! `step` and `load batch`, the op table's blocks in the phases the train step opens, and the
//! run directory, on wgpu (lavapipe without a GPU).
//!
//! One test: the tools a session enables are process-wide and enable-once.

use std::sync::Arc;

use burn::data::dataloader::Progress;
use burn::data::dataloader::batcher::Batcher;
use burn::data::dataloader::{DataLoader, DataLoaderBuilder};
use burn::data::dataset::InMemDataset;
use burn::module::{Module, Param};
use burn::optim::SgdConfig;
use burn::optim::lr_scheduler::constant::ConstantLr;
use burn::tensor::{Device, DeviceKind, Tensor, TensorData};
use burn::train::logger::InMemoryMetricLogger;
use burn::train::metric::{Metric, MetricMetadata, Numeric};
use burn::train::{
    InferenceStep, Learner, RegressionOutput, SupervisedTraining, TrainOutput, TrainStep,
};
use burn_profiled_022::config::RuntimeConfig;
use burn_profiled_022::nvtx;
use burn_profiled_022::train::TrainProfiling;

const BATCHES: usize = 6;

#[derive(Module, Debug)]
struct Line {
    weight: Param<Tensor<2>>,
}

#[derive(Clone, Debug)]
struct Batch {
    x: Tensor<2>,
    y: Tensor<2>,
}

struct Batches;

impl Batcher<f32, Batch> for Batches {
    fn batch(&self, items: Vec<f32>, device: &Device) -> Batch {
        let n = items.len();
        let x = Tensor::<2>::from_data(TensorData::new(items.clone(), [n, 1]), device);
        let ys: Vec<f32> = items.iter().map(|x| 3.0 * x).collect();
        let y = Tensor::<2>::from_data(TensorData::new(ys, [n, 1]), device);
        Batch { x, y }
    }
}

impl Line {
    fn loss(&self, batch: &Batch) -> (Tensor<1>, Tensor<2>) {
        let out = batch.x.clone().matmul(self.weight.val());
        let loss = (out.clone() - batch.y.clone()).powi_scalar(2).mean();
        (loss, out)
    }
}

impl TrainStep for Line {
    type Input = Batch;
    type Output = RegressionOutput;

    fn step(&self, batch: Batch) -> TrainOutput<RegressionOutput> {
        let (loss, out) = nvtx::scope("forward", || self.loss(&batch));
        let grads = nvtx::scope("backward", || loss.backward());
        TrainOutput::new(self, grads, RegressionOutput::new(loss, out, batch.y))
    }
}

impl InferenceStep for Line {
    type Input = Batch;
    type Output = RegressionOutput;

    fn step(&self, batch: Batch) -> RegressionOutput {
        let (loss, out) = self.loss(&batch);
        RegressionOutput::new(loss, out, batch.y)
    }
}

fn loader(items: usize) -> Arc<dyn DataLoader<Batch>> {
    let data: Vec<f32> = (0..items).map(|i| i as f32 / items as f32).collect();
    DataLoaderBuilder::new(Batches)
        .batch_size(2)
        .build(InMemDataset::new(data))
}

#[test]
fn every_batch_of_a_learner_run_is_a_step_with_its_blocks_in_their_phases() {
    let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.stopwatch.enabled = true;
    config.stopwatch.warmup_iters = 1;
    config.nvtx.user_ranges = true;
    config.stats.enabled = true;
    config.trace.enabled = true;
    let profiling = TrainProfiling::start(config, &device, out.path());

    let line = Line {
        weight: Param::from_tensor(Tensor::zeros([1, 1], &device)),
    };
    let learner = Learner::new(line, SgdConfig::new().init(), ConstantLr::new(0.1));
    let checkpoints = tempfile::tempdir().unwrap();
    let training = SupervisedTraining::new(
        checkpoints.path(),
        profiling.train_loader(loader(2 * BATCHES)),
        loader(4),
    )
    .num_epochs(1)
    .metric_train_numeric(profiling.step_time_metric())
    .metric_train_numeric(profiling.top_op_metric())
    .with_metric_logger(InMemoryMetricLogger::new())
    .with_application_logger(None);
    profiling.set_interrupter(training.interrupter());
    let _result = training.launch(learner);

    // The dashboard's metrics, as burn-train's worker updates them after a step.
    let metadata = MetricMetadata {
        progress: Progress {
            items_processed: 1,
            items_total: 1,
            unit: None,
        },
        iteration: Some(1),
        lr: None,
    };
    let mut step_time = profiling.step_time_metric();
    let entry = step_time.update(&(), &metadata).unwrap();
    assert!(entry.formatted.contains("ms"), "{}", entry.formatted);
    assert!(step_time.value().is_some_and(|v| v.current() > 0.0));
    let mut top_op = profiling.top_op_metric();
    let entry = top_op.update(&(), &metadata).unwrap();
    assert!(
        top_op.value().is_some_and(|v| v.current() > 0.0),
        "{}",
        entry.formatted
    );

    let summary = profiling.finish().unwrap().expect("the first finish");
    assert!(profiling.finish().unwrap().is_none(), "finished once");

    assert_eq!(summary.steps, BATCHES, "one step per batch");
    assert_eq!(summary.measured_steps, BATCHES - 1);
    assert!(profiling.last_step_seconds().is_some());
    let stopwatch = summary.stopwatch.as_ref().expect("the stopwatch ran");
    let names = format!("{stopwatch:?}");
    for name in ["\"step\"", "\"load batch\""] {
        assert!(names.contains(name), "{name} measured: {names}");
    }

    let ops: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("ops.json")).unwrap())
            .unwrap();
    let phases: Vec<&str> = ops["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|row| row["phase"].as_str())
        .collect();
    for phase in ["forward", "backward"] {
        assert!(
            phases.contains(&phase),
            "blocks of the train step's {phase}: {phases:?}"
        );
    }
}
