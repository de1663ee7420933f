//! `QTensorOps`, on what NdArray quantizes: symmetric 8-bit values stored natively, per tensor
//! or per block. Most q ops are burn-backend default bodies that dequantize, run the float op
//! and (for ops that keep the tensor quantized) requantize: run by `B`, they report one op.
//! (`q_device`, `q_to_device` are checked with the transaction ops; `q_argtopk` is not
//! supported by NdArray.)

use burn::backend::ndarray::NdArrayQTensor;
use burn_backend::ops::QTensorOps;
use burn_backend::quantization::{
    Calibration, QuantLevel, QuantScheme, QuantStore, QuantValue, QuantizationParametersPrimitive,
    compute_q_params, compute_range,
};
use burn_backend::{Scalar, Shape, Slice, TensorPrimitive};
use burn_std::{BoolDType, FloatDType, IntDType};

use crate::harness::{Cx, DEV, Nd};

pub const OPS: &[&str] = &[
    "q_from_data",
    "quantize_dynamic",
    "dequantize",
    "q_reshape",
    "q_into_data",
    "q_detach",
    "q_set_require_grad",
    "q_is_require_grad",
    "q_expand",
    "q_transpose",
    "q_swap_dims",
    "q_permute",
    "q_flip",
    "q_select",
    "q_slice",
    "q_gather",
    "q_repeat_dim",
    "q_add",
    "q_add_scalar",
    "q_clamp_min",
    "q_clamp_max",
    "q_clamp",
    "q_sub",
    "q_sub_scalar",
    "q_mul",
    "q_mul_scalar",
    "q_div",
    "q_div_scalar",
    "q_neg",
    "q_recip",
    "q_sum",
    "q_sum_dim",
    "q_prod",
    "q_prod_dim",
    "q_mean",
    "q_mean_dim",
    "q_cumsum",
    "q_cumprod",
    "q_cummin",
    "q_cummax",
    "q_exp",
    "q_log",
    "q_log1p",
    "q_powf",
    "q_powi",
    "q_powi_scalar",
    "q_powf_scalar",
    "q_sqrt",
    "q_abs",
    "q_cos",
    "q_sin",
    "q_tan",
    "q_cosh",
    "q_sinh",
    "q_tanh",
    "q_erf",
    "q_cat",
    "q_argmax",
    "q_topk",
    "q_argmin",
    "q_max",
    "q_max_dim",
    "q_max_dim_with_indices",
    "q_min",
    "q_min_dim",
    "q_min_dim_with_indices",
    "q_max_abs",
    "q_max_abs_dim",
    "q_any",
    "q_any_dim",
    "q_all",
    "q_all_dim",
    "q_sort",
    "q_sort_with_indices",
    "q_argsort",
    "quantize",
    "q_matmul",
];

/// NdArray's default scheme: symmetric Q8F per tensor, stored natively.
pub fn per_tensor() -> QuantScheme {
    QuantScheme::default().with_store(QuantStore::Native)
}

/// Symmetric Q8S in blocks of 4, stored natively.
fn per_block() -> QuantScheme {
    per_tensor()
        .with_value(QuantValue::Q8S)
        .with_level(QuantLevel::block([4]))
}

/// A quantized tensor of random values (quantized by NdArray, without events).
pub fn quantized(cx: &mut Cx, shape: impl Into<Shape>, scheme: QuantScheme) -> NdArrayQTensor {
    Nd::quantize_dynamic(cx.floats(shape), &scheme)
}

pub fn run(cx: &mut Cx) {
    quantization(cx);
    layout_and_indexing(cx);
    arithmetic(cx);
    reductions(cx);
    matmul(cx);
}

fn quantization(cx: &mut Cx) {
    for scheme in [per_tensor(), per_block()] {
        let x = cx.floats([3, 8]);
        check!(cx; quantize_dynamic(x.clone(), &scheme));
        let (min, max) = compute_range::<Nd>(&scheme, x.clone(), &Calibration::MinMax);
        let scales = compute_q_params::<Nd>(&scheme, min, max).scales;
        check!(cx; quantize(x.clone(), &scheme,
            QuantizationParametersPrimitive { scales: scales.clone() }));

        let q = Nd::quantize_dynamic(x.clone(), &scheme);
        for dtype in [FloatDType::F32, FloatDType::F64] {
            check!(cx; dequantize(q.clone(), dtype));
        }
        check!(cx; read q_into_data(q.clone()));
        let data = burn_std::future::block_on(Nd::q_into_data(q.clone())).unwrap();
        check!(cx; q_from_data(data.clone(), &DEV));
        check!(cx; q_detach(q.clone()));
        check!(cx; q_set_require_grad(q.clone(), true));
        check!(cx; q_is_require_grad(&q));
    }
}

