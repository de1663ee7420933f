//! Per-op numerics through `Profiled<NdArray>` (`[numerics]`): every op of forward, backward
//! and optimizer fingerprinted into `numerics.jsonl`; one op computed differently found as the
//! culprit, the ops after it as its propagators; the same program twice bit-identical; and
//! the op that made a NaN, in the forward and in the backward, named by `check_finite`.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, Once};

use burn::backend::{Autodiff, NdArray};
use burn::tensor::{Tensor, TensorData};
use burn_profiled::config::CheckFinite;
use burn_profiled::numerics::{self, Agreement, OpRecord, Tolerance};
use burn_profiled::{Profiled, RunStopped, Session, nvtx};
use model::{numerics_config, train};

mod support;

#[path = "numerics/model.rs"]
mod model;

#[path = "numerics/perturbed.rs"]
mod perturbed;

type B = Autodiff<Profiled<NdArray>>;

/// Sessions' tools are process-wide: one test at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    static ENABLE: Once = Once::new();
    ENABLE.call_once(|| nvtx::enable(nvtx::RangeConfig::new()));
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn run_dir(name: &str) -> PathBuf {
    let dir = support::profile_dir().join("numerics-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

const SCALES: [f32; 4] = [0.5, 0.8, 1.1, 0.9];

#[test]
fn every_op_of_forward_backward_and_optimizer_is_fingerprinted_with_its_phase_and_call_site() {
    let _serial = serial();
    let records = train::<B>(&run_dir("phases"), SCALES, 2);
    let steps: Vec<u64> = records.iter().map(|r| r.step).collect();
    assert!(steps.windows(2).all(|w| w[0] <= w[1]) && steps.contains(&1));
    let step0: Vec<&OpRecord> = records.iter().filter(|r| r.step == 0).collect();
    assert!(step0.len() >= 20, "{} ops", step0.len());
    for phase in ["forward", "backward", "optimizer"] {
        assert!(
            step0.iter().any(|r| r.phase == phase),
            "no op in {phase}: {:?}",
            step0.iter().map(|r| (&r.op, &r.phase)).collect::<Vec<_>>()
        );
    }
    let exp = step0
        .iter()
        .find(|r| r.op == "float_exp" && r.phase == "forward")
        .expect("the forward's exp");
    assert_eq!(exp.input_shapes, vec![vec![4, 8]]);
    assert_eq!(exp.outputs.len(), 1);
    assert_eq!(
        (exp.outputs[0].dtype.as_str(), exp.outputs[0].elements),
        ("f32", 32)
    );
    let site = exp.call_site.as_deref().expect("call sites are on");
    assert!(
        site.starts_with("model::train_with::{{closure}} (tests/numerics/model.rs:"),
        "{site}"
    );
    let seqs: Vec<u64> = records.iter().map(|r| r.seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "seq increases");
}

/// Each op's inputs are linked to the ops that made them: a block's `exp` to its scale, the
/// matmul to the data and, from the second step on, to the optimizer's update of the step
/// before.
#[test]
fn each_input_is_linked_to_the_op_that_made_it() {
    let _serial = serial();
    let records = train::<B>(&run_dir("links"), SCALES, 2);
    let by_seq =
        |seq: Option<u64>| -> Option<&OpRecord> { records.iter().find(|r| Some(r.seq) == seq) };
    let made_by = |record: &OpRecord| -> Vec<Option<(String, String)>> {
        let producers = record.producers.clone().expect("every input linked");
        let names = producers
            .into_iter()
            .map(|seq| by_seq(seq).map(|p| (p.op.clone(), p.phase.clone())));
        names.collect()
    };
    let forward = |step| {
        records
            .iter()
            .filter(move |r| r.step == step && r.phase == "forward")
    };
    let exps: Vec<&OpRecord> = forward(0).filter(|r| r.op == "float_exp").collect();
    assert_eq!(exps.len(), 4);
    for exp in exps {
        assert_eq!(
            made_by(exp),
            [Some(("float_mul_scalar".into(), "forward".into()))]
        );
    }
    let matmul = |step| {
        forward(step)
            .find(|r| r.op == "float_matmul")
            .expect("the matmul")
    };
    let from_data = Some(("float_from_data".to_string(), "-".to_string()));
    assert_eq!(made_by(matmul(0)), [from_data.clone(), from_data.clone()]);
    let updated = made_by(matmul(1));
    assert_eq!(updated[0], from_data);
    let (op, phase) = updated[1]
        .clone()
        .expect("the weight was made by the update");
    assert_eq!((op.as_str(), phase.as_str()), ("float_sub", "optimizer"));
}

#[test]
fn the_same_program_twice_is_bit_identical_op_by_op() {
    let _serial = serial();
    let a = train::<B>(&run_dir("same-a"), SCALES, 2);
    let b = train::<B>(&run_dir("same-b"), SCALES, 2);
    let comparison = numerics::compare(&a, &b, Tolerance::default());
    assert!(comparison.agrees());
    assert_eq!(comparison.counts(), [a.len(), 0, 0]);
    assert!(comparison.alignment.only_reference.is_empty());
}

/// The third block's scale changed by 1e-3 relative: its `float_mul_scalar` is the culprit
/// (its input agreed, its output did not), and every diverged op after it only carried the
/// difference on.
#[test]
fn one_op_computed_differently_is_the_culprit_and_the_ops_after_it_propagators() {
    let _serial = serial();
    let reference = train::<B>(&run_dir("culprit-reference"), SCALES, 1);
    let mut changed = SCALES;
    changed[2] *= 1.0 + 1e-3;
    let current = train::<B>(&run_dir("culprit-current"), changed, 1);
    let comparison = numerics::compare(&reference, &current, Tolerance::default());
    let culprit = comparison.culprit.expect("the runs diverge");
    assert!(culprit.inputs_agreed);
    let pair = &comparison.pairs[culprit.pair];
    let record = &reference[pair.reference];
    assert_eq!(
        (record.op.as_str(), record.phase.as_str()),
        ("float_mul_scalar", "forward")
    );
    let third_scale = reference
        .iter()
        .filter(|r| r.op == "float_mul_scalar")
        .nth(2)
        .expect("four scales");
    assert_eq!(
        record.seq, third_scale.seq,
        "the third block's scale, no other op"
    );
    assert_identical_before_and_propagators_after(&comparison);
    assert!(comparison.propagators >= 5, "{}", comparison.propagators);
}

/// Every aligned op before the culprit is bit for bit the same, and every diverged op after it
/// is counted as a propagator.
fn assert_identical_before_and_propagators_after(comparison: &numerics::Comparison) {
    let culprit = comparison.culprit.expect("the runs diverge");
    let before = &comparison.pairs[..culprit.pair];
    assert!(before.iter().all(|p| p.agreement == Agreement::Identical));
    let diverged_after = comparison.pairs[culprit.pair + 1..]
        .iter()
        .filter(|p| p.agreement == Agreement::Diverged)
        .count();
    assert_eq!(comparison.propagators, diverged_after);
}

/// A backend with one wrong kernel call (the third `exp` off by 1e-3 relative), against
/// NdArray: that `exp` is the culprit and no other op; every op before it is bit for bit
/// NdArray's, every diverged op after it a propagator (the forward's `tanh` squashes the
/// error below the tolerance; the backward carries it on). Re-run on NdArray from the same inputs
/// (`[numerics] capture`), the culprit's outputs differ from the backend's: the backend's
/// kernel, not the program.
#[test]
fn a_backend_with_one_wrong_kernel_is_caught_and_its_re_run_disagrees_with_it() {
    type Wrong = Autodiff<Profiled<perturbed::Perturbed>>;
    let _serial = serial();
    let reference = train::<B>(&run_dir("wrong-kernel-reference"), SCALES, 1);
    perturbed::reset();
    let current = train::<Wrong>(&run_dir("wrong-kernel-current"), SCALES, 1);
    assert!(current.len() >= 20, "{} ops", current.len());
    let comparison = numerics::compare(&reference, &current, Tolerance::default());
    let culprit = comparison.culprit.expect("the runs diverge");
    assert!(culprit.inputs_agreed);
    let pair = &comparison.pairs[culprit.pair];
    let third_exp = current
        .iter()
        .filter(|r| r.op == "float_exp")
        .nth(2)
        .expect("four exps");
    assert_eq!(current[pair.current].seq, third_exp.seq, "the third exp");
    assert_identical_before_and_propagators_after(&comparison);
    let text = numerics::render(&comparison, &reference, &current, 20);
    println!("{text}");
    assert!(comparison.propagators >= 3, "{text}");

    let mut config = numerics_config(CheckFinite::Off);
    config.numerics.capture = Some([third_exp.step, third_exp.seq]);
    let dir = run_dir("wrong-kernel-captured");
    perturbed::reset();
    model::train_with::<Wrong>(config, &dir, SCALES, 1);
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let captured: numerics::CapturedOp =
        serde_json::from_value(run["captured"].clone()).expect("captured");
    assert_eq!(captured.op, "float_exp");
    let (agreement, _) = captured.rerun_agreement().expect("re-run on NdArray");
    assert_eq!(agreement, Agreement::Diverged, "{captured}");
    assert!(
        captured
            .to_string()
            .contains("the backend computes this op otherwise than the reference"),
        "{captured}"
    );
}

/// The culprit's call, named by `burn-profiled numerics` (its step and `seq`), captured in a
/// run again with `[numerics] capture`: its inputs kept in `captured/`, its record in
/// `run.json` (NdArray itself is not re-run on NdArray).
#[test]
fn the_culprit_named_by_its_step_and_seq_is_captured_with_its_inputs() {
    let _serial = serial();
    let reference = train::<B>(&run_dir("capture-reference"), SCALES, 1);
    let mut changed = SCALES;
    changed[2] *= 1.0 + 1e-3;
    let current = train::<B>(&run_dir("capture-current"), changed, 1);
    let comparison = numerics::compare(&reference, &current, Tolerance::default());
    let culprit = &current[comparison.pairs[comparison.culprit.expect("diverged").pair].current];
    let mut config = numerics_config(CheckFinite::Off);
    config.numerics.capture = Some([culprit.step, culprit.seq]);
    let dir = run_dir("capture-again");
    model::train_with::<B>(config, &dir, changed, 1);
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let captured = &run["captured"];
    assert_eq!(captured["op"], "float_mul_scalar", "{captured:#}");
    assert_eq!(captured["seq"], culprit.seq);
    assert_eq!(
        captured["outputs"][0]["sum"], culprit.outputs[0].sum,
        "the same call"
    );
    assert!(
        captured.get("rerun").is_none(),
        "not re-run on NdArray itself"
    );
    let input = burn_profiled_core::dump::blob::read_npy(&dir.join("captured/input_0.npy"))
        .expect("its input is kept");
    assert_eq!(input.shape, [4, 8]);
}

/// Runs one step of `loss` on a parameter `w` under `check_finite`, and what `finish_iter` and
/// `run.json` said.
/// With `fingerprints` off, each output is checked by its sum alone (its data is read only when
/// the sum is not finite).
fn nan_run<F>(
    name: &str,
    (check_finite, fingerprints): (CheckFinite, bool),
    values: [f32; 4],
    loss: F,
) -> (Result<(), RunStopped>, serde_json::Value)
where
    F: Fn(Tensor<B, 1>) -> Tensor<B, 1>,
{
    let dir = run_dir(name);
    let device = Default::default();
    let mut config = numerics_config(check_finite);
    config.numerics.fingerprints = fingerprints;
    let mut session = Session::start::<B>(config, &device, &dir);
    let w =
        Tensor::<B, 1>::from_data(TensorData::new(values.to_vec(), [4]), &device).require_grad();
    let loss_value = nvtx::scope("forward", || loss(w.clone()));
    let grads = nvtx::scope("backward", || loss_value.backward());
    let _grad = w.grad(&grads);
    let ended = session.finish_iter();
    session.finish().expect("the run is written");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    (ended, run)
}

const VALUES: [f32; 4] = [0.0, 1.0, 4.0, -1.0];

/// `log` of a negative number: the forward's `float_log` made the NaN from finite inputs.
#[test]
fn a_nan_made_in_the_forward_is_blamed_on_the_op_that_made_it() {
    let _serial = serial();
    let (ended, run) = nan_run("nan-forward", (CheckFinite::Warn, true), VALUES, |w| {
        let shifted = w.add_scalar(0.5);
        let logs = shifted.log();
        logs.exp().sum()
    });
    assert_eq!(ended, Ok(()), "warn goes on");
    let found = &run["non_finite"];
    assert_eq!(found["op"], "float_log", "{found:#}");
    assert_eq!(found["phase"], "forward");
    assert_eq!(found["step"], 0);
    assert_eq!(found["inputs_finite"], true);
    assert_eq!(found["outputs"][0]["nan"], 1);
    let site = found["call_site"].as_str().unwrap();
    assert!(site.contains("tests/numerics.rs:"), "{site}");
    assert!(run.get("stopped_by").is_none());
    // Its input kept, to reproduce the op: `w + 0.5`.
    let input = support::profile_dir().join("numerics-tests/nan-forward/non_finite/input_0.npy");
    let kept = burn_profiled_core::dump::blob::read_npy(&input).expect("the input is kept");
    assert_eq!(kept.values_f64(), [0.5, 1.5, 4.5, -0.5]);
    let files = run["files"].as_array().unwrap();
    assert!(
        files
            .iter()
            .any(|f| f.as_str().unwrap().ends_with("non_finite")),
        "{files:?}"
    );
}

/// `sqrt` at 0 is finite, its gradient `g / (2 sqrt(0))` is not: the backward's op that divided
/// is named, not the forward's `sqrt` nor a later op that carried the Inf on.
#[test]
fn a_nan_made_in_the_backward_is_blamed_on_the_backward_op_that_made_it_and_stop_stops() {
    let _serial = serial();
    let (ended, run) = nan_run("nan-backward", (CheckFinite::Stop, false), VALUES, |w| {
        w.clamp_min(0.0).sqrt().sum()
    });
    let found = &run["non_finite"];
    assert_eq!(found["phase"], "backward", "{found:#}");
    assert_eq!(found["inputs_finite"], true);
    let op = found["op"].as_str().unwrap();
    assert!(
        [
            "float_div",
            "float_div_scalar",
            "float_recip",
            "float_powf_scalar"
        ]
        .contains(&op),
        "{op}"
    );
    let Err(RunStopped::NonFinite(stopped)) = ended else {
        panic!("check_finite = stop ends the step with the op: {ended:?}");
    };
    assert_eq!(stopped.op, op);
    let stopped_by = run["stopped_by"].as_str().unwrap();
    assert!(
        stopped_by.starts_with(&format!(
            "stopping the run at the first NaN or Inf: step 0: `{op}` in phase `backward`"
        )),
        "{stopped_by}"
    );
}

/// Outputs whose sum overflows `f32` while every element is finite are read whole, found
/// finite, and not reported.
#[test]
fn a_sum_past_the_range_of_f32_is_not_a_nan() {
    let _serial = serial();
    let huge = [3e38f32, 3e38, 1.0, 2.0];
    let (ended, run) = nan_run("overflowing-sum", (CheckFinite::Stop, false), huge, |w| {
        w.mul_scalar(1.0).clamp_max(1.0)
    });
    assert_eq!(ended, Ok(()));
    assert!(run.get("non_finite").is_none(), "{run:#}");
}

#[path = "numerics/adam_model.rs"]
mod adam_model;

/// A code change that inserts one op in the forward of a model trained with Adam (the
/// activation times 1.001): the culprit is that op's region in step 0's forward, not an op of
/// Adam's update whose small inputs "agreed" within the absolute tolerance.
#[test]
fn an_op_inserted_in_the_forward_is_the_culprits_region_not_an_optimizer_op() {
    use adam_model::{Change, train_adam};
    let _serial = serial();
    let reference = train_adam::<B>(&run_dir("adam-reference"), Change::None, 3);
    let current = train_adam::<B>(&run_dir("adam-inserted"), Change::Inserted, 3);
    let comparison = numerics::compare(&reference, &current, Tolerance::default());
    let text = numerics::render(&comparison, &reference, &current, 10);
    println!("{text}");
    let culprit = comparison.culprit.expect("the runs diverge");
    let pair = &comparison.pairs[culprit.pair];
    let (before, after) = (&reference[pair.reference], &current[pair.current]);
    assert_eq!(
        (before.step, before.phase.as_str()),
        (0, "forward"),
        "{text}"
    );
    assert!(culprit.inputs_agreed, "{text}");
    let region = &comparison.alignment.regions[culprit.pair];
    let inside: Vec<&str> = region
        .current
        .iter()
        .map(|&at| current[at].op.as_str())
        .collect();
    assert!(
        inside.contains(&"float_mul_scalar") || after.op == "float_mul_scalar",
        "the inserted op is the culprit's region: {inside:?}, {}\n{text}",
        after.op
    );
    let [covered_before, covered_after] = comparison.alignment.covered();
    assert!(covered_before * 100 >= reference.len() * 95, "{text}");
    assert!(covered_after * 100 >= current.len() * 95, "{text}");
}

/// The same for an op removed (no activation): the culprit is the removed op's region in step
/// 0's forward.
#[test]
fn an_op_removed_from_the_forward_is_the_culprits_region() {
    use adam_model::{Change, train_adam};
    let _serial = serial();
    let reference = train_adam::<B>(&run_dir("adam-reference-2"), Change::None, 2);
    let current = train_adam::<B>(&run_dir("adam-removed"), Change::Removed, 2);
    let comparison = numerics::compare(&reference, &current, Tolerance::default());
    let text = numerics::render(&comparison, &reference, &current, 10);
    let culprit = comparison.culprit.expect("the runs diverge");
    let pair = &comparison.pairs[culprit.pair];
    let before = &reference[pair.reference];
    assert_eq!(
        (before.step, before.phase.as_str()),
        (0, "forward"),
        "{text}"
    );
    let region = &comparison.alignment.regions[culprit.pair];
    let inside: Vec<&str> = region
        .reference
        .iter()
        .map(|&at| reference[at].op.as_str())
        .collect();
    assert!(
        inside.contains(&"relu") || before.op == "relu",
        "the removed relu is the culprit's region: {inside:?}, {}\n{text}",
        before.op
    );
}

/// The same program twice with Adam: every record paired, bit for bit.
#[test]
fn the_same_adam_program_twice_pairs_every_record() {
    use adam_model::{Change, train_adam};
    let _serial = serial();
    let a = train_adam::<B>(&run_dir("adam-same-a"), Change::None, 2);
    let b = train_adam::<B>(&run_dir("adam-same-b"), Change::None, 2);
    let comparison = numerics::compare(&a, &b, Tolerance::default());
    assert!(comparison.agrees());
    assert_eq!(comparison.counts(), [a.len(), 0, 0]);
}
