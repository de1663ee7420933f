//! Each op's FLOPs and bytes against counts made by hand, with the conventions of
//! `burn_profiled_core::work`: a multiply-add is 2 FLOPs, elementwise 1 per element.
// `&[x.clone()]` reads as the op's argument list; `slice::from_ref(&x)` would not.
#![allow(clippy::cloned_ref_to_slice_refs)]

use burn_profiled_core::work::{self, TensorArg, Work};

fn f32s(dims: &[usize]) -> TensorArg {
    TensorArg::new(dims, 4)
}

fn flops(op: &str, inputs: &[TensorArg], outputs: &[TensorArg]) -> Option<u64> {
    work::of(op, inputs, outputs, None).flops
}

/// A grouped, strided, dilated, padded convolution: x [2, 8, 17, 17], 4 groups, 16 filters of
/// 3x3, stride 2, dilation 2, padding 1, so (17 + 2 - 2·2 - 1) / 2 + 1 = 8 outputs a side. Each
/// output element is 8/4 channels · 3·3 taps = 18 multiply-adds.
#[test]
fn a_grouped_strided_dilated_convolution_counts_the_macs_of_each_output_element() {
    let (x, weight, out) = (
        f32s(&[2, 8, 17, 17]),
        f32s(&[16, 2, 3, 3]),
        f32s(&[2, 16, 8, 8]),
    );
    let expected = 2 * (2 * 16 * 8 * 8) * 18;
    assert_eq!(expected, 73_728);
    let work = work::of("conv2d", &[x.clone(), weight.clone()], &[out.clone()], None);
    assert_eq!(work.flops, Some(expected));
    assert_eq!(
        work.bytes,
        Some(4 * (2 * 8 * 17 * 17 + 16 * 2 * 9 + 2 * 16 * 64))
    );
    // Both gradients do the forward's multiply-adds again, from the output's gradient.
    for op in ["conv2d_x_backward", "conv2d_weight_backward"] {
        assert_eq!(
            flops(op, &[x.clone(), weight.clone(), out.clone()], &[x.clone()]),
            Some(expected),
            "{op}"
        );
    }
    assert_eq!(
        flops(
            "conv2d_bias_backward",
            &[x, f32s(&[16]), out],
            &[f32s(&[16])]
        ),
        Some(2 * 16 * 64),
        "a sum over the output's gradient"
    );
}

#[test]
fn one_and_three_dimensional_convolutions_count_alike() {
    // x [1, 6, 20], 3 groups, 4 filters of 5 taps, stride 3: (20 - 5) / 3 + 1 = 6 outputs.
    assert_eq!(
        flops(
            "conv1d",
            &[f32s(&[1, 6, 20]), f32s(&[4, 2, 5])],
            &[f32s(&[1, 4, 6])]
        ),
        Some(2 * (4 * 6) * (2 * 5))
    );
    // x [2, 4, 6, 6, 6], 8 filters of 2x2x2: 5 outputs a side.
    assert_eq!(
        flops(
            "conv3d",
            &[f32s(&[2, 4, 6, 6, 6]), f32s(&[8, 4, 2, 2, 2])],
            &[f32s(&[2, 8, 5, 5, 5])]
        ),
        Some(2 * (2 * 8 * 125) * (4 * 8))
    );
}

/// A transposed convolution scatters each input element into C_out/groups · kernel outputs:
/// x [2, 8, 5, 5], 2 groups, weight [8, 3, 3, 3] (6 output channels).
#[test]
fn a_transposed_convolution_counts_the_macs_of_each_input_element() {
    let (x, weight, out) = (
        f32s(&[2, 8, 5, 5]),
        f32s(&[8, 3, 3, 3]),
        f32s(&[2, 6, 11, 11]),
    );
    let expected = 2 * (2 * 8 * 5 * 5) * (3 * 3 * 3);
    assert_eq!(expected, 21_600);
    assert_eq!(
        flops(
            "conv_transpose2d",
            &[x.clone(), weight.clone()],
            &[out.clone()]
        ),
        Some(expected)
    );
    assert_eq!(
        flops(
            "conv_transpose2d_weight_backward",
            &[x.clone(), weight.clone(), out.clone()],
            &[weight.clone()]
        ),
        Some(expected)
    );
    // Its input's gradient has x's shape, and only the output tells it.
    assert_eq!(
        flops(
            "conv_transpose2d_x_backward",
            &[weight.clone(), out.clone()],
            &[x]
        ),
        Some(expected)
    );
    assert_eq!(
        flops("conv_transpose2d_x_backward", &[weight, out], &[]),
        None,
        "without its output, unknown"
    );
}

