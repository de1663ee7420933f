//! `IntTensorOps` (bitwise ops included): i64 mostly, plus other int dtypes where NdArray has
//! them. Values stay small enough that no op overflows (overflow panics in debug builds).
//! (`int_device`, `int_to_device` and `int_argtopk` are checked elsewhere.)

use burn::backend::ndarray::NdArrayTensor;
use burn_backend::Distribution;
use burn_backend::ops::IntTensorOps;
use burn_backend::{Scalar, Shape, Slice, TensorData};
use burn_std::{BoolDType, FloatDType, IntDType};
use rand::Rng;

use crate::harness::{Cx, DEV, Nd, UPDATE_OPS, dims, int_tensor, read};

pub const OPS: &[&str] = &[
    "int_empty",
    "int_into_data",
    "int_from_data",
    "int_reshape",
    "int_slice",
    "int_slice_assign",
    "int_into_float",
    "int_mask_where",
    "int_mask_fill",
    "int_gather",
    "int_scatter_add",
    "int_scatter_nd",
    "int_gather_nd",
    "int_select",
    "int_select_add",
    "int_repeat_dim",
    "int_cat",
    "int_equal",
    "int_not_equal",
    "int_equal_elem",
    "int_not_equal_elem",
    "int_greater",
    "int_greater_elem",
    "int_greater_equal",
    "int_greater_equal_elem",
    "int_lower",
    "int_lower_elem",
    "int_lower_equal",
    "int_lower_equal_elem",
    "int_add",
    "int_add_scalar",
    "int_powi",
    "int_powi_scalar",
    "int_powi_scalar_impl",
    "int_clamp_min",
    "int_clamp_max",
    "int_clamp",
    "int_sub",
    "int_sub_scalar",
    "int_mul",
    "int_mul_scalar",
    "int_div",
    "int_div_scalar",
    "int_remainder",
    "int_remainder_scalar",
    "int_matmul",
    "int_neg",
    "int_zeros",
    "int_ones",
    "int_full",
    "int_sum",
    "int_sum_dim",
    "int_prod",
    "int_prod_dim",
    "int_mean",
    "int_mean_dim",
    "int_cumsum",
    "int_cumprod",
    "int_cummin",
    "int_cummax",
    "int_argmax",
    "int_topk",
    "int_argmin",
    "int_max",
    "int_max_dim",
    "int_max_dim_with_indices",
    "int_max_abs",
    "int_max_abs_dim",
    "int_min",
    "int_min_dim",
    "int_min_dim_with_indices",
    "int_abs",
    "int_transpose",
    "int_swap_dims",
    "int_permute",
    "int_flip",
    "int_random",
    "int_arange_step",
    "int_arange",
    "int_any",
    "int_any_dim",
    "int_all",
    "int_all_dim",
    "int_sign",
    "int_expand",
    "int_sort",
    "int_sort_with_indices",
    "int_argsort",
    "bitwise_and",
    "bitwise_and_scalar",
    "bitwise_or",
    "bitwise_or_scalar",
    "bitwise_xor",
    "bitwise_xor_scalar",
    "bitwise_not",
    "bitwise_left_shift",
    "bitwise_left_shift_scalar",
    "bitwise_right_shift",
    "bitwise_right_shift_scalar",
    "int_cast",
    "int_unfold",
];

pub fn run(cx: &mut Cx) {
    creation(cx);
    arithmetic(cx);
    bitwise(cx);
    layout(cx);
    indexing(cx);
    comparisons(cx);
    reductions(cx);
    sorting(cx);
    other_dtypes(cx);
}

/// i64 values in ±[1, 9]: safe divisors.
fn nonzero(cx: &mut Cx, shape: [usize; 3]) -> NdArrayTensor {
    let values = (0..shape.iter().product())
        .map(|_| cx.rng.random_range(1..10i64) * if cx.rng.random_bool(0.5) { 1 } else { -1 })
        .collect();
    int_tensor(values, shape)
}

