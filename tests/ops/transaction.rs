//! `TransactionOps::tr_execute`, the device queries and moves of every tensor kind, and when
//! reads report their op.

use burn_backend::ops::{
    BoolTensorOps, FloatTensorOps, IntTensorOps, QTensorOps, TransactionOps, TransactionPrimitive,
};

use burn_std::IntDType;

use crate::harness::{Cx, DEV, Phase, Prof, record};
use crate::quantized::{per_tensor, quantized};

pub const OPS: &[&str] = &[
    "tr_execute",
    "float_device",
    "float_to_device",
    "int_device",
    "int_to_device",
    "bool_device",
    "bool_to_device",
    "q_device",
    "q_to_device",
];

pub fn run(cx: &mut Cx) {
    let floats = vec![cx.floats([2, 3]), cx.floats_f64([4])];
    let qfloats = vec![quantized(cx, [3, 4], per_tensor())];
    let ints = vec![cx.ints([5], -9..10), cx.ints([2, 2], 0..3)];
    let bools = vec![cx.bools([3, 2])];

    // The reads happen when the transaction's future is awaited, inside the recording.
    check!(cx; read tr_execute(TransactionPrimitive::new(floats.clone(), qfloats.clone(),
        ints.clone(), bools.clone())));
    check!(cx; read tr_execute(TransactionPrimitive::new(vec![], vec![], ints.clone(), vec![])));
    check!(cx; read tr_execute(TransactionPrimitive::new(vec![], vec![], vec![], vec![])));

    let (f, q, i, b) = (&floats[0], &qfloats[0], &ints[0], &bools[0]);
    check!(cx; float_device(f));
    check!(cx; float_to_device(f.clone(), &DEV));
    check!(cx; int_device(i));
    check!(cx; int_to_device(i.clone(), &DEV));
    check!(cx; bool_device(b));
    check!(cx; bool_to_device(b.clone(), &DEV));
    check!(cx; q_device(q));
    check!(cx; q_to_device(q.clone(), &DEV));
}

/// Asserts that the future `make` returns reports nothing until it is awaited, and then
/// reports exactly `op`.
fn assert_reports_when_awaited<F: Future>(op: &str, make: impl FnOnce() -> F) {
    let (future, on_call) = record(make);
    assert_eq!(on_call, [], "{op}: reported before its future was awaited");
    let (_, on_await) = record(|| burn_std::future::block_on(future));
    assert_eq!(on_await, [(op, Phase::Started), (op, Phase::Finished)]);
}

/// Reads (and `bool_argwhere`, which reads) report their op while their future is awaited.
#[test]
fn reads_report_when_awaited() {
    let mut cx = Cx::new("reads");
    let (f, i, b) = (cx.floats([2, 3]), cx.ints([4], 0..9), cx.bools([3, 3]));
    let q = quantized(&mut cx, [2, 4], per_tensor());
    assert_reports_when_awaited("float_into_data", || Prof::float_into_data(f.clone()));
    assert_reports_when_awaited("int_into_data", || Prof::int_into_data(i.clone()));
    assert_reports_when_awaited("bool_into_data", || Prof::bool_into_data(b.clone()));
    assert_reports_when_awaited("q_into_data", || Prof::q_into_data(q.clone()));
    assert_reports_when_awaited("bool_argwhere", || {
        Prof::bool_argwhere(b.clone(), IntDType::I64)
    });
    assert_reports_when_awaited("tr_execute", || {
        Prof::tr_execute(TransactionPrimitive::new(
            vec![f],
            vec![q],
            vec![i],
            vec![b],
        ))
    });
    cx.finish(&[]);
}
