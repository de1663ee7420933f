//! Train a small vision model on generated data on Burn 0.22, profiled by a session on its
//! device: the model, the device and the loop are plain Burn 0.22.
//!
//! ```text
//! cargo run --release -p burn-profiled-022 --example train_022 -- [--steps N] [--batch N] [--out DIR] [--preset train|eval|profile|debug] [--config FILE]
//! BURN_PROFILED=profile cargo run --release -p burn-profiled-022 --example train_022
//! cargo run --release -p burn-profiled-022 --example train_022 -- --no-session --loss-bits   # Burn alone, losses as bits
//! cargo run --release -p burn-profiled-022 --example train_022 -- --preset debug --leak     # the growth warning, with the op
//! nsys profile --trace=nvtx,cuda cargo run --release -p burn-profiled-022 --features cuda --example train_022
//! ```
//!
//! The model and the data are those of Burn 0.21's `examples/train.rs`: two convolutions, max
//! pooling, a LayerNorm and multi-head self-attention, a linear head; cross-entropy and Adam;
//! a data-loading thread makes the batches. Each step is measured by the stopwatch (`step`,
//! `forward`, `backward`, `optimizer`) inside NVTX ranges of the same names. It runs on
//! `Device::default()` (CUDA with `--features cuda`, else wgpu: Mesa's lavapipe without a
//! GPU), fused as Burn 0.22 fuses by default: each block fusion runs is an op of the table.

use std::path::PathBuf;
use std::sync::mpsc;

use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Int, Tensor};
use burn_profiled_022::config::{Preset, RuntimeConfig};
use burn_profiled_022::{Session, nvtx, stopwatch};

#[path = "common/vision.rs"]
mod vision;
use vision::{VisionModel, generated_batch};

/// Train a small vision model on generated data, on Burn 0.22, instrumented per the
/// configuration.
#[derive(clap::Parser)]
struct Args {
    /// Training steps (the first `stopwatch.warmup_iters` of them warm-up).
    #[arg(long, default_value_t = 30)]
    steps: usize,
    /// Images per batch.
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// Where `trace.json`, `ops.json` and `run.json` go.
    #[arg(long, default_value = "target/burn-profiled/train-022")]
    out: PathBuf,
    /// A preset: train, eval, profile or debug (default: `$BURN_PROFILED`, else profile).
    #[arg(long, conflicts_with = "config")]
    preset: Option<Preset>,
    /// A configuration file (.toml or .json).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Train without a session (Burn alone), to compare its losses with a profiled run's.
    #[arg(long)]
    no_session: bool,
    /// Print every step's loss as its f32 bits (`losses <hex>...`), to compare runs exactly.
    #[arg(long)]
    loss_bits: bool,
    /// Keep a 1 MiB tensor per step to the end of the run: with per-step memory (eval, profile,
    /// debug) the growth warning fires, and with per-op memory (debug) it names the op.
    #[arg(long)]
    leak: bool,
}

fn runtime_config(args: &Args) -> RuntimeConfig {
    let config = match (args.preset, &args.config) {
        (Some(preset), _) => Ok(RuntimeConfig::preset(preset)),
        (None, Some(file)) => RuntimeConfig::from_file(file),
        (None, None) => RuntimeConfig::from_env_or(Preset::Profile),
    };
    config.unwrap_or_else(|error| {
        eprintln!("{error}");
        std::process::exit(2)
    })
}

fn train(args: Args) -> std::io::Result<()> {
    let config = runtime_config(&args);
    let Args {
        steps,
        batch,
        out,
        no_session,
        loss_bits,
        leak,
        ..
    } = args;
    let mut leaked = Vec::new();
    nvtx::name_current_thread("training");
    let device = Device::default().autodiff();
    device.seed(0);
    match no_session {
        true => println!("device {device:?}, {steps} steps, no session"),
        false => println!(
            "device {device:?}, {steps} steps, config:\n{}",
            config.to_toml()
        ),
    }
    let mut session = (!no_session).then(|| Session::start(config, &device, out));

    // The data-loading thread builds the batches' tensors.
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
                        Tensor::<4>::from_data(images, &loader_device),
                        Tensor::<1, Int>::from_data(labels, &loader_device),
                    )
                });
                if batches.send(tensors).is_err() {
                    return;
                }
            }
        })?;

    let mut model = VisionModel::new(&device);
    let mut optim = AdamConfig::new().init();
    let mut losses = Vec::new();
    for (images, labels) in received {
        let loss = {
            let _step = stopwatch::meas("step");
            let _range = nvtx::range("step");
            let logits = stopwatch::measure("forward", || {
                nvtx::scope("forward", || model.forward(images))
            });
            let loss = CrossEntropyLossConfig::new()
                .init(&device)
                .forward(logits, labels);
            let grads =
                stopwatch::measure("backward", || nvtx::scope("backward", || loss.backward()));
            model = stopwatch::measure("optimizer", || {
                nvtx::scope("optimizer", || {
                    let grads = GradientsParams::from_grads(grads, &model);
                    optim.step(1e-2, model.clone(), grads)
                })
            });
            loss
        };
        // With `[numerics]` on (the debug preset), the loss is fingerprinted and checked.
        if let Some(session) = &session {
            session.record_loss(&loss);
        }
        losses.push(loss.into_scalar::<f32>());
        if leak {
            // Kept to the end of the run: the memory grows by 1 MiB per step.
            leaked.push(nvtx::scope("leak", || {
                Tensor::<2>::zeros([256, 1024], &device)
            }));
        }
        // Past a memory limit the session says why on stderr, and the run ends with code 3.
        if let Some(session) = &mut session
            && session.finish_iter().is_err()
        {
            break;
        }
    }
    if let (Some(first), Some(last)) = (losses.first(), losses.last()) {
        println!("loss: {first:.4} at the first step, {last:.4} at the last");
    }
    if loss_bits {
        let bits: Vec<String> = losses
            .iter()
            .map(|l| format!("{:08x}", l.to_bits()))
            .collect();
        println!("losses {}", bits.join(" "));
    }
    let _ = loader.join();
    let Some(session) = session else {
        return Ok(());
    };
    let summary = session.finish()?;
    for file in &summary.files {
        println!("wrote {}", file.display());
    }
    drop(leaked);
    if summary.stopped_by.is_some() {
        std::process::exit(3);
    }
    Ok(())
}

fn main() {
    let args = <Args as clap::Parser>::parse();
    if let Err(error) = train(args) {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}