/// lhs [4, 1, 5, 6] · rhs [3, 6, 7]: the batch dims broadcast to [4, 3].
#[test]
fn a_batched_matmul_broadcasts_its_batch_dims() {
    assert_eq!(
        flops(
            "float_matmul",
            &[f32s(&[4, 1, 5, 6]), f32s(&[3, 6, 7])],
            &[]
        ),
        Some(2 * (4 * 3) * 5 * 6 * 7)
    );
    assert_eq!(
        flops("matmul", &[f32s(&[5, 6]), f32s(&[6, 7])], &[]),
        Some(2 * 5 * 6 * 7),
        "the IR's name, unbatched"
    );
    let ints = [TensorArg::new(&[5, 6], 8), TensorArg::new(&[6, 7], 8)];
    let work = work::of("int_matmul", &ints, &[TensorArg::new(&[5, 7], 8)], None);
    assert_eq!(work.flops, Some(2 * 5 * 6 * 7));
    assert_eq!(work.bytes, Some(8 * (30 + 42 + 35)), "at the dtype's size");
}

/// x [2, 3, 10] through a linear layer of weight [10, 4]: 6 rows of 10·4 multiply-adds, and its
/// two gradients the same.
#[test]
fn a_linear_layer_and_its_gradients_count_rows_times_in_times_out() {
    let (x, weight, out) = (f32s(&[2, 3, 10]), f32s(&[10, 4]), f32s(&[2, 3, 4]));
    let expected = Some(2 * 6 * 10 * 4);
    assert_eq!(
        flops("linear", &[x.clone(), weight.clone()], &[out.clone()]),
        expected
    );
    assert_eq!(
        flops(
            "linear_x_backward",
            &[weight.clone(), out.clone()],
            &[x.clone()]
        ),
        expected
    );
    assert_eq!(
        flops("linear_weight_backward", &[x, out.clone()], &[weight]),
        expected
    );
    assert_eq!(
        flops("linear_bias_backward", &[out], &[f32s(&[4])]),
        Some(24)
    );
}

/// q [2, 4, 8, 16], k [2, 4, 10, 16], v [2, 4, 10, 32]: 640 scores, each 16 multiply-adds, a
/// softmax (5), and 32 multiply-adds into the output.
#[test]
fn attention_counts_its_two_matmuls_and_its_softmax() {
    let (q, k, v) = (
        f32s(&[2, 4, 8, 16]),
        f32s(&[2, 4, 10, 16]),
        f32s(&[2, 4, 10, 32]),
    );
    assert_eq!(
        flops("attention", &[q, k, v], &[f32s(&[2, 4, 8, 32])]),
        Some(640 * (2 * 16 + 5 + 2 * 32))
    );
}

#[test]
fn pooling_counts_each_window_element_and_needs_the_window() {
    let (x, out) = (f32s(&[1, 3, 8, 8]), f32s(&[1, 3, 4, 4]));
    let work = work::of("avg_pool2d", &[x.clone()], &[out.clone()], Some(&[2, 2]));
    assert_eq!(work.flops, Some(48 * 4));
    assert_eq!(
        work::of(
            "max_pool2d_with_indices",
            &[x.clone()],
            &[out.clone()],
            Some(&[3, 3])
        )
        .flops,
        Some(48 * 9)
    );
    assert_eq!(
        work::of("avg_pool2d", &[x.clone()], &[out.clone()], None),
        Work::default(),
        "without the window, unknown"
    );
    assert_eq!(
        flops("adaptive_avg_pool2d", &[x], &[out]),
        Some(3 * 64),
        "every input element summed once"
    );
}

