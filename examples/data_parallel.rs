//! Train the vision model of `examples/train.rs` data-parallel on several devices, one thread
//! per device, and see where each device spends its step: compute, or waiting for the others.
//!
//! ```text
//! cargo run --release --features wgpu --example data_parallel -- --devices 2
//!     # Vulkan (on a machine without GPU: Mesa's lavapipe), devices DefaultDevice and Cpu;
//!     # gradients averaged on the first device
//! cargo run --release --features cuda --example data_parallel -- --devices 2
//!     # CUDA GPUs 0 and 1, gradients averaged on the first device
//! cargo run --release --features cuda,distributed --example data_parallel -- --devices 2 --all-reduce
//!     # CUDA GPUs, gradients all-reduced (NCCL) during the backward pass, as burn's DDP does
//! nsys profile --trace=nvtx,cuda cargo run --release --features cuda,distributed \
//!     --example data_parallel -- --devices 2 --all-reduce
//! ```
//!
//! Each replica thread takes its share of the batch on its device; the op table printed at the
//! end is by phase and by device, so `float_to_device` (gradients moving to the first device)
//! or `submit_sync_collective` (a device waiting for the all-reduce of every device) show per
//! device next to the compute ops, and the stopwatch has the `step` and, within it, each
//! replica's `compute` next to `combine` and `optimizer`. Without `cuda` or `wgpu` the replicas all run on NdArray's one CPU device.

use std::path::PathBuf;
use std::sync::mpsc;

use burn::module::{AutodiffModule, Module};
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsAccumulator, GradientsParams, Optimizer};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Int, Tensor, TensorData};
use burn_profiled::config::RuntimeConfig;
use burn_profiled::{LaunchThread, Profiled, Session, nvtx, stopwatch};

#[path = "common/cli.rs"]
mod cli;
#[path = "common/transfer.rs"]
mod transfer;
#[path = "common/vision.rs"]
mod vision;
use cli::ConfigArgs;
use transfer::{fork_via_host, grads_via_host};
use vision::{VisionModel, generated_batch};

/// How tensors move between devices. burn 0.21's CubeCL backends move them with the runtime's
/// device-to-device copy, which CubeCL implements on CUDA only (NCCL): on wgpu, tensors go
/// through host memory instead.
#[derive(Clone, Copy)]
// A build uses the one its backend needs.
#[allow(dead_code)]
enum Transfer {
    Native,
    ViaHost,
}

/// The model on `device`, its parameters still trainable (`Module::fork`).
fn fork<B: AutodiffBackend>(
    model: VisionModel<B>,
    device: &B::Device,
    transfer: Transfer,
) -> VisionModel<B> {
    match transfer {
        Transfer::Native => model.fork(device),
        Transfer::ViaHost => fork_via_host(model, device),
    }
}

/// `grads` (of `model`'s parameters) on `device`.
fn grads_to<B: AutodiffBackend, M: AutodiffModule<B>>(
    grads: GradientsParams,
    model: &M,
    device: &B::Device,
    transfer: Transfer,
) -> GradientsParams {
    match transfer {
        Transfer::Native => grads.to_device(device, model),
        Transfer::ViaHost => grads_via_host(grads, model, device),
    }
}

/// One replica's share of a step: the model to train and its part of the batch.
struct Share<B: AutodiffBackend> {
    model: VisionModel<B>,
    images: TensorData,
    labels: TensorData,
}

/// What a replica sends back: its gradients (on its device) and its loss.
struct Computed {
    grads: GradientsParams,
    loss: f32,
}

/// Forward and backward of one replica on its device.
fn compute<B: AutodiffBackend>(share: Share<B>, device: &B::Device) -> Computed {
    let images = Tensor::<B, 4>::from_data(share.images, device);
    let labels = Tensor::<B, 1, Int>::from_data(share.labels, device);
    let logits = nvtx::scope("forward", || share.model.forward(images, false));
    let loss = CrossEntropyLossConfig::new()
        .init(device)
        .forward(logits, labels);
    let grads = nvtx::scope("backward", || loss.backward());
    Computed {
        grads: GradientsParams::from_grads(grads, &share.model),
        loss: loss.into_scalar().to_string().parse().unwrap_or(f32::NAN),
    }
}