fn layout_and_indexing(cx: &mut Cx) {
    let q = quantized(cx, [2, 3, 4], per_tensor());
    check!(cx; q_reshape(q.clone(), Shape::new([4, 6])));
    check!(cx; q_transpose(q.clone()));
    check!(cx; q_swap_dims(q.clone(), 0, 2));
    check!(cx; q_permute(q.clone(), &[2, 0, 1]));
    check!(cx; q_flip(q.clone(), &[0, 2]));
    check!(cx; q_repeat_dim(q.clone(), 1, 2));
    let column = quantized(cx, [1, 3, 1], per_tensor());
    check!(cx; q_expand(column.clone(), Shape::new([2, 3, 4])));
    let slices = [
        Slice::new(1, None, 1),
        Slice::new(0, Some(2), 1),
        Slice::new(0, None, 2),
    ];
    check!(cx; q_slice(q.clone(), &slices));
    let rows = cx.ints([5], 0..3);
    check!(cx; q_select(q.clone(), 1, rows.clone()));
    let index = cx.ints([2, 5, 4], 0..3);
    check!(cx; q_gather(1, q.clone(), index.clone()));
    let parts = vec![
        quantized(cx, [2, 1, 4], per_tensor()),
        q.clone(),
        quantized(cx, [2, 2, 4], per_tensor()),
    ];
    check!(cx; q_cat(parts.clone(), 1));
}

fn arithmetic(cx: &mut Cx) {
    for scheme in [per_tensor(), per_block()] {
        let a = quantized(cx, [3, 4], scheme);
        let b = quantized(cx, [3, 4], scheme);
        check_each!(cx; [q_add, q_sub, q_mul, q_div, q_powf](a.clone(), b.clone()));
    }
    let a = quantized(cx, [3, 4], per_tensor());
    check_each!(cx; [
        q_neg, q_recip, q_exp, q_log, q_log1p, q_sqrt, q_abs, q_cos, q_sin, q_tan, q_cosh, q_sinh,
        q_tanh, q_erf,
    ](a.clone()));
    check_each!(cx; [
        q_add_scalar, q_sub_scalar, q_mul_scalar, q_div_scalar, q_powf_scalar,
    ](a.clone(), Scalar::from(1.5)));
    check!(cx; q_powi_scalar(a.clone(), Scalar::from(3i64)));
    let exponents = cx.ints([3, 4], 0..4);
    check!(cx; q_powi(a.clone(), exponents.clone()));
    check!(cx; q_clamp_min(a.clone(), Scalar::from(-1.0)));
    check!(cx; q_clamp_max(a.clone(), Scalar::from(1.0)));
    check!(cx; q_clamp(a.clone(), Scalar::from(-1.0), Scalar::from(2.0)));
}

fn reductions(cx: &mut Cx) {
    let q = quantized(cx, [3, 4, 5], per_tensor());
    check_each!(cx; [q_sum, q_prod, q_mean, q_max, q_min, q_max_abs](q.clone()));
    check_each!(cx; [q_any, q_all](q.clone(), BoolDType::Native));
    for dim in [0, 2] {
        check_each!(cx; [
            q_sum_dim, q_prod_dim, q_mean_dim, q_cumsum, q_cumprod, q_cummin, q_cummax, q_max_dim,
            q_min_dim, q_max_abs_dim,
        ](q.clone(), dim));
        check_each!(cx; [
            q_argmax, q_argmin, q_max_dim_with_indices, q_min_dim_with_indices,
        ](q.clone(), dim, IntDType::I64));
        check_each!(cx; [q_any_dim, q_all_dim](q.clone(), dim, BoolDType::Native));
        for descending in [false, true] {
            check!(cx; q_sort(q.clone(), dim, descending));
            check_each!(cx; [
                q_sort_with_indices, q_argsort,
            ](q.clone(), dim, descending, IntDType::I64));
        }
    }
    check!(cx; q_topk(q.clone(), 2, 3));
}

fn matmul(cx: &mut Cx) {
    for scheme in [per_tensor(), per_block()] {
        let a = quantized(cx, [2, 3, 4], scheme);
        let b = quantized(cx, [2, 4, 8], scheme);
        let f = cx.floats([2, 3, 4]);
        check!(cx; q_matmul(TensorPrimitive::QFloat(a.clone()),
            TensorPrimitive::QFloat(b.clone())));
        check!(cx; q_matmul(TensorPrimitive::Float(f.clone()), TensorPrimitive::QFloat(b.clone())));
    }
}
