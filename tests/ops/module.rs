//! `ModuleOps`: convolutions and their backward ops, pooling, interpolation, attention, norms,
//! losses, embeddings, linear. Backward ops get an output gradient shaped like the forward
//! op's output, which NdArray's forward op computes first (outside the recording).
//! (`ctc_loss_backward`, `rfft` and `irfft` are not supported by NdArray.)

use burn::backend::ndarray::NdArrayTensor;
use burn_backend::ops::{
    ActivationOps, AttentionModuleOptions, ConvOptions, ConvTransposeOptions, DeformConvOptions,
    InterpolateMode, InterpolateOptions, ModuleOps, UnfoldOptions,
};

use crate::harness::{Cx, Nd, dims, int_tensor};

pub const OPS: &[&str] = &[
    "embedding",
    "embedding_backward",
    "linear",
    "linear_x_backward",
    "linear_weight_backward",
    "linear_bias_backward",
    "conv1d",
    "conv1d_x_backward",
    "conv1d_weight_backward",
    "conv1d_bias_backward",
    "conv2d",
    "conv2d_x_backward",
    "conv2d_weight_backward",
    "conv2d_bias_backward",
    "deform_conv2d",
    "deform_conv2d_backward",
    "conv3d",
    "conv3d_x_backward",
    "conv3d_weight_backward",
    "conv3d_bias_backward",
    "conv_transpose1d",
    "conv_transpose1d_x_backward",
    "conv_transpose1d_weight_backward",
    "conv_transpose1d_bias_backward",
    "conv_transpose2d",
    "conv_transpose2d_x_backward",
    "conv_transpose2d_weight_backward",
    "conv_transpose2d_bias_backward",
    "conv_transpose3d",
    "conv_transpose3d_x_backward",
    "conv_transpose3d_weight_backward",
    "conv_transpose3d_bias_backward",
    "unfold4d",
    "avg_pool1d",
    "avg_pool1d_backward",
    "avg_pool2d",
    "avg_pool2d_backward",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool2d_backward",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool1d_backward",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool1d_with_indices_backward",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool2d_with_indices_backward",
    "interpolate",
    "interpolate_backward",
    "attention",
    "layer_norm",
    "ctc_loss",
];

pub fn run(cx: &mut Cx) {
    embedding_and_linear(cx);
    convolutions(cx);
    deformable_convolution(cx);
    pooling(cx);
    interpolation(cx);
    attention(cx);
    norms_and_losses(cx);
}

/// Random values shaped like `tensor`: the output gradient for a backward op.
fn grad_like(cx: &mut Cx, tensor: NdArrayTensor) -> NdArrayTensor {
    cx.floats(dims(&tensor))
}

fn embedding_and_linear(cx: &mut Cx) {
    let weights = cx.floats([10, 4]);
    let indices = cx.ints([3, 5], 0..10);
    check!(cx; embedding(weights.clone(), indices.clone()));
    let grad = cx.floats([3, 5, 4]);
    check!(cx; embedding_backward(weights.clone(), grad.clone(), indices.clone()));

    let x = cx.floats([3, 5, 4]);
    let weight = cx.floats([4, 6]);
    let bias = cx.floats([6]);
    for bias in [Some(bias.clone()), None] {
        check!(cx; linear(x.clone(), weight.clone(), bias.clone()));
    }
    let grad = cx.floats([3, 5, 6]);
    check!(cx; linear_x_backward(weight.clone(), grad.clone()));
    check!(cx; linear_weight_backward(x.clone(), grad.clone()));
    check!(cx; linear_bias_backward(grad.clone()));
}

