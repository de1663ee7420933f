//! `two-backends FIRST [SECOND [--share | --session]]`: trains the same small conv net 6 steps
//! on FIRST, then on SECOND, in one process on Wgpu's default device, and prints each run's
//! losses as `losses <backend> <f32 bits, hex>...` (stdout).
//!
//! Backends: `burn` (burn's fused `Wgpu`), `fused` (`burn_profiled::fused::Wgpu`), `unfused`
//! (`Profiled<CubeBackend<Wgpu>>`), `outside` (`Profiled<burn's fused Wgpu>`). Between the runs,
//! `--share` calls `fused::share_device`, `--session` starts a `Session` on the second backend.

use burn::backend::wgpu::{WgpuDevice, WgpuRuntime};
use burn::backend::{Autodiff, wgpu::CubeBackend};
use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::prelude::*;
use burn::tensor::Distribution;
use burn::tensor::backend::AutodiffBackend;
use burn_profiled::config::{Preset, RuntimeConfig};
use burn_profiled::{Profiled, Session, fused};

#[derive(Module, Debug)]
struct Net<B: Backend> {
    conv: Conv2d<B>,
    lin: Linear<B>,
}

/// The program of issue 31, as a user wrote it.
fn run<B: AutodiffBackend>(steps: usize) -> Vec<f32> {
    let d = B::Device::default();
    B::seed(&d, 7);
    let mut net = Net {
        conv: Conv2dConfig::new([3, 8], [3, 3]).init::<B>(&d),
        lin: LinearConfig::new(8 * 14 * 14, 10).init::<B>(&d),
    };
    let mut opt = AdamConfig::new().init::<B, Net<B>>();
    let x = Tensor::<B, 4>::random([4, 3, 16, 16], Distribution::Default, &d);
    let mut losses = vec![];
    for _ in 0..steps {
        let h = burn::tensor::activation::gelu(net.conv.forward(x.clone()));
        let h = (h.clone() * h.exp().neg() + 0.5).flatten::<2>(1, 3);
        let y = net.lin.forward(h);
        let loss = (y.clone() * y).mean();
        losses.push(loss.clone().into_scalar().elem::<f32>());
        let g = GradientsParams::from_grads(loss.backward(), &net);
        net = opt.step(1e-3, net, g);
    }
    losses
}

type Burn = Autodiff<burn::backend::Wgpu>;
type Fused = Autodiff<fused::Wgpu>;
type Unfused = Autodiff<Profiled<CubeBackend<WgpuRuntime, f32, i32, u32>>>;
type Outside = Autodiff<Profiled<burn::backend::Wgpu>>;

fn train(backend: &str) -> Vec<f32> {
    match backend {
        "burn" => run::<Burn>(6),
        "fused" => run::<Fused>(6),
        "unfused" => run::<Unfused>(6),
        "outside" => run::<Outside>(6),
        other => panic!("unknown backend {other:?}: burn, fused, unfused or outside"),
    }
}

fn start_session(backend: &str) -> Session {
    let config = RuntimeConfig::preset(Preset::Train);
    let out = std::env::temp_dir().join(format!("with-burn-defaults-{}", std::process::id()));
    let device = WgpuDevice::default();
    match backend {
        "burn" => Session::start::<Burn>(config, &device, out),
        "fused" => Session::start::<Fused>(config, &device, out),
        "unfused" => Session::start::<Unfused>(config, &device, out),
        "outside" => Session::start::<Outside>(config, &device, out),
        other => panic!("unknown backend {other:?}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [first, then @ ..] = &args[..] else {
        panic!("usage: two-backends FIRST [SECOND [--share | --session]]");
    };
    let print = |backend: &str, losses: &[f32]| {
        let bits: Vec<String> = losses
            .iter()
            .map(|l| format!("{:08x}", l.to_bits()))
            .collect();
        println!("losses {backend} {}", bits.join(" "));
    };
    print(first, &train(first));
    let [second, rest @ ..] = then else {
        return;
    };
    let mut session = None;
    match rest.first().map(String::as_str) {
        None => {}
        Some("--share") => fused::share_device::<WgpuRuntime>(&WgpuDevice::default()),
        Some("--session") => session = Some(start_session(second)),
        Some(other) => panic!("unknown option {other:?}"),
    }
    print(second, &train(second));
    drop(session);
}
