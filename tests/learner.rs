//! A burn-train `Learner` run on `Autodiff<Profiled<NdArray>>`, profiled through
//! `TrainProfiling`. Run with `cargo test --features train --test learner`.
//!
//! A session enables the process-wide tools once, so each run is a child process: this binary
//! again, running the ignored test `child` with `LEARNER_CHILD=<mode>`.
#![cfg(feature = "train")]

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

mod support;

use burn::backend::{Autodiff, NdArray};
use burn::data::dataloader::batcher::Batcher;
use burn::data::dataloader::{DataLoader, DataLoaderBuilder};
use burn::data::dataset::Dataset;
use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::{Linear, LinearConfig};
use burn::optim::SgdConfig;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Int, Tensor, TensorData};
use burn::train::logger::MetricLogger;
use burn::train::metric::store::{EpochSummary, MetricsUpdate, Split};
use burn::train::metric::{MetricDefinition, MetricId, NumericEntry};
use burn::train::renderer::{
    EvaluationName, EvaluationProgress, MetricState, MetricsRenderer, MetricsRendererEvaluation,
    MetricsRendererTraining, ProgressType, TrainingProgress,
};
use burn::train::{
    ClassificationOutput, InferenceStep, Learner, SupervisedTraining, TrainOutput, TrainStep,
};
use burn_profiled::Profiled;
use burn_profiled::config::{Preset, RuntimeConfig};
use burn_profiled::dump::Map;
use burn_profiled::train::TrainProfiling;

nvtx_recorder::install_static!();

type B = Autodiff<Profiled<NdArray>>;

const EPOCHS: usize = 2;
/// 8 items in batches of 2: 4 steps per epoch.
const ITEMS: usize = 8;
const BATCH: usize = 2;
const WARMUP: usize = 3;
/// The train loader's worker threads (0: batches made on the training thread).
static LOADER_WORKERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[derive(Module, Debug)]
pub struct Classifier<B: Backend> {
    linear: Linear<B>,
}

#[derive(Clone, Debug)]
pub struct Batch<B: Backend> {
    inputs: Tensor<B, 2>,
    labels: Tensor<B, 1, Int>,
}

#[derive(Clone, Debug)]
struct Item(usize);

struct Items;

impl Dataset<Item> for Items {
    fn get(&self, index: usize) -> Option<Item> {
        (index < ITEMS).then_some(Item(index))
    }
    fn len(&self) -> usize {
        ITEMS
    }
}

#[derive(Clone)]
struct ItemBatcher;

impl<B: Backend> Batcher<B, Item, Batch<B>> for ItemBatcher {
    fn batch(&self, items: Vec<Item>, device: &B::Device) -> Batch<B> {
        let inputs: Vec<f32> = items
            .iter()
            .flat_map(|Item(i)| (0..4).map(move |j| ((i * 7 + j * 3) % 11) as f32 / 11.0 - 0.5))
            .collect();
        let labels: Vec<i64> = items.iter().map(|Item(i)| (i % 3) as i64).collect();
        Batch {
            inputs: Tensor::from_data(TensorData::new(inputs, [items.len(), 4]), device),
            labels: Tensor::from_data(TensorData::new(labels, [items.len()]), device),
        }
    }
}

fn classify<B: Backend>(model: &Classifier<B>, batch: Batch<B>) -> ClassificationOutput<B> {
    let logits = model.linear.forward(batch.inputs);
    let loss = CrossEntropyLossConfig::new()
        .init(&logits.device())
        .forward(logits.clone(), batch.labels.clone());
    ClassificationOutput::new(loss, logits, batch.labels)
}

impl<B: AutodiffBackend> TrainStep for Classifier<B> {
    type Input = Batch<B>;
    type Output = ClassificationOutput<B>;
    fn step(&self, batch: Batch<B>) -> TrainOutput<ClassificationOutput<B>> {
        let output = classify(self, batch);
        TrainOutput::new(self, output.loss.backward(), output)
    }
}

impl<B: Backend> InferenceStep for Classifier<B> {
    type Input = Batch<B>;
    type Output = ClassificationOutput<B>;
    fn step(&self, batch: Batch<B>) -> ClassificationOutput<B> {
        classify(self, batch)
    }
}

/// The numeric metric values logged, by metric name, in order.
#[derive(Clone, Default)]
struct Logged {
    names: Arc<Mutex<HashMap<MetricId, String>>>,
    values: Arc<Mutex<Vec<(String, f64)>>>,
    /// Metric updates of validation.
    valid_updates: Arc<Mutex<usize>>,
}