fn creation(cx: &mut Cx) {
    let shape = Shape::new([2, 3, 4]);
    for dtype in [IntDType::I64, IntDType::I32, IntDType::U8] {
        check!(cx; int_zeros(shape.clone(), &DEV, dtype));
        check!(cx; int_ones(shape.clone(), &DEV, dtype));
        check!(cx; int_full(shape.clone(), Scalar::from(7i64), &DEV, dtype));
        // Uninitialised by contract.
        check!(cx; layout int_empty(shape.clone(), &DEV, dtype));
        // Sampled values come from NdArray's global RNG, which the two calls advance in turn:
        // only dtype and shape can match.
        check!(cx; layout int_random(shape.clone(), Distribution::Default, &DEV, dtype));
        check!(cx; layout int_random(shape.clone(), Distribution::Uniform(0.0, 9.0), &DEV, dtype));
        // Bernoulli(1) always draws 1, so these values are reproducible.
        check!(cx; int_random(shape.clone(), Distribution::Bernoulli(1.0), &DEV, dtype));
        check!(cx; int_arange(0..10, &DEV, dtype));
        check!(cx; int_arange_step(3..17, 3, &DEV, dtype));
    }
    check!(cx; int_arange(-5..4, &DEV, IntDType::I64));
    check!(cx; int_arange_step(-7..6, 2, &DEV, IntDType::I32));

    let x = cx.ints(shape.clone(), -50..50);
    let values: Vec<i64> = read(x.clone()).to_vec().unwrap();
    let small: Vec<i32> = values.iter().map(|&v| v as i32).collect();
    let bytes: Vec<u8> = values.iter().map(|&v| v.unsigned_abs() as u8).collect();
    let datas = [
        read(x.clone()),
        TensorData::new(small, shape.clone()),
        TensorData::new(bytes, shape.clone()),
    ];
    for data in datas {
        check!(cx; int_from_data(data.clone(), &DEV));
        let t = Nd::int_from_data(data, &DEV);
        check!(cx; read int_into_data(t.clone()));
    }
    for dtype in [FloatDType::F32, FloatDType::F64] {
        check!(cx; int_into_float(x.clone(), dtype));
    }
    for dtype in [IntDType::I64, IntDType::I32, IntDType::I16, IntDType::I8] {
        check!(cx; int_cast(x.clone(), dtype));
    }
    let natural = cx.ints(shape.clone(), 0..200);
    for dtype in [IntDType::U64, IntDType::U32, IntDType::U16, IntDType::U8] {
        check!(cx; int_cast(natural.clone(), dtype));
    }
}

fn arithmetic(cx: &mut Cx) {
    let x = cx.ints([2, 3, 4], -50..50);
    let y = cx.ints([2, 3, 4], -50..50);
    let row = cx.ints([1, 3, 1], -50..50);
    let divisor = nonzero(cx, [2, 3, 4]);
    check_each!(cx; [int_add, int_sub, int_mul](x.clone(), y.clone()));
    check_each!(cx; [int_add, int_sub, int_mul](x.clone(), row.clone()));
    check_each!(cx; [int_div, int_remainder](x.clone(), divisor.clone()));
    for s in [Scalar::from(7i64), Scalar::from(-3i64)] {
        check_each!(cx; [
            int_add_scalar, int_sub_scalar, int_mul_scalar, int_div_scalar, int_remainder_scalar,
        ](x.clone(), s));
    }
    check_each!(cx; [int_neg, int_abs, int_sign](x.clone()));
    check!(cx; int_clamp_min(x.clone(), Scalar::from(-10i64)));
    check!(cx; int_clamp_max(x.clone(), Scalar::from(10i64)));
    check!(cx; int_clamp(x.clone(), Scalar::from(-10i64), Scalar::from(20i64)));

    let base = cx.ints([2, 3, 4], -3..4);
    let exponent = cx.ints([2, 3, 4], 0..5);
    check!(cx; int_powi(base.clone(), exponent.clone()));
    for s in [Scalar::from(0i64), Scalar::from(1i64), Scalar::from(3i64)] {
        check_each!(cx; [int_powi_scalar, int_powi_scalar_impl](x.clone(), s));
    }

    let a = cx.ints([2, 3, 4], -9..10);
    let b = cx.ints([2, 4, 5], -9..10);
    check!(cx; int_matmul(a.clone(), b.clone()));
}

