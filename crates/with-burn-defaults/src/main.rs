//! `two-backends FIRST [SECOND [--share | --session]]`: trains the same small conv net 6 steps
//! on FIRST, then on SECOND, in one process on Wgpu's default device, and prints each run's
//! losses as `losses <backend> <f32 bits, hex>...` (stdout).
//!
//! Backends: `burn` (burn's fused `Wgpu`), `fused` (`burn_profiled::fused::Wgpu`), `unfused`
//! (`Profiled<CubeBackend<Wgpu>>`), `outside` (`Profiled<burn's fused Wgpu>`). Between the runs,
//! `--share` calls `fused::share_device`, `--session` starts a `Session` on the second backend.

use burn::backend::Autodiff;
use burn::backend::wgpu::{CubeBackend, WgpuDevice, WgpuRuntime};
use burn_profiled::config::{Preset, RuntimeConfig};
use burn_profiled::{Profiled, Session, fused};
use with_burn_defaults::{losses_line, train};

type Burn = Autodiff<burn::backend::Wgpu>;
type Fused = Autodiff<fused::Wgpu>;
type Unfused = Autodiff<Profiled<CubeBackend<WgpuRuntime, f32, i32, u32>>>;
type Outside = Autodiff<Profiled<burn::backend::Wgpu>>;

fn train_on(backend: &str) -> Vec<f32> {
    match backend {
        "burn" => train::<Burn>(6),
        "fused" => train::<Fused>(6),
        "unfused" => train::<Unfused>(6),
        "outside" => train::<Outside>(6),
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
    println!("{}", losses_line(first, &train_on(first)));
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
    println!("{}", losses_line(second, &train_on(second)));
    drop(session);
}
