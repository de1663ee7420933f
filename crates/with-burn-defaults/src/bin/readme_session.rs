//! The README's session block, as written, in the order a user writes the program: the device,
//! the model, the optimizer and the data first (on `burn_profiled::fused::Wgpu`, with burn's
//! default features), then the block between the markers, which `tests/readme.rs` holds equal
//! to the README's. Writes `target/run` under the current directory.

use burn::backend::Autodiff;
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::optim::AdamConfig;
use burn::prelude::*;
use burn::tensor::Distribution;
use burn_profiled::fused;

type B = Autodiff<fused::Wgpu>;

#[derive(Module, Debug)]
struct MyModel<B: Backend> {
    linear: Linear<B>,
}

impl<B: Backend> MyModel<B> {
    fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        self.linear.forward(x)
    }
}

#[rustfmt::skip] // the README's block, as the README aligns it
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device = Default::default();
    let mut model = MyModel::<B> {
        linear: LinearConfig::new(16, 4).init(&device),
    };
    let mut optim = AdamConfig::new().init();
    let x = Tensor::<B, 2>::random([8, 16], Distribution::Default, &device);
    let steps = 3;

    // README: begin
    use burn::optim::{GradientsParams, Optimizer};
    use burn_profiled::config::{Preset, RuntimeConfig};
    use burn_profiled::{Session, nvtx, stopwatch};

    let config = RuntimeConfig::from_env_or(Preset::Train)?;     // BURN_PROFILED=profile, or a file
    let mut session = Session::start::<B>(config, &device, "target/run");
    for _ in 0..steps {
        {
            let _step = stopwatch::meas("step");
            let logits = stopwatch::measure("forward", || nvtx::scope("forward", || model.forward(x.clone())));
            let loss = logits.powi_scalar(2).mean();              // your loss
            let grads = stopwatch::measure("backward", || nvtx::scope("backward", || loss.backward()));
            model = stopwatch::measure("optimizer", || {
                nvtx::scope("optimizer", || {
                    let grads = GradientsParams::from_grads(grads, &model);
                    optim.step(1e-3, model.clone(), grads)
                })
            });
        }
        if session.finish_iter().is_err() {                      // a memory limit stops the run
            break;                                               // (the session says why on stderr)
        }
    }
    session.finish()?;                                           // report, op table, report.html, ops/trace/run.json
    // README: end
    Ok(())
}