fn bitwise(cx: &mut Cx) {
    let x = cx.ints([3, 4], -1000..1000);
    let y = cx.ints([3, 4], -1000..1000);
    let shift = cx.ints([3, 4], 0..8);
    check_each!(cx; [bitwise_and, bitwise_or, bitwise_xor](x.clone(), y.clone()));
    check!(cx; bitwise_not(x.clone()));
    check_each!(cx; [bitwise_left_shift, bitwise_right_shift](x.clone(), shift.clone()));
    for s in [Scalar::from(0x55i64), Scalar::from(-8i64)] {
        check_each!(cx; [bitwise_and_scalar, bitwise_or_scalar, bitwise_xor_scalar](x.clone(), s));
    }
    check_each!(cx; [
        bitwise_left_shift_scalar, bitwise_right_shift_scalar,
    ](x.clone(), Scalar::from(3i64)));
}

fn layout(cx: &mut Cx) {
    let x = cx.ints([2, 3, 4], -50..50);
    check!(cx; int_transpose(x.clone()));
    check!(cx; int_swap_dims(x.clone(), 0, 2));
    check!(cx; int_permute(x.clone(), &[2, 0, 1]));
    check!(cx; int_flip(x.clone(), &[0, 2]));
    check!(cx; int_reshape(x.clone(), Shape::new([4, 6])));
    check!(cx; int_repeat_dim(x.clone(), 1, 3));
    let column = cx.ints([1, 3, 1], -50..50);
    check!(cx; int_expand(column.clone(), Shape::new([2, 3, 4])));
    let long = cx.ints([2, 3, 8], -50..50);
    check!(cx; int_unfold(long.clone(), 2, 3, 2));
    let parts = vec![
        cx.ints([2, 1, 4], -50..50),
        cx.ints([2, 3, 4], -50..50),
        cx.ints([2, 2, 4], -50..50),
    ];
    check!(cx; int_cat(parts.clone(), 1));
}

fn indexing(cx: &mut Cx) {
    let x = cx.ints([2, 3, 4], -50..50);
    let index = cx.ints([2, 5, 4], 0..3);
    let values = cx.ints([2, 5, 4], -50..50);
    check!(cx; int_gather(1, x.clone(), index.clone()));
    check!(cx; int_scatter_add(1, x.clone(), index.clone(), values.clone()));

    let rows = cx.ints([5], 0..3);
    check!(cx; int_select(x.clone(), 1, rows.clone()));
    check!(cx; int_select_add(x.clone(), 1, rows.clone(), values.clone()));

    let data = cx.ints([4, 3], -9..10);
    let row_index = cx.ints([5, 1], 0..4);
    let row_values = cx.ints([5, 3], -9..10);
    let element_index = cx.ints([5, 2], 0..3);
    let element_values = cx.ints([5], -9..10);
    for (index, values) in [(&row_index, &row_values), (&element_index, &element_values)] {
        check!(cx; int_gather_nd(data.clone(), index.clone()));
        for op in UPDATE_OPS {
            check!(cx; int_scatter_nd(data.clone(), index.clone(), values.clone(), op));
        }
    }

    let slices = [
        Slice::new(1, None, 1),
        Slice::new(0, Some(-1), 1),
        Slice::new(1, None, 2),
    ];
    check!(cx; int_slice(x.clone(), &slices));
    let patch = cx.ints(dims(&Nd::int_slice(x.clone(), &slices)), -50..50);
    check!(cx; int_slice_assign(x.clone(), &slices, patch.clone()));

    let mask = cx.bools([2, 3, 4]);
    let other = cx.ints([2, 3, 4], -50..50);
    check!(cx; int_mask_where(x.clone(), mask.clone(), other.clone()));
    check!(cx; int_mask_fill(x.clone(), mask.clone(), Scalar::from(-99i64)));
}

