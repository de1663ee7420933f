//! Every op of the forwarding table (`src/backend/table.rs`), called through `Profiled<NdArray>`:
//!
//! 1. completeness: the call reports exactly one op, itself (an op that fell back to a trait
//!    default body would report the ops that body calls instead);
//! 2. differential: its result is bit-identical to calling NdArray's op with the same inputs.
//!
//! One test per op family runs that family's checks; `every_forwarded_op_is_covered` reads the
//! table and requires each op to be checked by a family or listed in
//! [`NOT_SUPPORTED_BY_NDARRAY`]. Inputs come from a seeded RNG: set `OPS_SEED` to vary them (a
//! failure prints the seed that produced it).

#[macro_use]
#[path = "ops/harness.rs"]
mod harness;

#[path = "ops/activation.rs"]
mod activation;
#[path = "ops/bool_ops.rs"]
mod bool_ops;
#[path = "ops/float.rs"]
mod float;
#[path = "ops/int.rs"]
mod int;
#[path = "ops/module.rs"]
mod module;
#[path = "ops/quantized.rs"]
mod quantized;
#[path = "ops/transaction.rs"]
mod transaction;
#[path = "ops/unsupported.rs"]
mod unsupported;

use std::collections::BTreeSet;

use harness::Cx;

/// Ops of the table that NdArray 0.21 does not implement (they panic inside NdArray, with or
/// without `Profiled`), each with where and how NdArray refuses it.
/// `unsupported_ops_panic_like_ndarray` checks that each still forwards and panics as NdArray
/// does, so an NdArray upgrade that implements one fails there until it moves to a family.
const NOT_SUPPORTED_BY_NDARRAY: &[(&str, &str)] = &[
    (
        "float_argtopk",
        "burn-ndarray ops/tensor.rs: unimplemented!(\"float_argtopk not implemented for ndarray\")",
    ),
    (
        "int_argtopk",
        "burn-ndarray ops/int_tensor.rs: unimplemented!(\"argtopk not implemented for ndarray\")",
    ),
    (
        "q_argtopk",
        "default body (burn-backend) dequantizes and calls NdArray's float_argtopk: unimplemented!",
    ),
    (
        "ctc_loss_backward",
        "NdArray keeps has_ctc_loss_backward() == false; the default body is unreachable!()",
    ),
    (
        "rfft",
        "burn-ndarray ops/module.rs: todo!(\"rfft is not supported for ndarray\")",
    ),
    (
        "irfft",
        "burn-ndarray ops/module.rs: todo!(\"irfft is not supported for ndarray\")",
    ),
];

/// One `#[test]` per op family, and the families' declared ops for the coverage test.
macro_rules! families {
    ($($test:ident => $family:ident),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                let mut cx = Cx::new(stringify!($family));
                $family::run(&mut cx);
                cx.finish($family::OPS);
            }
        )*

        /// Each family and the ops it checks (its test fails unless it checks exactly these).
        const FAMILIES: &[(&str, &[&str])] = &[$((stringify!($family), $family::OPS)),*];
    };
}

families! {
    float_ops => float,
    int_ops => int,
    bool_tensor_ops => bool_ops,
    module_ops => module,
    activation_ops => activation,
    quantized_ops => quantized,
    transaction_and_device_ops => transaction,
}

#[test]
fn unsupported_ops_panic_like_ndarray() {
    let mut cx = Cx::new("unsupported");
    unsupported::run(&mut cx);
    let ops: Vec<&str> = NOT_SUPPORTED_BY_NDARRAY.iter().map(|(op, _)| *op).collect();
    cx.finish(&ops);
}

/// Methods of table.rs outside the `forward!` tables that are ops (each reports an event).
const HAND_WRITTEN_OPS: &[&str] = &["quantize", "q_matmul", "bool_argwhere", "tr_execute"];
/// Methods of table.rs that are not ops: they report nothing.
const NOT_OPS: &[&str] = &["has_ctc_loss_backward"];

/// `name` from a line `fn name(..`, `#[kind] fn name(..`.
fn fn_name(line: &str) -> Option<&str> {
    let line = line.trim_start();
    let line = match line.strip_prefix("#[") {
        Some(rest) => rest.split_once(']')?.1.trim_start(),
        None => line,
    };
    let rest = line.strip_prefix("fn ")?;
    let end = rest.find('(')?;
    Some(&rest[..end])
}

/// Every op of the forwarding table: the lines of its `forward!` blocks, and the hand-written
/// methods in [`HAND_WRITTEN_OPS`]. Panics on a hand-written method it does not know.
fn table_ops(table: &str) -> Vec<&str> {
    let mut ops = Vec::new();
    let mut in_forward = false;
    for line in table.lines() {
        let trimmed = line.trim();
        // (`@no_replay`: a table whose ops are not re-run on NdArray.)
        if trimmed == "forward! {" || trimmed == "forward! { @no_replay" {
            in_forward = true;
        } else if in_forward && trimmed == "}" {
            in_forward = false;
        } else if let Some(name) = fn_name(line) {
            if in_forward || HAND_WRITTEN_OPS.contains(&name) {
                ops.push(name);
            } else {
                assert!(
                    NOT_OPS.contains(&name),
                    "table.rs has a hand-written method `{name}` this test does not know: \
                     add it to HAND_WRITTEN_OPS (it reports an event) or NOT_OPS"
                );
            }
        }
    }
    ops
}

#[test]
fn every_forwarded_op_is_covered() {
    let table = table_ops(include_str!("../src/backend/table.rs"));
    let table_set: BTreeSet<&str> = table.iter().copied().collect();
    assert_eq!(
        table_set.len(),
        table.len(),
        "table.rs forwards an op twice"
    );
    for op in HAND_WRITTEN_OPS {
        assert!(
            table_set.contains(op),
            "hand-written op `{op}` not found in table.rs"
        );
    }

    let mut problems = Vec::new();
    let mut checked = BTreeSet::new();
    for (family, ops) in FAMILIES {
        for op in *ops {
            if !checked.insert(*op) {
                problems.push(format!(
                    "`{op}` is declared by two families (again by {family})"
                ));
            }
            if !table_set.contains(op) {
                problems.push(format!(
                    "family {family} declares `{op}`, which table.rs lacks"
                ));
            }
        }
    }
    let mut unsupported = BTreeSet::new();
    for (op, reason) in NOT_SUPPORTED_BY_NDARRAY {
        assert!(!reason.is_empty());
        if !unsupported.insert(*op) {
            problems.push(format!(
                "`{op}` is listed twice in NOT_SUPPORTED_BY_NDARRAY"
            ));
        }
        if checked.contains(op) {
            problems.push(format!(
                "`{op}` is both checked and listed as not supported"
            ));
        }
        if !table_set.contains(op) {
            problems.push(format!(
                "NOT_SUPPORTED_BY_NDARRAY lists `{op}`, which table.rs lacks"
            ));
        }
    }
    for op in &table {
        if !checked.contains(op) && !unsupported.contains(op) {
            problems.push(format!(
                "`{op}` is forwarded by table.rs but no family checks it \
                 and NOT_SUPPORTED_BY_NDARRAY does not list it"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "coverage problems:\n  {}",
        problems.join("\n  ")
    );
    println!(
        "{} ops in table.rs: {} checked by the families, {} not supported by NdArray",
        table.len(),
        checked.len(),
        unsupported.len()
    );
}