#[test]
fn elementwise_ops_count_one_per_element_of_the_broadcast_result() {
    let (a, b) = (f32s(&[4, 1, 3]), f32s(&[5, 1]));
    let work = work::of("float_add", &[a.clone(), b.clone()], &[], None);
    assert_eq!(work.flops, Some(4 * 5 * 3));
    assert_eq!(
        work.bytes,
        Some(4 * (12 + 5)),
        "what was given: no output here"
    );
    let work = work::of("float_add", &[a, b], &[f32s(&[4, 5, 3])], None);
    assert_eq!(work.bytes, Some(4 * (12 + 5 + 60)));
    for op in [
        "float_exp",
        "float_mul_scalar",
        "float_powi_scalar_impl",
        "gelu",
        "float_lower_elem",
    ] {
        assert_eq!(
            flops(op, &[f32s(&[7, 3])], &[f32s(&[7, 3])]),
            Some(21),
            "{op}"
        );
    }
    assert_eq!(
        flops(
            "relu_backward",
            &[f32s(&[7, 3]), f32s(&[7, 3])],
            &[f32s(&[7, 3])]
        ),
        Some(21)
    );
}

#[test]
fn reductions_count_one_per_input_element() {
    for op in [
        "float_sum",
        "float_sum_dim",
        "sum_dims",
        "float_max_dim_with_indices",
        "int_argmax",
        "float_cumsum",
    ] {
        assert_eq!(
            flops(op, &[f32s(&[4, 5])], &[f32s(&[4, 1])]),
            Some(20),
            "{op}"
        );
    }
}

#[test]
fn softmax_and_layer_norm_count_their_steps_per_element() {
    let x = f32s(&[3, 10]);
    assert_eq!(flops("softmax", &[x.clone()], &[x.clone()]), Some(150));
    assert_eq!(flops("log_softmax", &[x.clone()], &[x.clone()]), Some(150));
    assert_eq!(
        flops("layer_norm", &[x.clone(), f32s(&[10])], &[x]),
        Some(210)
    );
}

#[test]
fn views_are_no_work_and_copies_move_bytes_without_flops() {
    let x = f32s(&[4, 6]);
    for op in [
        "float_reshape",
        "float_transpose",
        "float_permute",
        "float_expand",
        "float_slice",
        "bool_reshape",
    ] {
        assert_eq!(
            work::of(op, &[x.clone()], &[x.clone()], None),
            Work::NONE,
            "{op}"
        );
    }
    let cat = work::of("float_cat", &[x.clone(), x.clone()], &[f32s(&[8, 6])], None);
    assert_eq!(
        cat,
        Work {
            flops: Some(0),
            bytes: Some(4 * 96)
        }
    );
    let half = TensorArg::new(&[4, 6], 2);
    assert_eq!(
        work::of("float_cast", &[x], &[half], None).bytes,
        Some(24 * 4 + 24 * 2),
        "read at f32, written at f16"
    );
}

#[test]
fn an_op_without_a_formula_is_unknown_never_zero() {
    let x = f32s(&[16]);
    for op in [
        "float_sort",
        "float_random",
        "interpolate",
        "deform_conv2d",
        "rfft",
        "fused elementwise[add, mul, exp]",
        "something_new",
    ] {
        let work = work::of(op, &[x.clone()], &[x.clone()], None);
        assert_eq!(work, Work::default(), "{op}");
        assert_eq!(work.intensity(), None, "{op}");
    }
}

#[test]
fn intensity_is_flops_per_byte() {
    let m = f32s(&[64, 64]);
    let work = work::of("float_matmul", &[m.clone(), m.clone()], &[m], None);
    assert_eq!(work.flops, Some(2 * 64 * 64 * 64));
    assert_eq!(work.bytes, Some(3 * 64 * 64 * 4));
    assert_eq!(work.intensity(), Some(2.0 * 64.0 / 12.0));
    assert_eq!(Work::NONE.intensity(), None, "no bytes, no intensity");
}
