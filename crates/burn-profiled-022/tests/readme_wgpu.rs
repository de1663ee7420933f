//! The README's Burn 0.22 session block compiles and runs as written, on `Device::default()`
//! (wgpu on lavapipe here), around a small model's training loop: the block is held verbatim
//! between the markers below, and the first test checks it still is the README's.

use std::path::Path;

use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::optim::AdamConfig;
use burn::tensor::activation::relu;
use burn::tensor::{Distribution, Tensor};

#[derive(Module, Debug)]
struct Mlp {
    hidden: Linear,
    out: Linear,
}

impl Mlp {
    fn loss(&self, x: Tensor<2>) -> Tensor<1> {
        self.out
            .forward(relu(self.hidden.forward(x)))
            .powi_scalar(2)
            .mean()
    }
}

/// A few steps of the model, through the README's block; the run directory is the README's
/// `target/run`, under this crate's folder.
#[rustfmt::skip]
fn the_readme_block() -> Result<(), Box<dyn std::error::Error>> {
    let made_on = burn::tensor::Device::default().autodiff();
    let mut model = Mlp {
        hidden: LinearConfig::new(32, 64).init(&made_on),
        out: LinearConfig::new(64, 1).init(&made_on),
    };
    let mut optimizer = AdamConfig::new().init();
    let lr = 1e-3;
    let batches = (0..4).map(|_| Tensor::<2>::random([16, 32], Distribution::Default, &made_on));
    // README: begin
    use burn::optim::GradientsParams;
    use burn::tensor::Device;
    use burn_profiled_022::config::{Preset, RuntimeConfig};
    use burn_profiled_022::{Session, nvtx};

    let device = Device::default().autodiff();                   // CUDA when built with it, else wgpu
    let config = RuntimeConfig::from_env_or(Preset::Train)?;     // BURN_PROFILED=profile for the op table
    let mut session = Session::start(config, &device, "target/run");
    for batch in batches {
        // Your step, unchanged but for ranges: they name the blocks' phases and modules, and
        // `backward` and `optimizer` tell the backward and the optimizer from the forward.
        let loss = nvtx::scope("forward", || model.loss(batch));
        let grads = nvtx::scope("backward", || loss.backward());
        model = nvtx::scope("optimizer", || {
            let grads = GradientsParams::from_grads(grads, &model);
            optimizer.step(lr, model, grads)
        });
        if session.finish_iter().is_err() {
            break;                                               // a memory limit, or a NaN with check_finite = "stop"
        }
    }
    session.finish()?;
    // README: end
    Ok(())
}

fn readme_block() -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .expect("the README is two folders up");
    let start = readme
        .find("```rust\nuse burn::optim::GradientsParams;\nuse burn::tensor::Device;")
        .expect("the README has the Burn 0.22 session block");
    let body = &readme[start + "```rust\n".len()..];
    body[..body.find("```").expect("the block ends")].to_owned()
}

fn program_block() -> String {
    let program = include_str!("readme_wgpu.rs");
    let start = program
        .find("    // README: begin\n")
        .expect("the begin marker")
        + "    // README: begin\n".len();
    let end = program
        .find("    // README: end\n")
        .expect("the end marker");
    program[start..end]
        .lines()
        .map(|line| line.strip_prefix("    ").unwrap_or(line))
        .map(|line| format!("{line}\n"))
        .collect()
}

/// The test runs the README's block, not a copy that has drifted from it.
#[test]
fn the_test_holds_the_readmes_burn_022_session_block_verbatim() {
    assert_eq!(program_block(), readme_block());
}

#[test]
fn the_readmes_burn_022_session_block_trains_and_writes_its_run() {
    the_readme_block().expect("the README's block runs");
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/run/run.json");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&run).expect("run.json is written"))
            .expect("run.json is JSON");
    assert_eq!(run["steps"], 4);
}
