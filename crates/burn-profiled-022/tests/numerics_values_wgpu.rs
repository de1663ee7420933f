//! `[numerics]` on Burn 0.22 (wgpu, lavapipe without a GPU): its hooks hand over no block's
//! data, so what is recorded is what the program hands over: the loss
//! (`Session::record_loss`), the dumper's tensors and gradients. Named as Burn 0.21's edition
//! names them, so that a 0.22 run compares with a 0.21 run of the same model; `check_finite`
//! checks them and names the first that held a NaN.
//!
//! Its own process: a session's tools are process-wide (the two tests take turns).

use std::sync::{Mutex, PoisonError};

use burn::tensor::{Device, DeviceKind};
use burn_profiled_022::config::{CheckFinite, RuntimeConfig};
use burn_profiled_022::dump::{AddOptions, DumpType, Map, TensorDumper};
use burn_profiled_022::numerics::{self, Tolerance, file};
use burn_profiled_022::{RunStopped, Session};

mod support;
use support::mlp::{assert_is_the_golden_dump, mlp};

/// Burn 0.21's value records of the same two steps (`tests/numerics_across_burns.rs` of
/// burn-profiled holds them to 0.21's output).
const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../core/tests/golden/numerics_mlp_values.jsonl"
);

static ONE_SESSION: Mutex<()> = Mutex::new(());

fn json() -> AddOptions {
    AddOptions::new(DumpType::Json)
}

#[test]
fn a_burn_022_run_compares_with_a_burn_021_run_on_its_loss_and_dumps_bit_for_bit() {
    let _one = ONE_SESSION.lock().unwrap_or_else(PoisonError::into_inner);
    let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.numerics.fingerprints = true;
    config.numerics.check_finite = CheckFinite::Warn;
    let mut session = Session::start(config, &device, out.path().join("run"));
    let mut dumper = TensorDumper::new(out.path().join("dumps"));
    for _step in 0..2 {
        let model = mlp(&device);
        dumper
            .add_tensor_data("mlp", model.tensors(), json())
            .unwrap();
        dumper
            .add_grad_data("mlp", model.grad_inputs(), json())
            .unwrap();
        dumper.set_gradients(model.loss.clone()).unwrap();
        dumper.dump(true).unwrap();
        session.record_loss(&model.loss);
        session.finish_iter().unwrap();
    }
    let summary = session.finish().unwrap();
    assert!(summary.non_finite.is_none());
    assert_is_the_golden_dump(&out.path().join("dumps/1"));

    let run = file::read(&out.path().join("run")).unwrap();
    let burn_021 = file::read(GOLDEN.as_ref()).unwrap();
    let comparison = numerics::compare(&burn_021, &run, Tolerance::default());
    let text = numerics::render(&comparison, &burn_021, &run, 10);
    assert_eq!(
        text,
        "identical: 16 ops aligned in 2 steps, every statistic bit for bit\n"
    );
}

#[test]
fn check_finite_names_the_first_value_that_held_a_nan_and_stops_the_run() {
    let _one = ONE_SESSION.lock().unwrap_or_else(PoisonError::into_inner);
    let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.numerics.check_finite = CheckFinite::Stop;
    let mut session = Session::start(config, &device, out.path());
    let mut dumper = TensorDumper::new(out.path().join("dumps"));
    // Step 0 is finite; in step 1 the log of negative values makes NaN, dumped before the loss.
    for step in 0..2 {
        let model = mlp(&device);
        let shift = if step == 0 { 1.0 } else { -10.0 };
        let logits = (model.y.clone() + shift).log();
        let loss = logits.clone().mean();
        let tensors = Map::new().with("y", &model.y).with("logits", &logits);
        dumper.add_tensor_data("mlp", tensors, json()).unwrap();
        dumper.dump(true).unwrap();
        session.record_loss(&loss);
        match (step, session.finish_iter()) {
            (0, result) => result.unwrap(),
            (_, Err(RunStopped::NonFinite(found))) => {
                assert_eq!(
                    (found.step, found.op.as_str(), found.value),
                    (1, "dump:mlp.logits", true)
                );
                assert!(
                    found.to_string().starts_with(
                        "step 1: the dumped tensor `mlp.logits` in phase `-` held 8 NaN, 0 +Inf, \
                         0 -Inf of 8 elements; the op that made it was not checked"
                    ),
                    "{found}"
                );
            }
            (_, other) => panic!("step 1 must stop the run: {other:?}"),
        }
    }
    let summary = session.finish().unwrap();
    let found = summary.non_finite.expect("in run.json");
    assert_eq!(found.op, "dump:mlp.logits");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("run.json")).unwrap())
            .unwrap();
    assert_eq!(run["non_finite"]["value"], true);
    assert_eq!(run["non_finite"]["op"], "dump:mlp.logits");
}
