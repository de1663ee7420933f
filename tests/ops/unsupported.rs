//! The ops of `NOT_SUPPORTED_BY_NDARRAY`: NdArray panics in each. Through `Profiled` each must
//! still report exactly its own op (the guard finishes it while the panic unwinds) and panic
//! with NdArray's message, which shows `Profiled` ran NdArray's method and not a default body.

use burn_backend::ops::{FloatTensorOps, IntTensorOps, ModuleOps, QTensorOps};
use burn_std::IntDType;

use crate::harness::{Cx, int_tensor};
use crate::quantized::{per_tensor, quantized};

pub fn run(cx: &mut Cx) {
    let x = cx.floats([3, 6]);
    let i = cx.ints([3, 6], -9..10);
    let q = quantized(cx, [3, 6], per_tensor());
    check!(cx; panics float_argtopk(x.clone(), 1, 2, IntDType::I64));
    check!(cx; panics int_argtopk(i.clone(), 1, 2));
    check!(cx; panics q_argtopk(q.clone(), 1, 2, IntDType::I64));
    check!(cx; panics rfft(x.clone(), 1, None));
    let im = cx.floats([3, 4]);
    let re = cx.floats([3, 4]);
    check!(cx; panics irfft(re.clone(), im.clone(), 1, Some(6)));

    let log_probs = cx.floats([4, 1, 3]);
    let targets = int_tensor(vec![1, 2], [1, 2]);
    let input_lengths = int_tensor(vec![4], [1]);
    let target_lengths = int_tensor(vec![2], [1]);
    let grad = cx.floats([1]);
    check!(cx; panics ctc_loss_backward(log_probs.clone(), targets.clone(), input_lengths.clone(),
        target_lengths.clone(), grad.clone(), 0));
}
