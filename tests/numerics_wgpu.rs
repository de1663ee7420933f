//! Per-op numerics on CubeCL's real device thread (burn's `Wgpu` on Mesa's lavapipe): the same
//! program on NdArray and on `Profiled<Wgpu>` aligns op for op and agrees within the default
//! tolerance, though not bit for bit.
#![cfg(feature = "wgpu")]

use burn::backend::{Autodiff, NdArray, Wgpu};
use burn_profiled::Profiled;
use burn_profiled::numerics::{self, Agreement, Tolerance};

mod support;

#[path = "numerics/model.rs"]
mod model;

const SCALES: [f32; 4] = [0.5, 0.8, 1.1, 0.9];

#[test]
fn ndarray_and_wgpu_align_op_for_op_and_agree_within_the_default_tolerance() {
    let root = support::profile_dir().join("numerics-wgpu-tests");
    let _ = std::fs::remove_dir_all(&root);
    burn_profiled::nvtx::enable(burn_profiled::nvtx::RangeConfig::new());
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
