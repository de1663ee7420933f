//! Train a small CNN on `Autodiff<Profiled<NdArray>>` and show what the tools see.
//!
//! ```text
//! cargo run --release --example train -- [--steps N] [--out DIR]
//! nsys profile --trace=nvtx --capture-range=nvtx --nvtx-capture=capture \
//!     cargo run --release --example train                              # with Nsight Systems
//! ```
//! After 3 warm-up steps: NVTX op ranges (every forward and backward kernel is a range in the
//! domain `burn`, inside the user ranges `forward`, `backward`, `optimizer`), the capture range,
//! op statistics and the timeline. At the end: the stopwatch report and the op table on stdout,
//! `trace.json` and `ops.json` in the output directory.

use std::path::{Path, PathBuf};

use burn::backend::{Autodiff, NdArray};
use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Distribution, Int, Tensor};
use burn_profiled::nvtx::{self, RangeConfig};
use burn_profiled::stopwatch::{self, StopwatchConfig};
use burn_profiled::{DeviceSync, Profiled, probe, stats, trace};

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

fn train<B: AutodiffBackend>(steps: usize, out: &Path) -> std::io::Result<()> {
    let device = B::Device::default();
    B::seed(&device, 0);
    let sync = DeviceSync::new::<B>(device.clone());
    nvtx::enable(RangeConfig::new());
    stopwatch::enable(StopwatchConfig::new(WARMUP_STEPS, None).sync(sync));
    stopwatch::set_cpu_usage_meas_name("step").expect("set before the first step");
    stopwatch::start_one_time_measurement("complete run");

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
    for step in 0..steps {
        if step == WARMUP_STEPS {
            probe::set_op_ranges(true);
            stats::start(stats::StatsConfig::default());
            trace::start(trace::TraceConfig::default());
            nvtx::start_capture();
        }
        let _step = stopwatch::meas("step");
        let logits = stopwatch::measure("forward", || {
            nvtx::scope("forward", || model.forward(images.clone()))
        });
        let loss = CrossEntropyLossConfig::new()
            .init(&device)
            .forward(logits, labels.clone());
        let grads = stopwatch::measure("backward", || nvtx::scope("backward", || loss.backward()));
        model = stopwatch::measure("optimizer", || {
            nvtx::scope("optimizer", || {
                let grads = GradientsParams::from_grads(grads, &model);
                optim.step(1e-3, model, grads)
            })
        });
        drop(_step);
        stopwatch::finish_iter();
        println!("step {step:>3}  loss {:.5}", loss.into_scalar());
    }
    nvtx::stop_capture();
    trace::stop();
    stats::stop();
    probe::set_op_ranges(false);
    stopwatch::end_one_time_measurement("complete run");

    stopwatch::print_eval_times();
    let ops = stats::snapshot();
    println!("{}", ops.table(stats::GroupBy::OpAndPhase));
    std::fs::create_dir_all(out)?;
    std::fs::write(
        out.join("ops.json"),
        ops.to_json(stats::GroupBy::OpAndPhase),
    )?;
    let summary = trace::write(out.join("trace.json"))?;
    println!(
        "\nwrote {} (timeline, {} spans: open it in https://ui.perfetto.dev) and {}",
        out.join("trace.json").display(),
        summary.events,
        out.join("ops.json").display()
    );
    Ok(())
}

/// Train a small CNN on `Autodiff<Profiled<NdArray>>` and show what the tools see.
#[derive(clap::Parser)]
struct Args {
    /// Training steps, the first 3 of them warm-up.
    #[arg(long, default_value_t = 20)]
    steps: usize,
    /// Where `trace.json` and `ops.json` go.
    #[arg(long, default_value = "target/burn-profiled/train")]
    out: PathBuf,
}

fn main() -> std::io::Result<()> {
    let args = <Args as clap::Parser>::parse();
    train::<Autodiff<Profiled<NdArray>>>(args.steps, &args.out)
}
