//! Per-op numerics on CubeCL's real device thread (burn's `Wgpu` on Mesa's lavapipe): the same
//! program on NdArray and on `Profiled<Wgpu>` aligns op for op and agrees within the default
//! tolerance, though not bit for bit; on `fused::Wgpu`, the ops of fused blocks whose outputs
//! leave the block align with the same ops unfused.
#![cfg(feature = "wgpu")]

use burn::backend::{Autodiff, NdArray, Wgpu};
use burn_profiled::numerics::{self, Agreement, Tolerance};
use burn_profiled::{Profiled, fused};

mod support;

#[path = "numerics/model.rs"]
mod model;

const SCALES: [f32; 4] = [0.5, 0.8, 1.1, 0.9];

/// Sessions' tools are process-wide: one test at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    static ENABLE: std::sync::Once = std::sync::Once::new();
    ENABLE.call_once(|| burn_profiled::nvtx::enable(burn_profiled::nvtx::RangeConfig::new()));
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn ndarray_and_wgpu_align_op_for_op_and_agree_within_the_default_tolerance() {
    let root = support::profile_dir().join("numerics-wgpu-tests");
    let _ = std::fs::remove_dir_all(&root);
    let _serial = serial();
    let reference = model::train::<Autodiff<Profiled<NdArray>>>(&root.join("ndarray"), SCALES, 2);
    let current = model::train::<Autodiff<Profiled<Wgpu>>>(&root.join("wgpu"), SCALES, 2);
    let comparison = numerics::compare(&reference, &current, Tolerance::default());
    let text = numerics::render(&comparison, &reference, &current, 10);
    assert!(comparison.agrees(), "{text}");
    assert!(comparison.alignment.only_reference.is_empty(), "{text}");
    assert!(comparison.alignment.only_current.is_empty(), "{text}");
    assert_eq!(comparison.pairs.len(), reference.len());
    let [identical, within, diverged] = comparison.counts();
    assert_eq!(diverged, 0);
    assert!(
        within > 0,
        "two backends' f32 differ somewhere: {identical} identical"
    );
    println!("{text}");
    let same = comparison
        .pairs
        .iter()
        .filter(|p| p.agreement == Agreement::Identical);
    println!(
        "{} of {} ops bit for bit",
        same.count(),
        comparison.pairs.len()
    );
}

#[test]
fn a_fused_blocks_outputs_align_with_the_same_ops_unfused_within_the_default_tolerance() {
    let _serial = serial();
    let root = support::profile_dir().join("numerics-fused-tests");
    let _ = std::fs::remove_dir_all(&root);
    let unfused = model::train::<Autodiff<Profiled<Wgpu>>>(&root.join("unfused"), SCALES, 2);
    let fused = model::train::<Autodiff<fused::Wgpu>>(&root.join("fused"), SCALES, 2);
    let comparison = numerics::compare(&unfused, &fused, Tolerance::default());
    let text = numerics::render(&comparison, &unfused, &fused, 10);
    println!("{text}");
    assert!(comparison.agrees(), "{text}");
    // The ops whose outputs stayed in a block's registers are aligned, with nothing to compare.
    assert!(comparison.not_observed() > 0, "{text}");
    let [identical, within, _] = comparison.counts();
    assert!(identical + within >= 20, "{text}");
    let aligned: Vec<&str> = comparison
        .pairs
        .iter()
        .map(|pair| fused[pair.current].op.as_str())
        .collect();
    for op in ["float_matmul", "float_exp", "float_tanh"] {
        assert!(aligned.contains(&op), "{op} aligned: {aligned:?}");
    }
    // Fusion registers a few ops as others (`powi_scalar` as `mul`, `transpose` as
    // `swap_dims`): those, and only those, stay unaligned.
    assert!(
        comparison.alignment.only_current.len() * 5 <= fused.len(),
        "nearly every fused record aligned: {text}"
    );
}
