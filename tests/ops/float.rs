//! `FloatTensorOps`: f32 mostly, f64 where the op has a dtype of its own to get right.
//! (`float_device`, `float_to_device` and `float_argtopk` are checked elsewhere.)

use burn_backend::Distribution;
use burn_backend::ops::{
    FloatTensorOps, GridSampleOptions, GridSamplePaddingMode, InterpolateMode,
};
use burn_backend::{Scalar, Shape, Slice};
use burn_std::{BoolDType, FloatDType, IntDType};

use crate::harness::{Cx, DEV, Nd, UPDATE_OPS, dims, read};

pub const OPS: &[&str] = &[
    "float_from_data",
    "float_random",
    "float_zeros",
    "float_ones",
    "float_full",
    "float_into_data",
    "float_into_int",
    "float_empty",
    "float_repeat_dim",
    "float_add",
    "float_add_scalar",
    "float_clamp_min",
    "float_clamp_max",
    "float_clamp",
    "float_sub",
    "float_sub_scalar",
    "float_mul",
    "float_mul_scalar",
    "float_div",
    "float_div_scalar",
    "float_remainder",
    "float_remainder_scalar",
    "float_matmul",
    "float_cross",
    "float_neg",
    "float_recip",
    "float_transpose",
    "float_swap_dims",
    "float_permute",
    "float_flip",
    "float_reshape",
    "float_gather",
    "float_scatter_add",
    "float_scatter_nd",
    "float_gather_nd",
    "float_select",
    "float_select_add",
    "float_slice",
    "float_slice_assign",
    "float_mask_where",
    "float_mask_fill",
    "float_equal",
    "float_not_equal",
    "float_equal_elem",
    "float_not_equal_elem",
    "float_greater",
    "float_greater_elem",
    "float_greater_equal",
    "float_greater_equal_elem",
    "float_lower",
    "float_lower_elem",
    "float_lower_equal",
    "float_lower_equal_elem",
    "float_detach",
    "float_set_require_grad",
    "float_is_require_grad",
    "float_sum",
    "float_sum_dim",
    "float_prod",
    "float_prod_dim",
    "float_mean",
    "float_mean_dim",
    "float_cumsum",
    "float_cumprod",
    "float_cummin",
    "float_cummax",
    "float_cast",
    "float_exp",
    "float_log",
    "float_log1p",
    "float_powf",
    "float_powi",
    "float_powi_scalar",
    "float_powi_scalar_impl",
    "float_powf_scalar",
    "float_powf_scalar_impl",
    "float_sqrt",
    "float_abs",
    "float_cos",
    "float_sin",
    "float_tan",
    "float_cosh",
    "float_sinh",
    "float_tanh",
    "float_acos",
    "float_acosh",
    "float_asin",
    "float_asinh",
    "float_atan",
    "float_atanh",
    "float_atan2",
    "float_round",
    "float_floor",
    "float_ceil",
    "float_trunc",
    "float_erf",
    "float_cat",
    "float_argmax",
    "float_topk",
    "float_argmin",
    "float_max",
    "float_max_dim",
    "float_max_dim_with_indices",
    "float_min",
    "float_min_dim",
    "float_min_dim_with_indices",
    "float_max_abs",
    "float_max_abs_dim",
    "float_any",
    "float_any_dim",
    "float_all",
    "float_all_dim",
    "float_sign",
    "float_expand",
    "float_sort",
    "float_sort_with_indices",
    "float_argsort",
    "float_grid_sample_2d",
    "float_unfold",
    "float_is_nan",
    "float_is_inf",
];

pub fn run(cx: &mut Cx) {
    creation(cx);
    elementwise(cx);
    layout(cx);
    indexing(cx);
    comparisons(cx);
    reductions(cx);
    sorting(cx);
    grid_sample(cx);
}

fn creation(cx: &mut Cx) {
    let shape = Shape::new([2, 3, 4]);
    let x = cx.floats_special(shape.clone());
    let x64 = cx.floats_f64(shape.clone());
    for data in [read(x.clone()), read(x64.clone())] {
        check!(cx; float_from_data(data.clone(), &DEV));
    }
    for dtype in [FloatDType::F32, FloatDType::F64] {
        // Sampled values come from NdArray's global RNG, which the two calls advance in turn:
        // only dtype and shape can match.
        check!(cx; layout float_random(shape.clone(), Distribution::Normal(0.0, 1.0), &DEV, dtype));
        // Bernoulli(1) always draws 1, so these values are reproducible.
        check!(cx; float_random(shape.clone(), Distribution::Bernoulli(1.0), &DEV, dtype));
        check!(cx; float_zeros(shape.clone(), &DEV, dtype));
        check!(cx; float_ones(shape.clone(), &DEV, dtype));
        check!(cx; float_full(shape.clone(), Scalar::from(-2.5), &DEV, dtype));
        // Uninitialised by contract.
        check!(cx; layout float_empty(shape.clone(), &DEV, dtype));
    }
    check!(cx; read float_into_data(x.clone()));
    check!(cx; read float_into_data(x64.clone()));
    let finite = cx.floats_in([3, 5], -100.0..100.0);
    for dtype in [IntDType::I64, IntDType::I32, IntDType::I16] {
        check!(cx; float_into_int(finite.clone(), dtype));
    }
    check!(cx; float_repeat_dim(x.clone(), 1, 3));
}

