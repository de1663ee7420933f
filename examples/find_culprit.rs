//! Did an optimisation change the numbers, and where? Trains one small model twice, the
//! reference and an "optimised" version, with every op's outputs fingerprinted
//! (`[numerics] fingerprints`), then compares the two runs op by op and names the culprit: the
//! first op whose inputs agreed and whose outputs did not.
//!
//! ```text
//! cargo run --example find_culprit -- [--out DIR] [--steps N]
//! cargo run -p burn-profiled-core --bin burn-profiled -- numerics DIR/reference DIR/optimised   # the same, offline
//! ```
//!
//! The optimised version's layer norm has a typo: its epsilon is 1e-3, not 1e-5. Its loss
//! moves by a few parts in a thousand; the comparison names the `float_add_scalar` of
//! `layer_norm` as the culprit, with its call site, and counts the ops that only carried the
//! difference on.

use std::path::{Path, PathBuf};

use burn::backend::{Autodiff, NdArray};
use burn::module::{Module, Param};
use burn::nn::{Linear, LinearConfig};
use burn::optim::{GradientsParams, Optimizer, SgdConfig};
use burn::tensor::backend::Backend;
use burn::tensor::{Distribution, Tensor};
use burn_profiled::config::RuntimeConfig;
use burn_profiled::numerics::{self, Tolerance};
use burn_profiled::{Profiled, Session, nvtx};

type B = Autodiff<Profiled<NdArray>>;

/// Two linear layers around a layer norm written by hand.
#[derive(Module, Debug)]
struct Mlp<B: Backend> {
    first: Linear<B>,
    gamma: Param<Tensor<B, 1>>,
    second: Linear<B>,
}

impl<B: Backend> Mlp<B> {
    fn new(device: &B::Device) -> Self {
        Mlp {
            first: LinearConfig::new(16, 32).init(device),
            gamma: Param::from_tensor(Tensor::ones([32], device)),
            second: LinearConfig::new(32, 4).init(device),
        }
    }

    fn forward(&self, x: Tensor<B, 2>, epsilon: f64) -> Tensor<B, 2> {
        let h = self.first.forward(x).tanh();
        let h = layer_norm(h, self.gamma.val(), epsilon);
        self.second.forward(h)
    }
}

/// `(x - mean) / sqrt(var + epsilon) * gamma`, over the last dimension.
fn layer_norm<B: Backend>(x: Tensor<B, 2>, gamma: Tensor<B, 1>, epsilon: f64) -> Tensor<B, 2> {
    let centered = x.clone() - x.mean_dim(1);
    let variance = centered.clone().powi_scalar(2).mean_dim(1);
    centered / (variance + epsilon).sqrt() * gamma.unsqueeze()
}

/// Trains the model for `steps` steps with `epsilon` in its layer norm, fingerprinting every
/// op into `out/numerics.jsonl`; returns the last loss.
fn train(out: &Path, epsilon: f64, steps: usize) -> std::io::Result<f32> {
    let mut config = RuntimeConfig::default();
    config.numerics.fingerprints = true;
    // Call sites name where in this file each op was called.
    config.stats.call_sites = true;
    config.stopwatch.warmup_iters = 0;
    let device = Default::default();
    let mut session = Session::start::<B>(config, &device, out);
    B::seed(&device, 7);
    let mut model = Mlp::<B>::new(&device);
    let mut optimizer = SgdConfig::new().init();
    let x = Tensor::<B, 2>::random([8, 16], Distribution::Normal(0.0, 1.0), &device);
    let target = Tensor::<B, 2>::random([8, 4], Distribution::Normal(0.0, 1.0), &device);
    let mut last = f32::NAN;
    for _ in 0..steps {
        let loss = nvtx::scope("forward", || {
            let error = model.forward(x.clone(), epsilon) - target.clone();
            error.powi_scalar(2).mean()
        });
        last = loss.clone().into_scalar();
        let grads = nvtx::scope("backward", || {
            GradientsParams::from_grads(loss.backward(), &model)
        });
        model = nvtx::scope("optimizer", || optimizer.step(0.1, model, grads));
        if let Err(stopped) = session.finish_iter() {
            return Err(std::io::Error::other(stopped.to_string()));
        }
    }
    session.finish()?;
    Ok(last)
}

fn main() -> std::io::Result<()> {
    let args = <Args as clap::Parser>::parse();
    // The phases (`forward`, `backward`, `optimizer`) are user ranges: on once for both runs.
    nvtx::enable(nvtx::RangeConfig::new());
    let (reference, optimised) = (args.out.join("reference"), args.out.join("optimised"));
    let before = train(&reference, 1e-5, args.steps)?;
    let after = train(&optimised, 1e-3, args.steps)?;
    println!("last loss: {before} (reference), {after} (optimised)\n");
    let read = |dir: &Path| numerics::file::read(dir).map_err(std::io::Error::other);
    let (reference_ops, optimised_ops) = (read(&reference)?, read(&optimised)?);
    let comparison = numerics::compare(&reference_ops, &optimised_ops, Tolerance::default());
    print!(
        "{}",
        numerics::render(&comparison, &reference_ops, &optimised_ops, 5)
    );
    println!(
        "\nthe same, offline: cargo run -p burn-profiled-core --bin burn-profiled -- numerics {} {}",
        reference.display(),
        optimised.display()
    );
    Ok(())
}

/// Train a model twice, an optimisation with a bug in it the second time, and name the op
/// where the numbers changed.
#[derive(clap::Parser)]
struct Args {
    /// Training steps of each run.
    #[arg(long, default_value_t = 3)]
    steps: usize,
    /// Where the two runs go (`reference/` and `optimised/`).
    #[arg(long, default_value = "target/burn-profiled/find_culprit")]
    out: PathBuf,
}