/// Checks a convolution and its three backward ops on random inputs of the given shapes, with
/// and without bias:
///
/// ```text
/// check_conv!(cx, plain conv2d, x_backward, weight_backward, bias_backward;
///     x: [..], weight: [..], bias: [..], options: ConvOptions::new(..));
/// ```
///
/// The x-backward op of a `transposed` convolution takes no `x`.
macro_rules! check_conv {
    ($cx:expr, $kind:ident $conv:ident, $x_back:ident, $w_back:ident, $b_back:ident;
     x: $x:expr, weight: $w:expr, bias: $b:expr, options: $options:expr $(,)?) => {{
        let (x, weight, bias) = ($cx.floats($x), $cx.floats($w), $cx.floats($b));
        let options = $options;
        for b in [Some(bias.clone()), None] {
            check!($cx; $conv(x.clone(), weight.clone(), b.clone(), options.clone()));
        }
        let y = Nd::$conv(x.clone(), weight.clone(), Some(bias.clone()), options.clone());
        let grad = grad_like($cx, y);
        check_conv!(@x_backward $kind $cx, $x_back(x, weight, grad, options));
        check!($cx; $w_back(x.clone(), weight.clone(), grad.clone(), options.clone()));
        check!($cx; $b_back(x.clone(), bias.clone(), grad.clone()));
    }};
    (@x_backward plain $cx:expr, $op:ident($x:ident, $w:ident, $g:ident, $o:ident)) => {
        check!($cx; $op($x.clone(), $w.clone(), $g.clone(), $o.clone()))
    };
    (@x_backward transposed $cx:expr, $op:ident($x:ident, $w:ident, $g:ident, $o:ident)) => {
        check!($cx; $op($w.clone(), $g.clone(), $o.clone()))
    };
}

fn convolutions(cx: &mut Cx) {
    // Grouped, strided, padded and dilated where the op allows.
    check_conv!(cx, plain conv1d, conv1d_x_backward, conv1d_weight_backward, conv1d_bias_backward;
        x: [2, 4, 9], weight: [6, 2, 3], bias: [6], options: ConvOptions::new([2], [1], [2], 2));
    check_conv!(cx, plain conv2d, conv2d_x_backward, conv2d_weight_backward, conv2d_bias_backward;
        x: [2, 4, 7, 6], weight: [5, 4, 3, 3], bias: [5],
        options: ConvOptions::new([1, 1], [1, 1], [1, 1], 1));
    check_conv!(cx, plain conv2d, conv2d_x_backward, conv2d_weight_backward, conv2d_bias_backward;
        x: [2, 4, 7, 6], weight: [6, 2, 3, 2], bias: [6],
        options: ConvOptions::new([2, 1], [1, 0], [1, 2], 2));
    check_conv!(cx, plain conv3d, conv3d_x_backward, conv3d_weight_backward, conv3d_bias_backward;
        x: [1, 2, 5, 4, 6], weight: [3, 2, 2, 3, 2], bias: [3],
        options: ConvOptions::new([1, 2, 1], [1, 0, 1], [1, 1, 2], 1));

    check_conv!(cx, transposed conv_transpose1d, conv_transpose1d_x_backward,
        conv_transpose1d_weight_backward, conv_transpose1d_bias_backward;
        x: [2, 4, 5], weight: [4, 3, 3], bias: [6],
        options: ConvTransposeOptions::new([2], [1], [1], [1], 2));
    check_conv!(cx, transposed conv_transpose2d, conv_transpose2d_x_backward,
        conv_transpose2d_weight_backward, conv_transpose2d_bias_backward;
        x: [2, 4, 4, 3], weight: [4, 3, 3, 2], bias: [6],
        options: ConvTransposeOptions::new([2, 1], [1, 0], [1, 0], [1, 2], 2));
    check_conv!(cx, transposed conv_transpose3d, conv_transpose3d_x_backward,
        conv_transpose3d_weight_backward, conv_transpose3d_bias_backward;
        x: [1, 2, 3, 3, 2], weight: [2, 3, 2, 2, 2], bias: [3],
        options: ConvTransposeOptions::new([2, 1, 1], [0, 1, 0], [1, 0, 0], [1, 1, 1], 1));

    // unfold4d: the plain path (float_unfold) and the padded/dilated one (conv2d).
    let x = cx.floats([2, 3, 6, 5]);
    for (kernel, options) in [
        ([2, 3], UnfoldOptions::new([1, 1], [0, 0], [1, 1])),
        ([2, 2], UnfoldOptions::new([2, 1], [1, 0], [1, 2])),
    ] {
        check!(cx; unfold4d(x.clone(), kernel, options.clone()));
    }
}