fn elementwise(cx: &mut Cx) {
    let x = cx.floats_special([2, 3, 4]);
    let y = cx.floats_special([2, 3, 4]);
    let row = cx.floats([1, 3, 1]);
    check_each!(cx; [
        float_neg, float_recip, float_exp, float_log, float_log1p, float_sqrt, float_abs, float_cos,
        float_sin, float_tan, float_cosh, float_sinh, float_tanh, float_acos, float_acosh,
        float_asin, float_asinh, float_atan, float_atanh, float_round, float_floor, float_ceil,
        float_trunc, float_erf, float_sign, float_detach,
    ](x.clone()));
    check_each!(cx; [
        float_add, float_sub, float_mul, float_div, float_remainder, float_powf, float_atan2,
    ](x.clone(), y.clone()));
    // Broadcasting.
    check_each!(cx; [
        float_add, float_sub, float_mul, float_div, float_powf,
    ](x.clone(), row.clone()));
    for s in [Scalar::from(1.75), Scalar::from(-0.5), Scalar::from(0.0)] {
        check_each!(cx; [
            float_add_scalar, float_sub_scalar, float_mul_scalar, float_div_scalar,
            float_remainder_scalar, float_powf_scalar, float_powf_scalar_impl,
        ](x.clone(), s));
    }
    for s in [Scalar::from(3), Scalar::from(-2), Scalar::from(0)] {
        check_each!(cx; [float_powi_scalar, float_powi_scalar_impl](x.clone(), s));
    }
    let exponents = cx.ints([2, 3, 4], -3..4);
    check!(cx; float_powi(x.clone(), exponents.clone()));
    check!(cx; float_clamp_min(x.clone(), Scalar::from(-1.0)));
    check!(cx; float_clamp_max(x.clone(), Scalar::from(0.5)));
    check!(cx; float_clamp(x.clone(), Scalar::from(-1.0), Scalar::from(2.0)));
    check!(cx; float_is_nan(x.clone(), BoolDType::Native));
    check!(cx; float_is_inf(x.clone(), BoolDType::Native));

    // f64 keeps its own dtype through the same kernels.
    let x64 = cx.floats_f64([3, 4]);
    let y64 = cx.floats_f64([3, 4]);
    check_each!(cx; [float_exp, float_sqrt, float_erf](x64.clone()));
    check_each!(cx; [float_add, float_mul, float_powf](x64.clone(), y64.clone()));

    // Casts.
    let x32 = cx.floats([3, 4]);
    for dtype in [FloatDType::F64, FloatDType::F32, FloatDType::Flex32] {
        check!(cx; float_cast(x32.clone(), dtype));
        check!(cx; float_cast(x64.clone(), dtype));
    }

    let a = cx.floats([2, 3, 4]);
    let b = cx.floats([2, 4, 5]);
    let b1 = cx.floats([1, 4, 5]);
    check!(cx; float_matmul(a.clone(), b.clone()));
    check!(cx; float_matmul(a.clone(), b1.clone()));
    let u = cx.floats([4, 3]);
    let v = cx.floats([4, 3]);
    check!(cx; float_cross(u.clone(), v.clone(), 1));
}

fn layout(cx: &mut Cx) {
    let x = cx.floats([2, 3, 4]);
    check!(cx; float_transpose(x.clone()));
    check!(cx; float_swap_dims(x.clone(), 0, 2));
    check!(cx; float_permute(x.clone(), &[2, 0, 1]));
    check!(cx; float_flip(x.clone(), &[0, 2]));
    check!(cx; float_reshape(x.clone(), Shape::new([4, 6])));
    let column = cx.floats([1, 3, 1]);
    check!(cx; float_expand(column.clone(), Shape::new([2, 3, 4])));
    let long = cx.floats([2, 3, 8]);
    check!(cx; float_unfold(long.clone(), 2, 3, 2));
    let parts = vec![
        cx.floats([2, 1, 4]),
        cx.floats([2, 3, 4]),
        cx.floats([2, 2, 4]),
    ];
    check!(cx; float_cat(parts.clone(), 1));
}

