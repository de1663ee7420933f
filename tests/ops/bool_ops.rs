//! `BoolTensorOps` (`bool_argwhere` included). (`bool_device`, `bool_to_device` are checked with
//! the transaction ops.)

use burn_backend::ops::BoolTensorOps;
use burn_backend::{Scalar, Shape, Slice};
use burn_std::{BoolDType, FloatDType, IntDType};

use crate::harness::{Cx, DEV, Nd, dims, read};

pub const OPS: &[&str] = &[
    "bool_empty",
    "bool_zeros",
    "bool_ones",
    "bool_into_data",
    "bool_from_data",
    "bool_into_int",
    "bool_into_float",
    "bool_reshape",
    "bool_slice",
    "bool_slice_assign",
    "bool_mask_where",
    "bool_mask_fill",
    "bool_gather",
    "bool_scatter_or",
    "bool_select",
    "bool_select_or",
    "bool_repeat_dim",
    "bool_cat",
    "bool_equal",
    "bool_not_equal",
    "bool_equal_elem",
    "bool_not_equal_elem",
    "bool_not",
    "bool_and",
    "bool_or",
    "bool_xor",
    "bool_transpose",
    "bool_swap_dims",
    "bool_permute",
    "bool_flip",
    "bool_any",
    "bool_any_dim",
    "bool_all",
    "bool_all_dim",
    "bool_expand",
    "bool_unfold",
    "bool_argwhere",
];

pub fn run(cx: &mut Cx) {
    let shape = Shape::new([2, 3, 4]);
    check!(cx; bool_zeros(shape.clone(), &DEV, BoolDType::Native));
    check!(cx; bool_ones(shape.clone(), &DEV, BoolDType::Native));
    // Uninitialised by contract.
    check!(cx; layout bool_empty(shape.clone(), &DEV, BoolDType::Native));

    let x = cx.bools(shape.clone());
    let y = cx.bools(shape.clone());
    check!(cx; bool_from_data(read(x.clone()), &DEV));
    check!(cx; read bool_into_data(x.clone()));
    for dtype in [IntDType::I64, IntDType::I32, IntDType::U8] {
        check!(cx; bool_into_int(x.clone(), dtype));
    }
    for dtype in [FloatDType::F32, FloatDType::F64] {
        check!(cx; bool_into_float(x.clone(), dtype));
    }
    for out in [IntDType::I64, IntDType::I32] {
        check!(cx; read bool_argwhere(x.clone(), out));
    }

    // Logic.
    check_each!(cx; [bool_not, bool_any, bool_all, bool_transpose](x.clone()));
    check_each!(cx; [
        bool_equal, bool_not_equal, bool_and, bool_or, bool_xor,
    ](x.clone(), y.clone()));
    for value in [true, false] {
        check_each!(cx; [bool_equal_elem, bool_not_equal_elem](x.clone(), Scalar::from(value)));
    }
    for dim in [0, 2] {
        check_each!(cx; [bool_any_dim, bool_all_dim](x.clone(), dim));
    }
    let trues = Nd::bool_ones(Shape::new([2, 2]), &DEV, BoolDType::Native);
    let falses = Nd::bool_zeros(Shape::new([2, 2]), &DEV, BoolDType::Native);
    for t in [&trues, &falses] {
        check_each!(cx; [bool_any, bool_all](t.clone()));
    }

    // Layout.
    check!(cx; bool_swap_dims(x.clone(), 0, 2));
    check!(cx; bool_permute(x.clone(), &[2, 0, 1]));
    check!(cx; bool_flip(x.clone(), &[0, 2]));
    check!(cx; bool_reshape(x.clone(), Shape::new([4, 6])));
    check!(cx; bool_repeat_dim(x.clone(), 1, 3));
    let column = cx.bools([1, 3, 1]);
    check!(cx; bool_expand(column.clone(), Shape::new([2, 3, 4])));
    let long = cx.bools([2, 3, 8]);
    check!(cx; bool_unfold(long.clone(), 2, 3, 2));
    let parts = vec![
        cx.bools([2, 1, 4]),
        cx.bools([2, 3, 4]),
        cx.bools([2, 2, 4]),
    ];
    check!(cx; bool_cat(parts.clone(), 1));

    // Indexing.
    let index = cx.ints([2, 5, 4], 0..3);
    let values = cx.bools([2, 5, 4]);
    check!(cx; bool_gather(1, x.clone(), index.clone()));
    check!(cx; bool_scatter_or(1, x.clone(), index.clone(), values.clone()));
    let rows = cx.ints([5], 0..3);
    check!(cx; bool_select(x.clone(), 1, rows.clone()));
    check!(cx; bool_select_or(x.clone(), 1, rows.clone(), values.clone()));
    let slices = [
        Slice::new(0, Some(1), 1),
        Slice::new(1, None, 1),
        Slice::new(0, None, 3),
    ];
    check!(cx; bool_slice(x.clone(), &slices));
    let patch = cx.bools(dims(&Nd::bool_slice(x.clone(), &slices)));
    check!(cx; bool_slice_assign(x.clone(), &slices, patch.clone()));
    let mask = cx.bools(shape.clone());
    check!(cx; bool_mask_where(x.clone(), mask.clone(), y.clone()));
    for value in [true, false] {
        check!(cx; bool_mask_fill(x.clone(), mask.clone(), Scalar::from(value)));
    }
}
