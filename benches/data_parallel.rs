//! A data-parallel training step on two devices, side by side with and without `Profiled`
//! (`cargo bench --features wgpu --bench data_parallel`): burn's `Wgpu` backend on two devices,
//! `DefaultDevice` and `Cpu` (on a machine without GPU both are Mesa's lavapipe), one replica
//! thread per device, gradients summed on the first device, SGD there.
//!
//! Variants: `Autodiff<Wgpu>`; `Autodiff<Profiled<Wgpu>>` with everything off; with op ranges
//! on and each device's launch thread attached (every op's range queued on its device thread).
//! Each step ends with both devices synced.

use burn::backend::wgpu::WgpuDevice;
use burn::backend::{Autodiff, Wgpu};
use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::nn::{Linear, LinearConfig};
use burn::optim::{GradientsAccumulator, GradientsParams, Optimizer, SgdConfig};
use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn_profiled::{DeviceSync, LaunchThread, Profiled, probe};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

#[derive(Module, Debug)]
struct Mlp<B: Backend> {
    layers: Vec<Linear<B>>,
}

/// The model on `device`, through host memory (burn 0.21 moves tensors between CubeCL devices
/// with a device-to-device copy CubeCL implements on CUDA only).
fn fork<B: AutodiffBackend>(model: Mlp<B>, device: &B::Device) -> Mlp<B> {
    struct ViaHost<'a, B: AutodiffBackend>(&'a B::Device);
    impl<B: AutodiffBackend> ModuleMapper<B> for ViaHost<'_, B> {
        fn map_float<const D: usize>(&mut self, param: Param<Tensor<B, D>>) -> Param<Tensor<B, D>> {
            let (id, tensor, mapper) = param.consume();
            let moved = Tensor::from_data(tensor.to_data(), self.0).require_grad();
            Param::from_mapped_value(id, moved, mapper)
        }
    }
    model.map(&mut ViaHost(device))
}

fn grads_to<B: AutodiffBackend>(
    mut grads: GradientsParams,
    model: &Mlp<B>,
    device: &B::Device,
) -> GradientsParams {
    struct ViaHost<'a, B: AutodiffBackend>(&'a B::Device, &'a mut GradientsParams);
    impl<B: AutodiffBackend> ModuleVisitor<B> for ViaHost<'_, B> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            if let Some(grad) = self.1.remove::<B::InnerBackend, D>(param.id) {
                let moved = Tensor::from_data(grad.into_data(), self.0);
                self.1.register::<B::InnerBackend, D>(param.id, moved);
            }
        }
    }
    model.visit(&mut ViaHost::<B>(device, &mut grads));
    grads
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
