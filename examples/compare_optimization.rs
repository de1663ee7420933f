//! Did an optimisation change the numbers? Dump a reference implementation's outputs and
//! gradients, then compare other implementations of the same layer against that dump.
//!
//! ```text
//! cargo run --release --example compare_optimization -- [--out DIR]
//! cargo run --release -p burn-profiled-core --bin burn-dump-diff -- DIR/reference DIR/wrong     # the same, offline
//! ```
//!
//! The layer is a layer norm: Burn's `LayerNorm` is the reference; a hand-written version
//! (mean, biased variance, epsilon) must match it within 1e-5, outputs and gradients alike; a
//! "faster" version that uses the unbiased variance is caught with a readable message.

use std::path::PathBuf;

use burn::backend::{Autodiff, NdArray};
use burn::module::Param;
use burn::nn::{LayerNorm, LayerNormConfig};
use burn::tensor::backend::Backend;
use burn::tensor::{Distribution, Tensor};
use burn_profiled::Profiled;
use burn_profiled::dump::{AddOptions, CompareSettings, DumpError, DumpType, TensorDumper};

type B = Autodiff<Profiled<NdArray>>;
const FEATURES: usize = 16;
const EPSILON: f64 = 1e-5;

/// The optimisation under test, correct.
fn layer_norm_by_hand<B: Backend>(
    x: Tensor<B, 2>,
    gamma: Tensor<B, 1>,
    beta: Tensor<B, 1>,
) -> Tensor<B, 2> {
    let centered = x.clone() - x.mean_dim(1);
    let variance = centered.clone().powi_scalar(2).mean_dim(1);
    centered / (variance + EPSILON).sqrt() * gamma.unsqueeze() + beta.unsqueeze()
}

/// The optimisation under test, with a bug: the unbiased variance (divides by n - 1).
fn layer_norm_unbiased<B: Backend>(
    x: Tensor<B, 2>,
    gamma: Tensor<B, 1>,
    beta: Tensor<B, 1>,
) -> Tensor<B, 2> {
    let centered = x.clone() - x.mean_dim(1);
    let variance = centered.clone().powi_scalar(2).sum_dim(1) / (FEATURES as f64 - 1.0);
    centered / (variance + EPSILON).sqrt() * gamma.unsqueeze() + beta.unsqueeze()
}

/// Runs `layer` on fixed inputs and records its output and the gradients of a fixed loss with
/// respect to the input and the scale.
fn record(
    dumper: &mut TensorDumper,
    layer: impl Fn(Tensor<B, 2>, Tensor<B, 1>, Tensor<B, 1>) -> Tensor<B, 2>,
) -> Result<(), DumpError> {
    let device = Default::default();
    B::seed(&device, 7);
    let gamma =
        Tensor::<B, 1>::random([FEATURES], Distribution::Normal(1.0, 0.1), &device).require_grad();
    let beta = Tensor::<B, 1>::random([FEATURES], Distribution::Normal(0.0, 0.1), &device);
    let x = Tensor::<B, 2>::random([8, FEATURES], Distribution::Normal(1.0, 3.0), &device)
        .require_grad();
    let weights = Tensor::<B, 2>::random([8, FEATURES], Distribution::Normal(0.0, 1.0), &device);

    let y = layer(x.clone(), gamma.clone(), beta);
    let json = AddOptions::new(DumpType::Json);
    dumper.add_tensor_data("layer_norm.output", y.clone(), json.clone())?;
    dumper.add_grad_data("layer_norm.input", x, json.clone())?;
    dumper.add_grad_data("layer_norm.gamma", gamma, json)?;
    dumper.set_gradients::<B>((y * weights).sum())?;
    Ok(())
}

/// Burn's own layer norm, the reference, with the same parameters as the hand-written ones.
fn library_layer_norm(x: Tensor<B, 2>, gamma: Tensor<B, 1>, beta: Tensor<B, 1>) -> Tensor<B, 2> {
    let mut norm: LayerNorm<B> = LayerNormConfig::new(FEATURES)
        .with_epsilon(EPSILON)
        .init(&x.device());
    norm.gamma = Param::from_tensor(gamma);
    norm.beta = Some(Param::from_tensor(beta));
    norm.forward(x)
}

/// Compare the optimisation against the reference dump.
#[derive(clap::Parser)]
struct Args {
    /// Where the dumps go.
    #[arg(long, default_value = "target/burn-profiled/compare")]
    out: PathBuf,
}

fn main() {
    let args = <Args as clap::Parser>::parse();
    let settings = CompareSettings {
        eps_numerical_data: 1e-5,
        num_errors_per_tensor_to_show: 2,
        ..CompareSettings::default()
    };
    let reference_dir = args.out.join("reference");
    let run = || -> Result<(), DumpError> {
        println!(
            "1. The reference: Burn's LayerNorm, dumped to {}",
            reference_dir.display()
        );
        let mut reference = TensorDumper::new(&reference_dir);
        record(&mut reference, library_layer_norm)?;
        reference.dump(true)?;

        println!("2. The hand-written layer norm, compared with the reference:");
        let mut candidate = TensorDumper::new(&reference_dir);
        record(&mut candidate, layer_norm_by_hand)?;
        candidate.compare_to_dumped_data(settings, true)?;
        let mut candidate = TensorDumper::new(args.out.join("candidate"));
        record(&mut candidate, layer_norm_by_hand)?;
        candidate.dump(true)?;

        println!(
            "3. A \"faster\" layer norm with the unbiased variance, compared with the reference:"
        );
        let mut wrong = TensorDumper::new(&reference_dir);
        record(&mut wrong, layer_norm_unbiased)?;
        match wrong.compare_to_dumped_data(settings, true) {
            Err(DumpError::Mismatch(message)) => println!("caught, as it should be:\n{message}"),
            Ok(_) => {
                return Err(DumpError::Mismatch(
                    "the wrong variant was not caught".into(),
                ));
            }
            Err(other) => return Err(other),
        }
        let mut wrong = TensorDumper::new(args.out.join("wrong"));
        record(&mut wrong, layer_norm_unbiased)?;
        wrong.dump(true)?;
        println!(
            "\nThe same offline:\n  cargo run --release -p burn-profiled-core --bin burn-dump-diff -- {0}/reference {0}/candidate   # consistent\n  cargo run --release -p burn-profiled-core --bin burn-dump-diff -- {0}/reference {0}/wrong       # mismatches",
            args.out.display()
        );
        Ok(())
    };
    if let Err(error) = run() {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}