impl MetricLogger for Logged {
    fn log(&mut self, update: MetricsUpdate, _epoch: usize, split: &Split) {
        if !matches!(split, Split::Train) {
            *self.valid_updates.lock().unwrap() += 1;
            return;
        }
        let names = self.names.lock().unwrap();
        for numeric in update.entries_numeric {
            let name = names
                .get(&numeric.entry.metric_id)
                .cloned()
                .unwrap_or_default();
            self.values
                .lock()
                .unwrap()
                .push((name, numeric.numeric_entry.current()));
        }
    }
    fn read_numeric(
        &mut self,
        _name: &str,
        _epoch: usize,
        _split: &Split,
    ) -> Result<Vec<NumericEntry>, String> {
        Ok(Vec::new())
    }
    fn log_metric_definition(&mut self, definition: MetricDefinition) {
        self.names
            .lock()
            .unwrap()
            .insert(definition.metric_id, definition.name);
    }
    fn log_epoch_summary(&mut self, _summary: EpochSummary) {}
}

/// A renderer that prints nothing: the tests run without a terminal.
struct Quiet;

impl MetricsRendererTraining for Quiet {
    fn update_train(&mut self, _state: MetricState) {}
    fn update_valid(&mut self, _state: MetricState) {}
    fn render_train(&mut self, _item: TrainingProgress, _indicators: Vec<ProgressType>) {}
    fn render_valid(&mut self, _item: TrainingProgress, _indicators: Vec<ProgressType>) {}
}

impl MetricsRendererEvaluation for Quiet {
    fn update_test(&mut self, _name: EvaluationName, _state: MetricState) {}
    fn render_test(&mut self, _item: EvaluationProgress, _indicators: Vec<ProgressType>) {}
}

impl MetricsRenderer for Quiet {
    fn manual_close(&mut self) {}
    fn register_metric(&mut self, _definition: MetricDefinition) {}
}

/// Trains the classifier through a `Learner`, profiled when `profiling` is given; returns the
/// trained weights and the logged metric values.
fn learn(dir: &Path, profiling: Option<&TrainProfiling>) -> (Vec<TensorData>, Vec<(String, f64)>) {
    let device = Default::default();
    B::seed(&device, 5);
    let model = Classifier {
        linear: LinearConfig::new(4, 3).init::<B>(&device),
    };
    let train: Arc<dyn DataLoader<B, Batch<B>>> = DataLoaderBuilder::new(ItemBatcher)
        .batch_size(BATCH)
        .num_workers(LOADER_WORKERS.load(std::sync::atomic::Ordering::Relaxed))
        .build(Items);
    let valid = DataLoaderBuilder::new(ItemBatcher)
        .batch_size(BATCH)
        .build(Items);
    let logged = Logged::default();
    let mut training = match profiling {
        Some(profiling) => SupervisedTraining::new(
            dir,
            profiling.train_loader_dumping(train, |batch: &Batch<B>| {
                Map::new()
                    .with("inputs", batch.inputs.clone())
                    .with("labels", batch.labels.clone())
            }),
            valid,
        )
        .metric_train_numeric(profiling.step_time_metric())
        .metric_train_numeric(profiling.top_op_metric()),
        None => SupervisedTraining::new(dir, train, valid),
    };
    if let Some(profiling) = profiling {
        profiling.set_interrupter(training.interrupter());
    }
    training = training
        .num_epochs(EPOCHS)
        .renderer(Quiet)
        .with_metric_logger(logged.clone())
        .with_application_logger(None);
    let result = training.launch(Learner::new(model, SgdConfig::new().init(), 0.5));
    let weights = vec![
        result.model.linear.weight.val().into_data(),
        result.model.linear.bias.unwrap().val().into_data(),
    ];
    let mut values = logged.values.lock().unwrap().clone();
    values.push((
        "valid updates".to_owned(),
        *logged.valid_updates.lock().unwrap() as f64,
    ));
    (weights, values)
}

fn config(preset: Preset) -> RuntimeConfig {
    let mut config = RuntimeConfig::preset(preset);
    config.stopwatch.warmup_iters = WARMUP;
    config
}