fn comparisons(cx: &mut Cx) {
    let a = cx.ints([3, 4], -2..3);
    let b = cx.ints([3, 4], -2..3);
    check_each!(cx; [
        int_equal, int_not_equal, int_greater, int_greater_equal, int_lower, int_lower_equal,
    ](a.clone(), b.clone(), BoolDType::Native));
    check_each!(cx; [
        int_equal_elem, int_not_equal_elem, int_greater_elem, int_greater_equal_elem,
        int_lower_elem, int_lower_equal_elem,
    ](a.clone(), Scalar::from(1i64), BoolDType::Native));
}

fn reductions(cx: &mut Cx) {
    // Small values: products stay far from overflow; ties and zeros are common.
    let x = cx.ints([3, 4, 5], -2..3);
    let wide = cx.ints([3, 4, 5], -50..50);
    check_each!(cx; [int_sum, int_prod, int_mean, int_max, int_min, int_max_abs](x.clone()));
    check_each!(cx; [int_sum, int_mean, int_max, int_min, int_max_abs](wide.clone()));
    for dim in [0, 2] {
        check_each!(cx; [
            int_sum_dim, int_prod_dim, int_mean_dim, int_max_dim, int_min_dim, int_max_abs_dim,
            int_cumsum, int_cumprod, int_cummin, int_cummax, int_argmax, int_argmin,
            int_max_dim_with_indices, int_min_dim_with_indices,
        ](x.clone(), dim));
        check_each!(cx; [int_any_dim, int_all_dim](x.clone(), dim, BoolDType::Native));
    }
    check_each!(cx; [int_any, int_all](x.clone(), BoolDType::Native));
    let ones = Nd::int_ones(Shape::new([2, 2]), &DEV, IntDType::I64);
    let zeros = Nd::int_zeros(Shape::new([2, 2]), &DEV, IntDType::I64);
    for t in [&ones, &zeros] {
        check_each!(cx; [int_any, int_all](t.clone(), BoolDType::Native));
    }
}

fn sorting(cx: &mut Cx) {
    let x = cx.ints([3, 6], -2..3);
    for (dim, descending) in [(1, false), (1, true), (0, true)] {
        check_each!(cx; [int_sort, int_sort_with_indices, int_argsort](x.clone(), dim, descending));
    }
    check!(cx; int_topk(x.clone(), 1, 3));
}

/// The same kernels on other int dtypes (values small enough for i8).
fn other_dtypes(cx: &mut Cx) {
    let x = cx.ints([3, 4], 0..30);
    let y = cx.ints([3, 4], 0..30);
    for dtype in [IntDType::I32, IntDType::I8, IntDType::U8, IntDType::U32] {
        let (a, b) = (
            Nd::int_cast(x.clone(), dtype),
            Nd::int_cast(y.clone(), dtype),
        );
        check!(cx; int_add(a.clone(), b.clone()));
        check!(cx; int_greater(a.clone(), b.clone(), BoolDType::Native));
        // NdArray answers `int_sign` of unsigned ints with a bool tensor.
        check_each!(cx; [int_abs, int_sign](a.clone()));
        check_each!(cx; [int_sum_dim, int_argmax](a.clone(), 1));
        check!(cx; int_sort(a.clone(), 1, false));
        check!(cx; int_into_float(a.clone(), FloatDType::F32));
        check!(cx; int_cast(a.clone(), IntDType::I64));
    }
}
