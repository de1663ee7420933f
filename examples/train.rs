//! Train a small vision model on generated data, instrumented end to end, switched between
//! training, evaluation, profiling and debugging by one configuration.
//!
//! ```text
//! cargo run --release --example train -- [--steps N] [--out DIR] [--preset train|eval|profile|debug] [--config FILE]
//! BURN_PROFILED=debug cargo run --release --example train          # the same, from the environment
//! cargo run --release --features cuda --example train              # on a CUDA GPU
//! cargo run --release --features wgpu --example train              # on burn's Wgpu
//! cargo run --release --features wgpu --example train -- --unfused  # the same without fusion
//! cargo run --release --features cupti --example train             # + device time per op
//! cargo run --release --example train -- --preset eval --leak        # the memory growth warning
//! nsys profile --trace=nvtx,cuda --capture-range=nvtx --nvtx-capture=capture \
//!     cargo run --release --example train                          # steady state under Nsight
//! ```
//!
//! The model: two convolutions, max pooling, a LayerNorm and multi-head self-attention over the
//! 5x5 feature patches, and a linear head; cross-entropy and Adam. A data-loading thread makes
//! the batches. Each step is measured by the stopwatch (`step` with CPU usage, `forward`,
//! `backward`, `optimizer`) and is inside NVTX ranges of the same names; the attention block
//! and the head are `Ranged` sub-modules. After warm-up: op ranges, op statistics, the
//! timeline and the capture range. At the end, per the preset: the report and the op table on
//! stdout, and `trace.json`, `ops.json` and `run.json` in the output directory; with `debug`,
//! the last step's batch, activations and gradients under `dumps/0/` (run it twice with
//! `[dump] compare = true` to check a change did not alter them: the run then says whether
//! they match). On CUDA and Wgpu the backend is fused, as with burn's default features, and
//! profiled inside fusion (`burn_profiled::fused`): each fused block and each op fusion runs
//! unfused is an op, its range on CubeCL's device thread around its kernels. With
//! `--unfused`, each step runs on CubeCL's device thread (`[nvtx] steps_on_launch_thread`),
//! so each op range contains its kernels under Nsight Systems.
//!
//! Memory (`[memory]`, on with `eval`, `profile` and `debug`): at each measured step's end,
//! host RSS and each device's memory in use and reserved go to `run.json` and `trace.json`, with
//! the peaks at the end and a warning when memory in use grew steadily (`--leak` keeps a
//! tensor per step to show it). With `debug`, each op's allocations are columns of the op table.
//! A run stopped by a memory limit (`[host] memory_limit_mib`, `[memory] device_limit_mib`)
//! says why on stderr and exits with code 3.

use std::path::PathBuf;
use std::sync::mpsc;

use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::{Int, Tensor};
use burn_profiled::config::RuntimeConfig;
use burn_profiled::dump::{self, AddOptions, DumpType, Map, TapBackend};
use burn_profiled::memory::TrackingAllocator;
use burn_profiled::nvtx;
use burn_profiled::{LaunchThread, Session, stopwatch};
use indicatif::{ProgressBar, ProgressStyle};

#[path = "common/backend.rs"]
mod backend;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/vision.rs"]
mod vision;
use cli::ConfigArgs;
use vision::{VisionModel, generated_batch};

/// One training step: forward, loss, backward (and the dump of the last step), optimizer.
/// Returns the updated model and the loss; a dump that differs from the one it is compared
/// with is `Err` with the comparison's message.
fn step<B: TapBackend>(
    model: VisionModel<B>,
    optim: &mut impl Optimizer<VisionModel<B>, B>,
    (images, labels): (Tensor<B, 4>, Tensor<B, 1, Int>),
    dumping: bool,
) -> Result<(VisionModel<B>, Tensor<B, 1>), dump::DumpError> {
    let device = images.device();
    if dumping {
        let batch = Map::new()
            .with("images", images.clone())
            .with("labels", labels.clone());
        // JSON throughout, so that a later run can compare against this dump.
        dump::global::add_tensor_data("batch", batch, AddOptions::new(DumpType::Json))?;
    }
    let _step = stopwatch::meas("step");
    let _range = nvtx::range("step");
    let logits = stopwatch::measure("forward", || {
        nvtx::scope("forward", || model.forward(images, dumping))
    });
    let loss = CrossEntropyLossConfig::new()
        .init(&device)
        .forward(logits, labels);
    let grads = stopwatch::measure("backward", || nvtx::scope("backward", || loss.backward()));
    if dumping {
        let parameters = Map::new()
            .with("conv1.weight", model.conv1.weight.val())
            .with("conv2.weight", model.conv2.weight.val())
            .with("head.weight", model.head.weight.val());
        dump::global::add_grad_data("parameters", parameters, AddOptions::new(DumpType::Json))?;
        dump::global::set_gradients_from::<B>(&grads)?;
        dump::global::dump(true)?;
    }
    let model = stopwatch::measure("optimizer", || {
        nvtx::scope("optimizer", || {
            let grads = GradientsParams::from_grads(grads, &model);
            optim.step(1e-2, model, grads)
        })
    });
    Ok((model, loss))
}