/// The child's part: `mode` is a preset name, or `identical`.
#[test]
#[ignore = "run by the other tests, in a child process"]
fn child() {
    let (Ok(mode), Ok(out)) = (std::env::var("LEARNER_CHILD"), std::env::var("LEARNER_OUT")) else {
        return;
    };
    let out = PathBuf::from(out);
    let device = Default::default();
    if mode == "identical" {
        let (without, _) = learn(&out.join("without"), None);
        let profiling = TrainProfiling::start::<B>(config(Preset::Profile), &device, &out);
        let (with, _) = learn(&out.join("with"), Some(&profiling));
        profiling.finish().unwrap();
        for (without, with) in without.iter().zip(&with) {
            assert_eq!(without.as_bytes(), with.as_bytes(), "training changed");
        }
        return;
    }
    if mode == "compare_without_reference" {
        // A comparison that fails (here: nothing to compare with) still leaves the artefacts.
        let mut config = config(Preset::Debug);
        config.dump.compare = true;
        config.dump.dir = Some(out.join("no-reference"));
        let profiling = TrainProfiling::start::<B>(config, &device, &out);
        learn(&out.join("learner"), Some(&profiling));
        let error = profiling.finish().expect_err("nothing to compare with");
        std::fs::write(out.join("error.txt"), error.to_string()).unwrap();
        return;
    }
    if mode == "memory_guard" {
        // Past the limit after the first step: the run stops there, without validation.
        let mut config = config(Preset::Eval);
        config.stopwatch.warmup_iters = 0;
        config.host.memory_limit_mib = Some(1);
        let profiling = TrainProfiling::start::<B>(config, &device, &out);
        let (_, values) = learn(&out.join("learner"), Some(&profiling));
        let summary = profiling.finish().unwrap().unwrap();
        assert_eq!(summary.steps, 1);
        assert_eq!(values.last().unwrap(), &("valid updates".to_owned(), 0.0));
        assert!(
            summary
                .stopped_by
                .as_deref()
                .is_some_and(|why| why.starts_with("host memory limit reached")),
            "{:?}",
            summary.stopped_by
        );
        // The integration samples memory at each step's end, as a session does (eval).
        let memory = summary.memory.expect("eval samples memory per step");
        assert_eq!(memory.steps, [0]);
        assert!(memory.host.rss_bytes[0] > 1 << 20);
        return;
    }
    if mode == "loader_threads" {
        // Batches made by two loader threads while the training thread trains.
        LOADER_WORKERS.store(2, std::sync::atomic::Ordering::Relaxed);
        let mut config = config(Preset::Train);
        config.stats.enabled = true;
        config.stats.call_sites = true;
        let profiling = TrainProfiling::start::<B>(config, &device, &out);
        learn(&out.join("learner"), Some(&profiling));
        profiling.finish().unwrap();
        return;
    }
    if mode == "two_threads" {
        // DDP: each device's worker iterates its own part of the loader, at the same time.
        let profiling = TrainProfiling::start::<B>(config(Preset::Profile), &device, &out);
        let inner: Arc<dyn DataLoader<B, Batch<B>>> = DataLoaderBuilder::new(ItemBatcher)
            .batch_size(BATCH)
            .build(Items);
        let loader = profiling.train_loader(inner);
        let half = ITEMS / 2;
        let workers: Vec<_> = [(0, half), (half, ITEMS)]
            .into_iter()
            .map(|(start, end)| {
                let part = loader.slice(start, end);
                std::thread::spawn(move || {
                    let mut batches = 0;
                    for _ in 0..EPOCHS {
                        for batch in part.iter() {
                            let _ = batch.inputs.exp().sum().into_scalar();
                            batches += 1;
                        }
                    }
                    batches
                })
            })
            .collect();
        let batches: Vec<usize> = workers.into_iter().map(|w| w.join().unwrap()).collect();
        assert_eq!(
            batches,
            [EPOCHS * half / BATCH; 2],
            "every batch passed through"
        );
        let summary = profiling.finish().unwrap().unwrap();
        assert_eq!(summary.steps, EPOCHS * half / BATCH, "one worker's batches");
        return;
    }
    let preset: Preset = mode.parse().unwrap();
    let profiling = TrainProfiling::start::<B>(config(preset), &device, &out);
    let (_, values) = learn(&out.join("learner"), Some(&profiling));
    let summary = profiling.finish().unwrap().expect("the first finish");
    assert_eq!(summary.steps, EPOCHS * ITEMS / BATCH);
    assert!(profiling.finish().unwrap().is_none(), "finished once");
    std::fs::write(
        out.join("metrics.json"),
        serde_json::to_string(&values).unwrap(),
    )
    .unwrap();
    std::fs::write(
        out.join("nvtx.tsv"),
        nvtx_recorder::to_tsv(&nvtx_recorder::events_of_thread(
            nvtx_recorder::current_tid(),
        )),
    )
    .unwrap();
}