/// The replica threads: one per device, each named in NVTX and on the timeline.
struct Replicas<B: AutodiffBackend> {
    shares: Vec<mpsc::Sender<Share<B>>>,
    computed: Vec<mpsc::Receiver<Computed>>,
}

impl<B: AutodiffBackend> Replicas<B> {
    fn spawn(devices: &[B::Device]) -> std::io::Result<Self> {
        let (mut shares, mut computed) = (Vec::new(), Vec::new());
        for (index, device) in devices.iter().enumerate() {
            let (share_sender, share_receiver) = mpsc::channel::<Share<B>>();
            let (computed_sender, computed_receiver) = mpsc::channel();
            let device = device.clone();
            let name = format!("replica {index}");
            std::thread::Builder::new()
                .name(name.clone())
                .spawn(move || {
                    nvtx::name_current_thread(&name);
                    let measurement = format!("{name} compute");
                    for share in share_receiver {
                        let result = stopwatch::measure(&measurement, || compute(share, &device));
                        if computed_sender.send(result).is_err() {
                            return;
                        }
                    }
                })?;
            shares.push(share_sender);
            computed.push(computed_receiver);
        }
        Ok(Replicas { shares, computed })
    }
}

/// Splits a batch of `batch` images into one share per replica.
fn split(step: usize, batch: usize, replicas: usize) -> Vec<(TensorData, TensorData)> {
    let per_replica = batch / replicas;
    (0..replicas)
        .map(|replica| generated_batch(step * replicas + replica, per_replica))
        .collect()
}

/// Data-parallel training, gradients averaged on the first device: each step, every replica
/// gets the model and its share, the gradients come back, move to the first device and are
/// averaged (summed, with the learning rate divided by the replica count), and the optimizer
/// steps there.
fn train_main_device<B: AutodiffBackend>(
    devices: &[B::Device],
    session: &mut Session,
    args: &Args,
    transfer: Transfer,
) -> std::io::Result<Vec<f32>> {
    let replicas = Replicas::<B>::spawn(devices)?;
    let main = &devices[0];
    let mut model = VisionModel::<B>::new(main);
    let mut optim = AdamConfig::new().init();
    let mut losses = Vec::new();
    for step in 0..args.steps {
        let measure = stopwatch::meas("step");
        let range = nvtx::range("step");
        for (sender, (device, (images, labels))) in replicas
            .shares
            .iter()
            .zip(devices.iter().zip(split(step, args.batch, devices.len())))
        {
            let model = fork(model.clone(), device, transfer);
            let share = Share {
                model,
                images,
                labels,
            };
            sender.send(share).map_err(std::io::Error::other)?;
        }
        let mut accumulator = GradientsAccumulator::new();
        let mut loss = 0.0;
        for received in &replicas.computed {
            let computed = received.recv().map_err(std::io::Error::other)?;
            stopwatch::measure("combine", || {
                nvtx::scope("combine", || {
                    let grads = grads_to(computed.grads, &model, main, transfer);
                    accumulator.accumulate(&model, grads)
                })
            });
            loss += computed.loss / devices.len() as f32;
        }
        model = stopwatch::measure("optimizer", || {
            nvtx::scope("optimizer", || {
                optim.step(1e-2 / devices.len() as f64, model, accumulator.grads())
            })
        });
        losses.push(loss);
        drop((range, measure));
        if let Err(exceeded) = session.finish_iter() {
            println!("{exceeded}");
            break;
        }
    }
    Ok(losses)
}