fn train<B: TapBackend>(
    config: RuntimeConfig,
    args: Args,
    launch_thread: impl FnOnce(&B::Device) -> Option<LaunchThread>,
) -> std::io::Result<()> {
    let Args {
        steps,
        batch,
        out,
        leak,
        ..
    } = args;
    let mut leaked = Vec::new();
    nvtx::name_current_thread("training");
    dump::enable_grad_taps::<B>();
    let device = B::Device::default();
    B::seed(&device, 0);
    println!(
        "backend {}, {steps} steps, preset config:\n{}",
        B::name(&device),
        config.to_toml()
    );
    let comparing = config.dump.enabled && config.dump.compare;
    let dumps = config.dump.dir_in(&out);
    let mut session = Session::start::<B>(config, &device, out);
    if let Some(launch_thread) = launch_thread(&device) {
        session.set_launch_thread(launch_thread);
    }

    // The data-loading thread builds the batches' tensors; its ops show on its own track.
    let (batches, received) = mpsc::sync_channel(2);
    let loader_device = device.clone();
    let loader = std::thread::Builder::new()
        .name("data loader".into())
        .spawn(move || {
            nvtx::name_current_thread("data loader");
            for step in 0..steps {
                let tensors = nvtx::scope("load batch", || {
                    let (images, labels) = generated_batch(step, batch);
                    (
                        Tensor::<B, 4>::from_data(images, &loader_device),
                        Tensor::<B, 1, Int>::from_data(labels, &loader_device),
                    )
                });
                if batches.send(tensors).is_err() {
                    return;
                }
            }
        })?;

    let mut losses = Vec::new();
    let mut mismatch = None;
    let mut model = VisionModel::<B>::new(&device);
    let mut optim = AdamConfig::new().init();
    let progress = ProgressBar::new(steps as u64).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    for (step_index, batch) in received.into_iter().enumerate() {
        // With dumps on (the debug preset), the last step's batch, activations and gradients
        // are dumped.
        let dumping = dump::global::is_enabled() && step_index + 1 == steps;
        // On the launch thread when the session has one (CUDA): each op range then contains
        // its kernels.
        let (trained, loss) = match session.run_step(|| step(model, &mut optim, batch, dumping)) {
            Ok(stepped) => stepped,
            Err(dump::DumpError::Mismatch(message)) => {
                // The comparison is the last step's: report it at the end.
                mismatch = Some(message);
                break;
            }
            Err(error) => return Err(std::io::Error::other(error)),
        };
        model = trained;
        // With `[numerics]` on (the debug preset), the loss is fingerprinted and checked.
        session.record_loss(&loss);
        let loss: f32 = loss.into_scalar().to_string().parse().unwrap_or(f32::NAN);
        progress.set_message(format!("loss {loss:.4}"));
        losses.push(loss);
        progress.inc(1);
        if leak {
            // Kept to the end of the run: the memory grows by 1 MiB per step.
            leaked.push(Tensor::<B, 2>::zeros([256, 1024], &device));
        }
        // Past a memory limit the session says why on stderr (the bar may be hidden), and the
        // run ends with exit code 3.
        if let Err(exceeded) = session.finish_iter() {
            progress.abandon_with_message(exceeded.to_string());
            break;
        }
    }
    progress.finish();
    if let (Some(first), Some(last)) = (losses.first(), losses.last()) {
        println!("loss: {first:.4} at the first step, {last:.4} at the last");
    }
    let _ = loader.join();
    B::sync(&device).map_err(|error| std::io::Error::other(error.to_string()))?;
    let summary = session.finish()?;
    for file in &summary.files {
        if comparing && *file == dumps {
            match &mismatch {
                None => println!(
                    "compared the last step with the dump in {}: the same",
                    file.display()
                ),
                Some(message) => println!(
                    "compared the last step with the dump in {}: DIFFERENT\n{message}",
                    file.display()
                ),
            }
        } else {
            println!("wrote {}", file.display());
        }
    }
    drop(leaked);
    if mismatch.is_some() {
        std::process::exit(1);
    }
    if summary.stopped_by.is_some() {
        std::process::exit(3);
    }
    Ok(())
}

/// Counts the host memory each op allocates (`[memory] per_op`, on with `debug`): NdArray's
/// tensors are host memory.
#[global_allocator]
static ALLOCATOR: TrackingAllocator = TrackingAllocator::system();

/// Train a small vision model on generated data, instrumented per the configuration.
#[derive(clap::Parser)]
struct Args {
    /// Training steps (the first `stopwatch.warmup_iters` of them warm-up).
    #[arg(long, default_value_t = 30)]
    steps: usize,
    /// Images per batch.
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// Where `trace.json`, `ops.json` and `run.json` go.
    #[arg(long, default_value = "target/burn-profiled/train")]
    out: PathBuf,
    #[command(flatten)]
    config: ConfigArgs,
    /// With `cuda` or `wgpu`: profile the GPU backend without fusion (`Profiled<Cuda>`),
    /// to compare with the fused one profiled by default (`burn_profiled::fused::Cuda`).
    #[arg(long)]
    unfused: bool,
    /// Keep a 1 MiB tensor per step, to see the memory growth warning at the end.
    #[arg(long)]
    leak: bool,
}

fn main() {
    let args = <Args as clap::Parser>::parse();
    let config = args.config.runtime_config();
    let trained = match args.unfused {
        false => train::<backend::Training>(config, args, backend::launch_thread),
        true => train::<backend::Unfused>(config, args, backend::unfused_launch_thread),
    };
    if let Err(error) = trained {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}