/// Runs `child` with `mode` in a fresh process; its output directory.
fn run_child(mode: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("LEARNER_CHILD", mode)
        .env("LEARNER_OUT", &out)
        .env_remove("BURN_PROFILED")
        .status()
        .unwrap();
    assert!(status.success(), "the {mode} child failed: {status}");
    (dir, out)
}

/// The files and folders directly in `dir`.
fn entries(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn each_preset_writes_exactly_its_artefacts() {
    let ours = |files: &[&str]| -> BTreeSet<String> {
        files
            .iter()
            .chain(&["metrics.json", "nvtx.tsv"])
            .map(|f| f.to_string())
            .collect()
    };
    let expected = [
        ("train", ours(&["run.json"])),
        ("eval", ours(&["run.json"])),
        (
            "profile",
            ours(&[
                "ops.json",
                "ops_by_module.json",
                "report.html",
                "run.json",
                "trace.json",
            ]),
        ),
        (
            "debug",
            ours(&[
                "dumps",
                "graph.json",
                "numerics.jsonl",
                "ops.json",
                "ops_by_call_site.json",
                "ops_by_forward_call_site.json",
                "ops_by_module.json",
                "ops_by_shapes.json",
                "report.html",
                "run.json",
                "stacks.folded",
                "trace.json",
            ]),
        ),
    ];
    for (preset, files) in expected {
        let (_dir, out) = run_child(preset);
        assert_eq!(entries(&out), files, "{preset}");
        if preset == "debug" {
            // The last step's batch: items 6 and 7 of the second epoch (labels 0 and 1).
            let dump: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(out.join("dumps/0/tensors.json")).unwrap(),
            )
            .unwrap();
            assert_eq!(dump["batch"]["labels"], serde_json::json!([0, 1]), "{dump}");
            assert_eq!(
                dump["batch"]["inputs"].as_array().map(Vec::len),
                Some(BATCH)
            );
        }
    }
}

#[test]
fn ops_made_on_the_loaders_threads_have_their_call_sites_in_the_batcher() {
    let (_dir, out) = run_child("loader_threads");
    let sites: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("ops_by_call_site.json")).unwrap())
            .unwrap();
    let site_of = |op: &str| -> BTreeSet<String> {
        sites["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|row| row["op"] == op)
            .map(|row| row["call_site"].as_str().unwrap().to_owned())
            .collect()
    };
    let batcher = site_of("float_from_data");
    assert!(
        !batcher.is_empty()
            && batcher
                .iter()
                .all(|site| site.contains("batch (tests/learner.rs:")),
        "the batch's inputs, made on a loader thread, come from the batcher: {batcher:?}"
    );
    let model = site_of("linear");
    assert!(
        !model.is_empty()
            && model
                .iter()
                .all(|site| site.contains("classify (tests/learner.rs:")),
        "the training thread's forward comes from the model's code: {model:?}"
    );
    let folded = std::fs::read_to_string(out.join("stacks.folded")).unwrap();
    let from_data: Vec<&str> = folded
        .lines()
        .filter(|line| line.contains(";float_from_data "))
        .collect();
    assert!(
        !from_data.is_empty()
            && from_data
                .iter()
                .all(|line| !line.contains("classify") && line.contains("batch;float_from_data ")),
        "on the loader's threads, the stacks are the loader's alone: {from_data:?}"
    );
}