/// Data-parallel training as burn's DDP does it: each replica keeps its own model, marked
/// distributed, and the backward pass all-reduces the gradients (mean) across devices through
/// burn's `DistributedBackend` (NCCL on CUDA), then every replica steps its optimizer.
#[cfg(feature = "distributed")]
fn train_all_reduce<B>(
    devices: &[B::Device],
    session: &mut Session,
    args: &Args,
) -> std::io::Result<Vec<f32>>
where
    B: AutodiffBackend + burn::tensor::backend::distributed::DistributedBackend,
{
    use burn::module::{ModuleMapper, Param};
    use burn::tensor::backend::distributed::{
        DistributedConfig, DistributedParamId, ReduceOperation,
    };

    /// Marks every parameter as distributed: its gradient is all-reduced during backward.
    struct Distributed;
    impl<B: AutodiffBackend> ModuleMapper<B> for Distributed {
        fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
            let (id, tensor, mapper) = param.consume();
            let tensor = tensor.set_distributed(DistributedParamId::from(id.val()));
            Param::from_mapped_value(id, tensor, mapper)
        }
    }

    B::start_communication_server(
        devices,
        DistributedConfig {
            all_reduce_op: ReduceOperation::Mean,
        },
    );
    let initial = VisionModel::<B>::new(&devices[0]);
    let (steps, batch, replicas) = (args.steps, args.batch, devices.len());
    let (done, finished) = mpsc::channel::<(usize, f32)>();
    std::thread::scope(|scope| -> std::io::Result<Vec<f32>> {
        for (index, device) in devices.iter().enumerate() {
            let mut model = fork(initial.clone(), device, Transfer::Native).map(&mut Distributed);
            let done = done.clone();
            let name = format!("replica {index}");
            std::thread::Builder::new()
                .name(name.clone())
                .spawn_scoped(scope, move || {
                    nvtx::name_current_thread(&name);
                    let measurement = format!("{name} compute");
                    let mut optim = AdamConfig::new().init();
                    for step in 0..steps {
                        let (images, labels) =
                            generated_batch(step * replicas + index, batch / replicas);
                        let computed = stopwatch::measure(&measurement, || {
                            compute(
                                Share {
                                    model: model.clone(),
                                    images,
                                    labels,
                                },
                                device,
                            )
                        });
                        model = optim.step(1e-2, model, computed.grads);
                        if done.send((step, computed.loss)).is_err() {
                            return;
                        }
                    }
                })?;
        }
        drop(done);
        let mut losses = vec![0.0; steps];
        let mut reported = vec![0; steps];
        for (step, loss) in finished {
            losses[step] += loss / replicas as f32;
            reported[step] += 1;
            if reported[step] == replicas && session.finish_iter().is_err() {
                break;
            }
        }
        Ok(losses)
    })
    .inspect(|_| B::close_communication_server(&devices[0]))
}

fn run<B: MaybeDistributed>(
    config: RuntimeConfig,
    args: Args,
    devices: Vec<B::Device>,
    launch_thread: impl Fn(&B::Device) -> Option<LaunchThread>,
    transfer: Transfer,
) -> std::io::Result<()> {
    nvtx::name_current_thread("main");
    B::seed(&devices[0], 0);
    println!(
        "backend {}, {} replicas on {:?}, {} steps of {} images",
        B::name(&devices[0]),
        devices.len(),
        devices,
        args.steps,
        args.batch
    );
    let mut session = Session::start_on_devices::<B>(config, &devices, &args.out);
    for device in &devices {
        if let Some(launch_thread) = launch_thread(device) {
            session.set_launch_thread(launch_thread);
        }
    }
    let losses = if args.all_reduce {
        B::train_all_reduce(&devices, &mut session, &args)?
    } else {
        train_main_device::<B>(&devices, &mut session, &args, transfer)?
    };
    if let (Some(first), Some(last)) = (losses.first(), losses.last()) {
        println!("loss: {first:.4} at the first step, {last:.4} at the last");
    }
    for device in &devices {
        B::sync(device).map_err(|error| std::io::Error::other(error.to_string()))?;
    }
    let summary = session.finish()?;
    for file in &summary.files {
        println!("wrote {}", file.display());
    }
    Ok(())
}

/// The all-reduce mode, where the backend has it (`--features distributed`).
trait MaybeDistributed: AutodiffBackend {
    fn train_all_reduce(
        devices: &[Self::Device],
        session: &mut Session,
        args: &Args,
    ) -> std::io::Result<Vec<f32>>;
}

