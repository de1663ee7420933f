//! Autotune's trial runs are not the program's ops. With burn's default features (autotune
//! on), on `fused::Wgpu` (lavapipe) with an empty tune cache, CubeCL tries each fused matmul's
//! candidate kernels on forks of the block's inputs, and its fallback candidate runs the matmul
//! through `Profiled`'s op path. Those runs are counted (`probe::autotune_trials`), not
//! recorded: a run that tuned and a run that found every key tuned write the same records.

use burn::backend::Autodiff;
use burn::tensor::{Tensor, TensorData};
use burn_cubecl::cubecl::config::{CubeClRuntimeConfig, RuntimeConfig, cache::CacheConfig};
use burn_profiled::config::RuntimeConfig as Profiling;
use burn_profiled::numerics::{self, OpRecord, Tolerance};
use burn_profiled::{Session, fused, probe};

type B = Autodiff<fused::Wgpu>;

/// Two steps of a small model (an inner product, a matmul of [1, 8] by [8, 1], fused with the
/// ops after it: CubeCL's fused matmul tries its fallback among its first candidates for inner
/// products, `burn-cubecl-fusion-0.21.0/src/optim/matmul/tune.rs` line 124) under a session
/// with fingerprints: its records.
fn run(dir: &std::path::Path) -> Vec<OpRecord> {
    let mut config = Profiling::default();
    config.numerics.fingerprints = true;
    config.stopwatch.warmup_iters = 0;
    let device = Default::default();
    let mut session = Session::start::<B>(config, &device, dir);
    let x = Tensor::<B, 2>::from_data(
        TensorData::new((0..8).map(|i| (i as f32 * 0.37).sin()).collect(), [1, 8]),
        &device,
    );
    let mut w = Tensor::<B, 2>::from_data(
        TensorData::new(
            (0..8).map(|i| (i as f32 * 0.11).cos() * 0.3).collect(),
            [8, 1],
        ),
        &device,
    )
    .require_grad();
    for _ in 0..2 {
        let loss = x
            .clone()
            .matmul(w.clone())
            .mul_scalar(0.5)
            .exp()
            .tanh()
            .sum();
        let grads = loss.backward();
        let grad = w.grad(&grads).expect("w has a gradient");
        w = Tensor::from_inner(w.clone().inner() - grad.mul_scalar(0.1)).require_grad();
        session.finish_iter().expect("no limit set");
    }
    session.finish().expect("the run is written");
    numerics::file::read(dir).expect("numerics.jsonl reads back")
}

#[test]
fn trial_runs_are_counted_not_recorded_and_a_tuned_run_records_the_same_ops() {
    let root = tempfile_root();
    // An empty tune cache of this test's own: every key is tuned in this process.
    let mut cubecl = CubeClRuntimeConfig::default();
    cubecl.autotune.cache = CacheConfig::File(root.join("tune-cache"));
    CubeClRuntimeConfig::set(cubecl);

    let tuning = run(&root.join("tuning"));
    let trials = probe::autotune_trials();
    assert!(
        trials > 0,
        "the fused matmul was tuned: its trials reached the fallback"
    );
    let tuned = run(&root.join("tuned"));
    assert_eq!(
        probe::autotune_trials(),
        trials,
        "each key tuned once a process"
    );

    let ops = |records: &[OpRecord]| -> Vec<String> {
        records.iter().map(|record| record.op.clone()).collect()
    };
    assert_eq!(ops(&tuning), ops(&tuned), "{trials} trials left no record");
    let comparison = numerics::compare(&tuning, &tuned, Tolerance::default());
    let text = numerics::render(&comparison, &tuning, &tuned, 5);
    assert!(comparison.agrees(), "{text}");
    assert!(comparison.alignment.repeats_reference.is_empty(), "{text}");
    assert!(comparison.alignment.only_reference.is_empty(), "{text}");
}

/// A directory of this test's own under the target directory, emptied.
fn tempfile_root() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let target = exe
        .ancestors()
        .nth(3)
        .expect("target/<profile>/deps/<binary>");
    let root = target.join("with-burn-defaults-autotune");
    let _ = std::fs::remove_dir_all(&root);
    root
}