fn deformable_convolution(cx: &mut Cx) {
    // 2 weight groups, 2 offset groups, 3x3 kernel, 5x5 output.
    let options = DeformConvOptions::new([1, 1], [1, 1], [1, 1], 2, 2);
    let (offset_shape, mask_shape) = ([1, 2 * 2 * 9, 5, 5], [1, 2 * 9, 5, 5]);
    let (x, weight) = (cx.floats([1, 4, 5, 5]), cx.floats([6, 2, 3, 3]));
    let (offset, mask) = (
        cx.floats_in(offset_shape, -1.5..1.5),
        cx.floats_in(mask_shape, 0.0..1.0),
    );
    let bias = cx.floats([6]);
    for mask in [Some(mask.clone()), None] {
        for bias in [Some(bias.clone()), None] {
            check!(cx; deform_conv2d(x.clone(), offset.clone(), weight.clone(), mask.clone(),
                bias.clone(), options.clone()));
        }
    }

    // NdArray sums the input gradient with atomic adds from parallel tasks, so the order of the
    // additions may vary from run to run. With whole-number offsets (bilinear weights of exactly
    // 0 or 1), small integer values and masks of 0, 1/2 or 1, every partial sum is exact and the
    // order cannot change the result.
    let (x, weight) = (
        cx.floats_coarse([1, 4, 5, 5]),
        cx.floats_coarse([6, 2, 3, 3]),
    );
    let (grad, bias) = (cx.floats_coarse([1, 6, 5, 5]), cx.floats_coarse([6]));
    let offset = cx.floats_of(offset_shape, &[-1.0, 0.0, 1.0]);
    let mask = cx.floats_of(mask_shape, &[0.0, 0.5, 1.0]);
    for mask in [Some(mask.clone()), None] {
        for bias in [Some(bias.clone()), None] {
            check!(cx; deform_conv2d_backward(x.clone(), offset.clone(), weight.clone(),
                mask.clone(), bias.clone(), grad.clone(), options.clone()));
        }
    }
}

fn pooling(cx: &mut Cx) {
    let x1 = cx.floats([2, 3, 9]);
    let x2 = cx.floats([2, 3, 7, 6]);
    for ceil_mode in [false, true] {
        for count_include_pad in [true, false] {
            let y = Nd::avg_pool1d(x1.clone(), 3, 2, 1, count_include_pad, ceil_mode);
            let grad = grad_like(cx, y);
            check!(cx; avg_pool1d(x1.clone(), 3, 2, 1, count_include_pad, ceil_mode));
            check!(cx; avg_pool1d_backward(x1.clone(), grad.clone(), 3, 2, 1, count_include_pad,
                ceil_mode));

            let (k, s, p) = ([3, 2], [2, 2], [1, 0]);
            let y = Nd::avg_pool2d(x2.clone(), k, s, p, count_include_pad, ceil_mode);
            let grad = grad_like(cx, y);
            check!(cx; avg_pool2d(x2.clone(), k, s, p, count_include_pad, ceil_mode));
            check!(cx; avg_pool2d_backward(x2.clone(), grad.clone(), k, s, p, count_include_pad,
                ceil_mode));
        }

        for dilation in [1, 2] {
            check!(cx; max_pool1d(x1.clone(), 3, 2, 1, dilation, ceil_mode));
            check!(cx; max_pool1d_with_indices(x1.clone(), 3, 2, 1, dilation, ceil_mode));
            let pooled = Nd::max_pool1d_with_indices(x1.clone(), 3, 2, 1, dilation, ceil_mode);
            let grad = grad_like(cx, pooled.output);
            check!(cx; max_pool1d_with_indices_backward(x1.clone(), 3, 2, 1, dilation, ceil_mode,
                grad.clone(), pooled.indices.clone()));
        }
        for dilation in [[1, 1], [1, 2]] {
            let (k, s, p) = ([3, 2], [2, 1], [1, 0]);
            check!(cx; max_pool2d(x2.clone(), k, s, p, dilation, ceil_mode));
            check!(cx; max_pool2d_with_indices(x2.clone(), k, s, p, dilation, ceil_mode));
            let pooled = Nd::max_pool2d_with_indices(x2.clone(), k, s, p, dilation, ceil_mode);
            let grad = grad_like(cx, pooled.output);
            check!(cx; max_pool2d_with_indices_backward(x2.clone(), k, s, p, dilation, ceil_mode,
                grad.clone(), pooled.indices.clone()));
        }
    }

    for size in [4, 9, 12] {
        check!(cx; adaptive_avg_pool1d(x1.clone(), size));
        let grad = grad_like(cx, Nd::adaptive_avg_pool1d(x1.clone(), size));
        check!(cx; adaptive_avg_pool1d_backward(x1.clone(), grad.clone()));
    }
    for size in [[3, 4], [7, 6], [9, 2]] {
        check!(cx; adaptive_avg_pool2d(x2.clone(), size));
        let grad = grad_like(cx, Nd::adaptive_avg_pool2d(x2.clone(), size));
        check!(cx; adaptive_avg_pool2d_backward(x2.clone(), grad.clone()));
    }
}

