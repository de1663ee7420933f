//! Ops placed on a roofline: the bound at their intensity, their share of it, the limit.
// `&[x.clone()]` reads as the op's argument list; `slice::from_ref(&x)` would not.
#![allow(clippy::cloned_ref_to_slice_refs)]

use burn_profiled_core::roofline::{Limit, Peaks};
use burn_profiled_core::work::{self, TensorArg, Work};

/// The H200's datasheet figures for dense FP32 (67 TFLOP/s) and HBM3e (4.8 TB/s).
const H200: Peaks = Peaks {
    flops_per_s: 67e12,
    bytes_per_s: 4.8e12,
};

#[test]
fn a_large_matmul_is_compute_bound_and_an_elementwise_add_memory_bound() {
    let m = TensorArg::new(&[4096, 4096], 4);
    let matmul = work::of("float_matmul", &[m.clone(), m.clone()], &[m.clone()], None);
    let point = H200.place(&matmul, 5e-3).unwrap();
    assert_eq!(point.limit, Limit::Compute);
    assert!(point.intensity > H200.ridge(), "{point:?}");
    assert_eq!(point.bound_flops_per_s, 67e12);
    let achieved = 2.0 * 4096f64.powi(3) / 5e-3;
    assert_eq!(point.achieved_flops_per_s, achieved);
    assert_eq!(point.share, achieved / 67e12);

    let add = work::of("float_add", &[m.clone(), m.clone()], &[m], None);
    let point = H200.place(&add, 40e-6).unwrap();
    assert_eq!(point.limit, Limit::Memory);
    assert_eq!(point.intensity, 1.0 / 12.0, "one FLOP per 12 bytes at f32");
    assert_eq!(point.bound_flops_per_s, 4.8e12 / 12.0);
    assert_eq!(point.achieved_bytes_per_s, 12.0 * 4096.0 * 4096.0 / 40e-6);
    // Its share of the roofline is its share of the bandwidth.
    assert!((point.share - point.achieved_bytes_per_s / 4.8e12).abs() < 1e-12);
}

#[test]
fn at_the_ridge_the_two_roofs_meet() {
    let peaks = Peaks {
        flops_per_s: 1e12,
        bytes_per_s: 1e11,
    };
    assert_eq!(peaks.ridge(), 10.0);
    let work = Work {
        flops: Some(1000),
        bytes: Some(100),
    };
    let point = peaks.place(&work, 1e-9).unwrap();
    assert_eq!(point.bound_flops_per_s, 1e12);
    assert_eq!(point.limit, Limit::Compute);
}

#[test]
fn unknown_work_views_and_rows_without_time_are_not_placed() {
    let known = Work {
        flops: Some(10),
        bytes: Some(10),
    };
    assert_eq!(H200.place(&Work::default(), 1.0), None, "unknown op");
    assert_eq!(H200.place(&Work::NONE, 1.0), None, "a view");
    let copy = Work {
        flops: Some(0),
        bytes: Some(64),
    };
    assert_eq!(
        H200.place(&copy, 1.0),
        None,
        "no FLOPs: no intensity to place"
    );
    assert_eq!(H200.place(&known, 0.0), None, "no time");
    assert_eq!(H200.place(&known, f64::NAN), None);
}
