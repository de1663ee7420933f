//! `session-order BACKEND AFTER [--burn-first] [--no-session]`: the program of issue 37, as a
//! user writes it: the model and the data made on BACKEND's default Wgpu device, AFTER training
//! steps, then a `Session` started (`profile` preset), then the rest of 6 steps; prints the
//! losses as `losses <backend> <f32 bits, hex>...` (stdout).
//!
//! Backends: `fused` (`burn_profiled::fused::Wgpu`), `unfused` (`Profiled<CubeBackend<Wgpu>>`),
//! `outside` (`Profiled<burn's fused Wgpu>`). `--burn-first` trains burn's own fused `Wgpu` 3
//! steps first, then calls `fused::share_device` as the guide says a program that runs both
//! does; `--no-session` starts no session (the losses to compare with).

use burn::backend::Autodiff;
use burn::backend::wgpu::{CubeBackend, WgpuDevice, WgpuRuntime};
use burn::tensor::backend::AutodiffBackend;
use burn_profiled::config::{Preset, RuntimeConfig};
use burn_profiled::{Profiled, Session, fused};
use with_burn_defaults::{Training, losses_line, train};

const STEPS: usize = 6;

fn run<B: AutodiffBackend>(after: usize, session: bool) -> Vec<f32> {
    let mut training = Training::<B>::new();
    let out = std::env::temp_dir().join(format!("session-order-{}", std::process::id()));
    let mut started = None;
    let mut losses = Vec::new();
    for step in 0..STEPS {
        if session && step == after {
            let device = B::Device::default();
            let config = RuntimeConfig::preset(Preset::Profile);
            started = Some(Session::start::<B>(config, &device, &out));
        }
        losses.push(training.step());
        if let Some(session) = &mut started {
            session.finish_iter().expect("no memory limit is set");
        }
    }
    if let Some(session) = started {
        session.finish().expect("the run directory is written");
    }
    let _ = std::fs::remove_dir_all(&out);
    losses
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: session-order BACKEND AFTER [--burn-first] [--no-session]";
    let [backend, after, options @ ..] = &args[..] else {
        panic!("{usage}");
    };
    let after: usize = after.parse().expect(usage);
    let session = !options.iter().any(|o| o == "--no-session");
    if options.iter().any(|o| o == "--burn-first") {
        println!(
            "{}",
            losses_line("burn", &train::<Autodiff<burn::backend::Wgpu>>(3))
        );
        fused::share_device::<WgpuRuntime>(&WgpuDevice::default());
    }
    let losses = match backend.as_str() {
        "fused" => run::<Autodiff<fused::Wgpu>>(after, session),
        "unfused" => {
            run::<Autodiff<Profiled<CubeBackend<WgpuRuntime, f32, i32, u32>>>>(after, session)
        }
        "outside" => run::<Autodiff<Profiled<burn::backend::Wgpu>>>(after, session),
        other => panic!("unknown backend {other:?}: fused, unfused or outside"),
    };
    println!("{}", losses_line(backend, &losses));
}
