//! The numerics tests' model, on any backend: four `scale, exp, tanh` blocks over a matmul,
//! its parameters made from data (the same numbers on every backend).

use std::path::Path;

use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Tensor, TensorData};
use burn_profiled::config::{CheckFinite, RuntimeConfig};
use burn_profiled::numerics::{self, OpRecord};
use burn_profiled::{Session, nvtx};

/// Fingerprints with `check_finite`, and call sites, from the first step.
pub fn numerics_config(check_finite: CheckFinite) -> RuntimeConfig {
    let mut config = RuntimeConfig::default();
    config.numerics.fingerprints = true;
    config.numerics.check_finite = check_finite;
    config.stats.call_sites = true;
    config.stopwatch.warmup_iters = 0;
    config
}

/// A model of four `scale, exp, tanh` blocks over a matmul, trained for `steps` steps by hand
/// (forward, backward, an SGD update): 60 ops a step. `scales[2]` is the knob a changed
/// implementation turns.
pub fn train<B: AutodiffBackend>(dir: &Path, scales: [f32; 4], steps: usize) -> Vec<OpRecord> {
    train_with::<B>(numerics_config(CheckFinite::Warn), dir, scales, steps)
}

/// [`train`] under `config` (fingerprints on).
pub fn train_with<B: AutodiffBackend>(
    config: RuntimeConfig,
    dir: &Path,
    scales: [f32; 4],
    steps: usize,
) -> Vec<OpRecord> {
    let device = Default::default();
    let mut session = Session::start::<B>(config, &device, dir);
    let x = Tensor::<B, 2>::from_data(
        TensorData::new((0..32).map(|i| (i as f32 * 0.37).sin()).collect(), [4, 8]),
        &device,
    );
    let mut w = Tensor::<B, 2>::from_data(
        TensorData::new(
            (0..64).map(|i| (i as f32 * 0.11).cos() * 0.3).collect(),
            [8, 8],
        ),
        &device,
    )
    .require_grad();
    for _ in 0..steps {
        let loss = nvtx::scope("forward", || {
            let mut h = x.clone().matmul(w.clone());
            for scale in scales {
                h = h.mul_scalar(scale).exp().tanh();
            }
            h.sum()
        });
        let grads = nvtx::scope("backward", || loss.backward());
        w = nvtx::scope("optimizer", || {
            let grad = w.grad(&grads).expect("w has a gradient");
            let updated = w.clone().inner() - grad.mul_scalar(0.1);
            Tensor::from_inner(updated).require_grad()
        });
        session.finish_iter().expect("no limit set");
    }
    let summary = session.finish().expect("the run is written");
    assert!(
        summary.files.contains(&dir.join("numerics.jsonl")),
        "{:?}",
        summary.files
    );
    numerics::file::read(dir).expect("numerics.jsonl reads back")
}