fn interpolation(cx: &mut Cx) {
    let x = cx.floats([2, 3, 5, 4]);
    for size in [[7, 6], [3, 2]] {
        for mode in [
            InterpolateMode::Nearest,
            InterpolateMode::Bilinear,
            InterpolateMode::Bicubic,
            InterpolateMode::Lanczos3,
        ] {
            for align_corners in [true, false] {
                let options =
                    InterpolateOptions::new(mode.clone()).with_align_corners(align_corners);
                check!(cx; interpolate(x.clone(), size, options.clone()));
            }
        }
        // NdArray has the backward op for nearest only.
        let options = InterpolateOptions::new(InterpolateMode::Nearest);
        let grad = grad_like(cx, Nd::interpolate(x.clone(), size, options.clone()));
        check!(cx; interpolate_backward(x.clone(), grad.clone(), size, options.clone()));
    }
}

fn attention(cx: &mut Cx) {
    let query = cx.floats([2, 2, 4, 8]);
    let key = cx.floats([2, 2, 6, 8]);
    let value = cx.floats([2, 2, 6, 5]);
    let mask = cx.bools([2, 2, 4, 6]);
    let bias = cx.floats([2, 2, 4, 6]);
    let plain = AttentionModuleOptions::default();
    let tuned = AttentionModuleOptions {
        scale: Some(0.3),
        softcap: Some(5.0),
        is_causal: false,
    };
    let causal = AttentionModuleOptions {
        is_causal: true,
        ..plain
    };
    for options in [plain, tuned, causal] {
        check!(cx; attention(query.clone(), key.clone(), value.clone(), None, None, options));
        check!(cx; attention(query.clone(), key.clone(), value.clone(), Some(mask.clone()),
            Some(bias.clone()), options));
    }
}

fn norms_and_losses(cx: &mut Cx) {
    let x = cx.floats([3, 4, 6]);
    let gamma = cx.floats([6]);
    let beta = cx.floats([6]);
    for beta in [Some(beta.clone()), None] {
        check!(cx; layer_norm(x.clone(), gamma.clone(), beta.clone(), 1e-5));
    }

    // CTC: log-probabilities [T, N, C], targets [N, S] without the blank (0).
    let log_probs = Nd::log_softmax(cx.floats([8, 3, 5]), 2);
    let targets = cx.ints([3, 4], 1..5);
    let input_lengths = int_tensor(vec![8, 6, 7], [3]);
    let target_lengths = int_tensor(vec![4, 2, 3], [3]);
    check!(cx; ctc_loss(log_probs.clone(), targets.clone(), input_lengths.clone(),
        target_lengths.clone(), 0));
}
