//! `ActivationOps`, on f32 (with NaNs, infinities and signed zeros) and f64.

use burn_backend::Scalar;
use burn_backend::ops::ActivationOps;

use crate::harness::Cx;

pub const OPS: &[&str] = &[
    "leaky_relu",
    "relu",
    "relu_backward",
    "gelu",
    "prelu",
    "gelu_backward",
    "sigmoid",
    "sigmoid_backward",
    "hard_sigmoid",
    "log_sigmoid",
    "softmax",
    "log_softmax",
    "softmin",
    "log_sigmoid_backward",
];

pub fn run(cx: &mut Cx) {
    let shape = [3, 4, 5];
    let inputs = [
        (cx.floats_special(shape), cx.floats(shape)),
        (cx.floats(shape), cx.floats(shape)),
        (cx.floats_f64(shape), cx.floats_f64(shape)),
    ];
    for (x, grad) in &inputs {
        check_each!(cx; [relu, gelu, sigmoid, log_sigmoid](x.clone()));
        check_each!(cx; [
            relu_backward, gelu_backward, sigmoid_backward, log_sigmoid_backward,
        ](x.clone(), grad.clone()));
        for dim in [0, 2] {
            check_each!(cx; [softmax, log_softmax, softmin](x.clone(), dim));
        }
        check!(cx; leaky_relu(x.clone(), Scalar::from(0.01)));
        check!(cx; hard_sigmoid(x.clone(), Scalar::from(0.2), Scalar::from(0.5)));
        // PReLU with one slope per element, as from a broadcast weight.
        check!(cx; prelu(x.clone(), grad.clone()));
    }
}
