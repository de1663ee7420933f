//! A data-parallel training step on two devices, side by side with and without `Profiled`
//! (`cargo bench --features wgpu --bench data_parallel`): burn's `Wgpu` backend on two devices,
//! `DefaultDevice` and `Cpu` (on a machine without GPU both are Mesa's lavapipe), one replica
//! thread per device, gradients summed on the first device, SGD there.
//!
//! Variants: `Autodiff<Wgpu>`; `Autodiff<Profiled<Wgpu>>` with everything off; with op ranges
//! on and each device's launch thread attached (every op's range queued on its device thread).
//! Each step ends with both devices synced.
//!
//! The NVTX recorder is this binary's NVTX tool, standing for Nsight Systems (without a tool,
//! op ranges do nothing); its own cost per range is in the op-range variants' figures.

nvtx_recorder::install_static!();

use burn::backend::wgpu::WgpuDevice;
use burn::backend::{Autodiff, Wgpu};
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::optim::{GradientsAccumulator, GradientsParams, Optimizer, SgdConfig};
use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn_profiled::{DeviceSync, LaunchThread, Profiled, probe};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

#[path = "../examples/common/transfer.rs"]
mod transfer;
use transfer::{fork_via_host as fork, grads_via_host as grads_to};

#[derive(Module, Debug)]
struct Mlp<B: Backend> {
    layers: Vec<Linear<B>>,
}

struct Step<B: AutodiffBackend> {
    model: Option<Mlp<B>>,
    devices: Vec<B::Device>,
}

impl<B: AutodiffBackend> Step<B> {
    fn new(devices: &[B::Device]) -> Self {
        B::seed(&devices[0], 1);
        let layers = (0..3)
            .map(|_| LinearConfig::new(64, 64).init(&devices[0]))
            .collect();
        Step {
            model: Some(Mlp { layers }),
            devices: devices.to_vec(),
        }
    }

    fn run(&mut self) {
        let Some(model) = self.model.take() else {
            return;
        };
        let main = &self.devices[0];
        let grads: Vec<GradientsParams> = std::thread::scope(|scope| {
            let replicas: Vec<_> = self
                .devices
                .iter()
                .map(|device| {
                    let replica = fork(model.clone(), device);
                    scope.spawn(move || {
                        let mut x = Tensor::<B, 2>::ones([32, 64], device);
                        for layer in &replica.layers {
                            x = layer.forward(x).tanh();
                        }
                        let loss = x.powi_scalar(2).mean();
                        GradientsParams::from_grads(loss.backward(), &replica)
                    })
                })
                .collect();
            replicas.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let mut accumulator = GradientsAccumulator::new();
        for replica_grads in grads {
            accumulator.accumulate(&model, grads_to(replica_grads, &model, main));
        }
        let mut optim = SgdConfig::new().init();
        self.model = Some(optim.step(0.01, model, accumulator.grads()));
        DeviceSync::all::<B>(&self.devices).sync();
    }
}

fn bench_step<B: AutodiffBackend>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    devices: &[B::Device],
    id: &str,
) {
    let mut step = Step::<B>::new(devices);
    group.bench_function(BenchmarkId::from_parameter(id), |bench| {
        bench.iter(|| step.run())
    });
}

fn data_parallel(c: &mut Criterion) {
    let devices = [WgpuDevice::DefaultDevice, WgpuDevice::Cpu];
    let mut group = c.benchmark_group("data_parallel_step");
    group.sample_size(20);
    bench_step::<Autodiff<Wgpu>>(&mut group, &devices, "Autodiff<Wgpu>");
    bench_step::<Autodiff<Profiled<Wgpu>>>(&mut group, &devices, "Profiled, all off");
    let launch: Vec<LaunchThread> = devices.iter().map(LaunchThread::cubecl::<Wgpu>).collect();
    let attached: Vec<_> = launch.iter().filter_map(LaunchThread::attach).collect();
    probe::set_op_ranges(true);
    bench_step::<Autodiff<Profiled<Wgpu>>>(
        &mut group,
        &devices,
        "op ranges, queued on each device thread",
    );
    probe::set_op_ranges(false);
    drop(attached);
    group.finish();
}

criterion_group!(benches, data_parallel);
criterion_main!(benches);