#[test]
fn op_ranges_start_after_warmup_and_the_dashboard_numbers_are_sane() {
    let (_dir, out) = run_child("profile");
    // On the training thread: a `step` range per step, and the first op range after the
    // warm-up steps (loading the first measured step's batch).
    let tsv = std::fs::read_to_string(out.join("nvtx.tsv")).unwrap();
    let mut steps = 0;
    let mut first_op_range_in_step = None;
    for line in tsv.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        let (kind, domain, message) = (fields[2], fields[3], fields[6]);
        if kind == "push" && message == "step" {
            steps += 1;
        }
        if kind == "push" && domain == "burn" && first_op_range_in_step.is_none() {
            first_op_range_in_step = Some(steps);
        }
    }
    assert_eq!(steps, EPOCHS * ITEMS / BATCH, "{tsv}");
    assert_eq!(first_op_range_in_step, Some(WARMUP), "{tsv}");
    // trace.json: Kineto's profiler step per measured step, numbered as the session counts.
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("trace.json")).unwrap()).unwrap();
    let profiler_steps: Vec<String> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["name"].as_str())
        .filter(|name| name.starts_with("ProfilerStep#"))
        .map(str::to_owned)
        .collect();
    let expected: Vec<String> = (WARMUP..EPOCHS * ITEMS / BATCH)
        .map(|step| format!("ProfilerStep#{step}"))
        .collect();
    assert_eq!(profiler_steps, expected);

    let values: Vec<(String, f64)> =
        serde_json::from_str(&std::fs::read_to_string(out.join("metrics.json")).unwrap()).unwrap();
    let of = |name: &str| -> Vec<f64> {
        values
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| *v)
            .collect()
    };
    let (step_times, top_op) = (of("Step Time"), of("Top Op Share"));
    assert_eq!(step_times.len(), EPOCHS * ITEMS / BATCH, "{values:?}");
    assert!(
        step_times.iter().all(|ms| (0.0..10_000.0).contains(ms)),
        "{step_times:?}"
    );
    assert!(
        step_times.iter().skip(1).all(|ms| *ms > 0.0),
        "{step_times:?}"
    );
    assert!(
        top_op.iter().all(|p| (0.0..=100.0).contains(p)),
        "{top_op:?}"
    );
    assert!(
        top_op.last().is_some_and(|p| *p > 0.0),
        "statistics run after warm-up: {top_op:?}"
    );
}

#[test]
fn a_failed_comparison_at_the_end_still_writes_the_artefacts() {
    let (_dir, out) = run_child("compare_without_reference");
    let error = std::fs::read_to_string(out.join("error.txt")).unwrap();
    assert!(
        error.starts_with("No previously dumped data found"),
        "{error}"
    );
    for file in ["ops.json", "trace.json", "run.json"] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
}

#[test]
fn the_memory_guard_stops_the_learner_through_its_interrupter() {
    run_child("memory_guard");
}

#[test]
fn two_workers_iterating_at_once_ddp_do_not_break_the_steps() {
    run_child("two_threads");
}

#[test]
fn training_with_the_integration_is_bit_identical() {
    run_child("identical");
}

#[test]
fn the_loader_passes_batches_through_unchanged() {
    // No session tool on: the wrapped loader gives the inner loader's batches, in order.
    let device = Default::default();
    let profiling =
        TrainProfiling::start::<B>(RuntimeConfig::preset(Preset::Train), &device, "unused");
    let inner: Arc<dyn DataLoader<B, Batch<B>>> = DataLoaderBuilder::new(ItemBatcher)
        .batch_size(3)
        .build(Items);
    let wrapped = profiling.train_loader(inner.clone());
    assert_eq!(wrapped.num_items(), inner.num_items());
    let labels = |loader: &Arc<dyn DataLoader<B, Batch<B>>>| -> Vec<Vec<i64>> {
        loader
            .iter()
            .map(|b| b.labels.into_data().to_vec::<i64>().unwrap())
            .collect()
    };
    assert_eq!(labels(&wrapped), labels(&inner));
    assert_eq!(labels(&wrapped.slice(2, 7)), labels(&inner.slice(2, 7)));
    assert_eq!(profiling.last_step_seconds().map(|s| s >= 0.0), Some(true));
}

#[test]
fn the_learner_example_without_a_terminal_prints_a_line_every_five_iterations() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(support::built(
        "examples/learner",
        "build it first: `cargo build --features train --example learner`",
    ))
    .args([
        "--epochs", "1", "--items", "96", "--batch", "8", "--preset", "train",
    ])
    .arg("--out")
    .arg(dir.path())
    .env_remove("BURN_PROFILED")
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        !stdout.contains("TrainingProgress"),
        "no debug dump: {stdout}"
    );
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|line| line.starts_with("train epoch "))
        .collect();
    // 12 iterations: the 5th, the 10th, and the epoch's last.
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines[0].starts_with("train epoch 1/1, iteration 5, items 40/96: Accuracy epoch "),
        "{}",
        lines[0]
    );
    assert!(lines[0].contains(", Loss epoch "), "{}", lines[0]);
    assert!(lines[2].starts_with("train epoch 1/1, iteration 12, items 96/96: "));
    assert!(
        stdout.contains("valid epoch 1/1, iteration 3, items 24/24: "),
        "{stdout}"
    );
}