#[cfg(feature = "distributed")]
impl<B: AutodiffBackend + burn::tensor::backend::distributed::DistributedBackend> MaybeDistributed
    for B
{
    fn train_all_reduce(
        devices: &[B::Device],
        session: &mut Session,
        args: &Args,
    ) -> std::io::Result<Vec<f32>> {
        train_all_reduce::<B>(devices, session, args)
    }
}

#[cfg(not(feature = "distributed"))]
impl<B: AutodiffBackend> MaybeDistributed for B {
    fn train_all_reduce(
        _devices: &[B::Device],
        _session: &mut Session,
        _args: &Args,
    ) -> std::io::Result<Vec<f32>> {
        Err(std::io::Error::other(
            "--all-reduce needs the `distributed` cargo feature (and CUDA for the collective)",
        ))
    }
}

/// Train the vision model data-parallel, instrumented per device.
#[derive(clap::Parser)]
struct Args {
    /// Devices, one replica each.
    #[arg(long, default_value_t = 2)]
    devices: usize,
    /// Training steps (the first `stopwatch.warmup_iters` of them warm-up).
    #[arg(long, default_value_t = 20)]
    steps: usize,
    /// Images per step, over all replicas.
    #[arg(long, default_value_t = 64)]
    batch: usize,
    /// All-reduce the gradients during backward (burn's DDP; needs `--features distributed`
    /// and CUDA) instead of averaging them on the first device.
    #[arg(long)]
    all_reduce: bool,
    /// Where `trace.json`, `ops.json`, `ops_by_device.json` and `run.json` go.
    #[arg(long, default_value = "target/burn-profiled/data_parallel")]
    out: PathBuf,
    #[command(flatten)]
    config: ConfigArgs,
}

fn main() {
    let args = <Args as clap::Parser>::parse();
    let mut config = args.config.runtime_config();
    // Dumps are a single-device tool: the replicas' gradients are not taped here.
    config.dump.enabled = false;
    if args.all_reduce {
        // Each replica thread runs its own steps: no thread measures a whole `step`.
        config.stopwatch.cpu_usage_name = None;
    }
    if args.devices == 0 || args.batch < args.devices {
        eprintln!("--devices must be at least 1, and --batch at least --devices");
        std::process::exit(2);
    }
    let result = {
        #[cfg(feature = "cuda")]
        {
            use burn::backend::Cuda;
            use burn::backend::cuda::CudaDevice;
            let devices = (0..args.devices).map(CudaDevice::new).collect();
            let launch = |device: &CudaDevice| Some(LaunchThread::cubecl::<Cuda>(device));
            run::<burn::backend::Autodiff<Profiled<Cuda>>>(
                config,
                args,
                devices,
                launch,
                Transfer::Native,
            )
        }
        #[cfg(all(feature = "wgpu", not(feature = "cuda")))]
        {
            use burn::backend::Wgpu;
            use burn::backend::wgpu::WgpuDevice;
            if args.devices > 2 {
                eprintln!("on wgpu this example uses at most 2 devices: DefaultDevice and Cpu");
                std::process::exit(2);
            }
            let devices = [WgpuDevice::DefaultDevice, WgpuDevice::Cpu][..args.devices].to_vec();
            let launch = |device: &WgpuDevice| Some(LaunchThread::cubecl::<Wgpu>(device));
            run::<burn::backend::Autodiff<Profiled<Wgpu>>>(
                config,
                args,
                devices,
                launch,
                Transfer::ViaHost,
            )
        }
        #[cfg(not(any(feature = "cuda", feature = "wgpu")))]
        {
            use burn::backend::NdArray;
            let devices = vec![Default::default(); args.devices];
            let launch = |_: &burn::backend::ndarray::NdArrayDevice| None;
            run::<burn::backend::Autodiff<Profiled<NdArray>>>(
                config,
                args,
                devices,
                launch,
                Transfer::Native,
            )
        }
    };
    if let Err(error) = result {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}