fn indexing(cx: &mut Cx) {
    let x = cx.floats([2, 3, 4]);
    let index = cx.ints([2, 5, 4], 0..3);
    let values = cx.floats([2, 5, 4]);
    check!(cx; float_gather(1, x.clone(), index.clone()));
    check!(cx; float_scatter_add(1, x.clone(), index.clone(), values.clone()));

    let rows = cx.ints([5], 0..3);
    check!(cx; float_select(x.clone(), 1, rows.clone()));
    check!(cx; float_select_add(x.clone(), 1, rows.clone(), values.clone()));

    // N-d gather / scatter: whole rows (index depth 1) and single elements (depth 2).
    let data = cx.floats([4, 3]);
    let row_index = cx.ints([5, 1], 0..4);
    let row_values = cx.floats([5, 3]);
    let element_index = cx.ints([5, 2], 0..3);
    let element_values = cx.floats([5]);
    for (index, values) in [(&row_index, &row_values), (&element_index, &element_values)] {
        check!(cx; float_gather_nd(data.clone(), index.clone()));
        for op in UPDATE_OPS {
            check!(cx; float_scatter_nd(data.clone(), index.clone(), values.clone(), op));
        }
    }

    let slices = [
        Slice::new(0, Some(1), 1),
        Slice::new(-2, None, 1),
        Slice::new(0, None, 2),
    ];
    check!(cx; float_slice(x.clone(), &slices));
    let patch = cx.floats(dims(&Nd::float_slice(x.clone(), &slices)));
    check!(cx; float_slice_assign(x.clone(), &slices, patch.clone()));

    let mask = cx.bools([2, 3, 4]);
    let other = cx.floats([2, 3, 4]);
    check!(cx; float_mask_where(x.clone(), mask.clone(), other.clone()));
    check!(cx; float_mask_fill(x.clone(), mask.clone(), Scalar::from(7.5)));
}

fn comparisons(cx: &mut Cx) {
    // Few distinct values, so equal elements are common; plus NaNs and infinities.
    let a = cx.floats_coarse([3, 4]);
    let b = cx.floats_coarse([3, 4]);
    let special = cx.floats_special([3, 4]);
    for (lhs, rhs) in [(&a, &b), (&a, &special)] {
        check_each!(cx; [
            float_equal, float_not_equal, float_greater, float_greater_equal, float_lower,
            float_lower_equal,
        ](lhs.clone(), rhs.clone(), BoolDType::Native));
    }
    for lhs in [&a, &special] {
        check_each!(cx; [
            float_equal_elem, float_not_equal_elem, float_greater_elem, float_greater_equal_elem,
            float_lower_elem, float_lower_equal_elem,
        ](lhs.clone(), Scalar::from(1.0), BoolDType::Native));
    }
}

fn reductions(cx: &mut Cx) {
    // Coarse values: exact zeros for any/all, ties for argmax/argmin.
    let x = cx.floats_coarse([3, 4, 5]);
    let smooth = cx.floats([3, 4, 5]);
    for x in [&x, &smooth] {
        check_each!(cx; [
            float_sum, float_prod, float_mean, float_max, float_min, float_max_abs,
        ](x.clone()));
        for dim in [0, 2] {
            check_each!(cx; [
                float_sum_dim, float_prod_dim, float_mean_dim, float_max_dim, float_min_dim,
                float_max_abs_dim, float_cumsum, float_cumprod, float_cummin, float_cummax,
            ](x.clone(), dim));
            check_each!(cx; [
                float_argmax, float_argmin, float_max_dim_with_indices, float_min_dim_with_indices,
            ](x.clone(), dim, IntDType::I64));
            check_each!(cx; [float_any_dim, float_all_dim](x.clone(), dim, BoolDType::Native));
        }
        check_each!(cx; [float_any, float_all](x.clone(), BoolDType::Native));
    }
    let zeros = Nd::float_zeros(Shape::new([2, 2]), &DEV, FloatDType::F32);
    let ones = Nd::float_ones(Shape::new([2, 2]), &DEV, FloatDType::F32);
    for x in [&zeros, &ones] {
        check_each!(cx; [float_any, float_all](x.clone(), BoolDType::Native));
    }
    check!(cx; float_set_require_grad(x.clone(), true));
    check!(cx; float_is_require_grad(&x));
}

fn sorting(cx: &mut Cx) {
    let x = cx.floats_coarse([3, 6]);
    let smooth = cx.floats([3, 6]);
    for x in [&x, &smooth] {
        for (dim, descending) in [(1, false), (1, true), (0, true)] {
            check!(cx; float_sort(x.clone(), dim, descending));
            check!(cx; float_sort_with_indices(x.clone(), dim, descending, IntDType::I64));
            check!(cx; float_argsort(x.clone(), dim, descending, IntDType::I64));
        }
        check!(cx; float_topk(x.clone(), 1, 3));
    }
}

fn grid_sample(cx: &mut Cx) {
    let image = cx.floats([2, 3, 4, 5]);
    let grid = cx.floats_in([2, 3, 6, 2], -1.2..1.2);
    for padding in [
        GridSamplePaddingMode::Zeros,
        GridSamplePaddingMode::Border,
        GridSamplePaddingMode::Reflection,
    ] {
        for align_corners in [false, true] {
            let options = GridSampleOptions::new(InterpolateMode::Bilinear)
                .with_padding_mode(padding)
                .with_align_corners(align_corners);
            check!(cx; float_grid_sample_2d(image.clone(), grid.clone(), options.clone()));
        }
    }
}
