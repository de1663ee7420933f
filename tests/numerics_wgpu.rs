//! Per-op numerics on CubeCL's real device thread (burn's `Wgpu` on Mesa's lavapipe): the same
//! program on NdArray and on `Profiled<Wgpu>` aligns op for op and agrees within the default
//! tolerance, though not bit for bit; on `fused::Wgpu`, the ops of fused blocks whose outputs
//! leave the block align with the same ops unfused.
#![cfg(feature = "wgpu")]

use burn::backend::{Autodiff, NdArray, Wgpu};
use burn_profiled::numerics::{self, Agreement, Tolerance};
use burn_profiled::{Profiled, fused};

mod support;

#[path = "numerics/model.rs"]
mod model;

#[path = "numerics/adam_model.rs"]
mod adam_model;

#[path = "numerics/perturbed.rs"]
mod perturbed;

const SCALES: [f32; 4] = [0.5, 0.8, 1.1, 0.9];

/// Sessions' tools are process-wide: one test at a time.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    static ENABLE: std::sync::Once = std::sync::Once::new();
    ENABLE.call_once(|| burn_profiled::nvtx::enable(burn_profiled::nvtx::RangeConfig::new()));
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn ndarray_and_wgpu_align_op_for_op_and_agree_within_the_default_tolerance() {
    let root = support::profile_dir().join("numerics-wgpu-tests");
    let _ = std::fs::remove_dir_all(&root);
    let _serial = serial();
    let reference = model::train::<Autodiff<Profiled<NdArray>>>(&root.join("ndarray"), SCALES, 2);
    let current = model::train::<Autodiff<Profiled<Wgpu>>>(&root.join("wgpu"), SCALES, 2);
    let comparison = numerics::compare(&reference, &current, Tolerance::default());
    let text = numerics::render(&comparison, &reference, &current, 10);
    assert!(comparison.agrees(), "{text}");
    assert!(comparison.alignment.only_reference.is_empty(), "{text}");
    assert!(comparison.alignment.only_current.is_empty(), "{text}");
    assert_eq!(comparison.pairs.len(), reference.len());
    let [identical, within, diverged] = comparison.counts();
    assert_eq!(diverged, 0);
    assert!(
        within > 0,
        "two backends' f32 differ somewhere: {identical} identical"
    );
    println!("{text}");
    let same = comparison
        .pairs
        .iter()
        .filter(|p| p.agreement == Agreement::Identical);
    println!(
        "{} of {} ops bit for bit",
        same.count(),
        comparison.pairs.len()
    );
}

#[test]
fn a_fused_blocks_outputs_align_with_the_same_ops_unfused_within_the_default_tolerance() {
    let _serial = serial();
    let root = support::profile_dir().join("numerics-fused-tests");
    let _ = std::fs::remove_dir_all(&root);
    let unfused = model::train::<Autodiff<Profiled<Wgpu>>>(&root.join("unfused"), SCALES, 2);
    let fused = model::train::<Autodiff<fused::Wgpu>>(&root.join("fused"), SCALES, 2);
    let comparison = numerics::compare(&unfused, &fused, Tolerance::default());
    let text = numerics::render(&comparison, &unfused, &fused, 10);
    println!("{text}");
    assert!(comparison.agrees(), "{text}");
    // The ops whose outputs stayed in a block's registers are aligned, with nothing to compare.
    assert!(comparison.not_observed() > 0, "{text}");
    let [identical, within, _] = comparison.counts();
    assert!(identical + within >= 20, "{text}");
    let aligned: Vec<&str> = comparison
        .pairs
        .iter()
        .map(|pair| fused[pair.current].op.as_str())
        .collect();
    for op in ["float_matmul", "float_exp", "float_tanh"] {
        assert!(aligned.contains(&op), "{op} aligned: {aligned:?}");
    }
    // Fusion registers a few ops as others (`powi_scalar` as `mul`, `transpose` as
    // `swap_dims`): those, and only those, stay unaligned.
    assert!(
        comparison.alignment.only_current.len() * 5 <= fused.len(),
        "nearly every fused record aligned: {text}"
    );
}

/// `check_finite` on `Profiled<Wgpu>` reads its sums in batches, not one per op: the NaN made
/// by `log` in the second step is still named, with that step and its call site, when the
/// batch is read at the step's end; the more than 64 ops before it fill whole batches. The
/// same with fingerprints on, whose statistics are reduced on the device and read in batches
/// too: the NaN counted there, its outputs read whole once found.
#[test]
fn check_finite_on_wgpu_reads_sums_in_batches_and_names_the_op_and_step_that_made_the_nan() {
    use burn::tensor::{Tensor, TensorData};
    use burn_profiled::Session;
    use burn_profiled::config::CheckFinite;

    type B = Autodiff<Profiled<Wgpu>>;
    let _serial = serial();
    for fingerprints in [false, true] {
        let dir = support::profile_dir().join(format!("numerics-wgpu-nan-{fingerprints}"));
        let _ = std::fs::remove_dir_all(&dir);
        let device = Default::default();
        let mut config = model::numerics_config(CheckFinite::Warn);
        config.numerics.fingerprints = fingerprints;
        let mut session = Session::start::<B>(config, &device, &dir);
        for shift in [0.5f32, -2.0] {
            let w = Tensor::<B, 1>::from_data(
                TensorData::new(vec![0.0f32, 1.0, 4.0, 2.0], [4]),
                &device,
            )
            .require_grad();
            let mut h = w.clone();
            for _ in 0..40 {
                h = h.mul_scalar(0.99).add_scalar(0.01);
            }
            let logs = h.add_scalar(shift).log();
            let grads = logs.exp().sum().backward();
            let _grad = w.grad(&grads);
            session.finish_iter().expect("warn goes on");
        }
        session.finish().expect("the run is written");
        let run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
        let found = &run["non_finite"];
        assert_eq!(found["op"], "float_log", "{found:#}");
        assert_eq!(
            found["step"], 1,
            "the step it ran in, not the next: {found:#}"
        );
        assert_eq!(found["inputs_finite"], true);
        // log(h - 2): three of the four elements are below 2 after 40 steps towards 1.
        assert_eq!(found["outputs"][0]["nan"], 3);
        let site = found["call_site"].as_str().unwrap();
        assert!(site.contains("tests/numerics_wgpu.rs:"), "{site}");
        // Run again on NdArray with the same inputs: the same three NaN, the op's numerics.
        let rerun = &found["rerun"];
        assert_eq!(rerun["backend"], "ndarray", "{found:#}");
        assert_eq!(rerun["error"], serde_json::Value::Null);
        assert_eq!(rerun["outputs"][0]["nan"], 3);
        if fingerprints {
            let records = burn_profiled::numerics::file::read(&dir).unwrap();
            let log = records.iter().find(|r| r.op == "float_log" && r.step == 1);
            assert_eq!(
                log.map(|r| r.outputs[0].nan),
                Some(3),
                "counted on the device"
            );
        }
    }
}

/// The first Inf is `exp` in f16 on `Profiled<Wgpu>` (e^12 is past f16's range); re-run on
/// NdArray, which computes it in f32, it is finite: the run says so, and that the dtypes
/// differ.
#[test]
fn an_op_that_overflows_in_f16_is_re_run_on_ndarray_and_found_finite_there() {
    use burn::tensor::{FloatDType, Tensor, TensorData};
    use burn_profiled::Session;
    use burn_profiled::config::CheckFinite;

    type B = Profiled<Wgpu>;
    let _serial = serial();
    let dir = support::profile_dir().join("numerics-wgpu-f16");
    let _ = std::fs::remove_dir_all(&dir);
    let device = Default::default();
    let mut config = model::numerics_config(CheckFinite::Warn);
    config.numerics.fingerprints = false;
    let mut session = Session::start::<B>(config, &device, &dir);
    let x = Tensor::<B, 1>::from_data(TensorData::new(vec![1.0f32, 12.0], [2]), &device)
        .cast(FloatDType::F16);
    let _ = x.exp().into_data();
    session.finish_iter().expect("warn goes on");
    session.finish().expect("the run is written");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let found = &run["non_finite"];
    assert_eq!(found["op"], "float_exp", "{found:#}");
    assert_eq!(found["outputs"][0]["dtype"], "f16");
    assert_eq!(found["outputs"][0]["pos_inf"], 1);
    let rerun = &found["rerun"];
    assert_eq!(rerun["error"], serde_json::Value::Null, "{rerun:#}");
    assert_eq!(rerun["outputs"][0]["dtype"], "f32", "{rerun:#}");
    assert_eq!(rerun["outputs"][0]["pos_inf"], 0, "{rerun:#}");
    assert_eq!(
        rerun["outputs"][0]["max"].as_f64().map(f64::round),
        Some(162755.0)
    );
}

/// A change in a fused run is still found against the unfused reference: the third block's
/// scale off by 1e-3 is the culprit (`scale, exp, tanh` fuse into one block, of which the
/// outputs that leave it are observed), and nothing before it diverged.
#[test]
fn a_changed_scale_in_a_fused_run_is_found_against_the_unfused_reference() {
    let _serial = serial();
    let root = support::profile_dir().join("numerics-fused-culprit");
    let _ = std::fs::remove_dir_all(&root);
    let unfused = model::train::<Autodiff<Profiled<Wgpu>>>(&root.join("unfused"), SCALES, 1);
    let mut changed = SCALES;
    changed[2] *= 1.0 + 1e-3;
    let fused = model::train::<Autodiff<fused::Wgpu>>(&root.join("fused"), changed, 1);
    let comparison = numerics::compare(&unfused, &fused, Tolerance::default());
    let text = numerics::render(&comparison, &unfused, &fused, 10);
    println!("{text}");
    let culprit = comparison.culprit.expect("the runs diverge");
    assert!(culprit.inputs_agreed, "{text}");
    let pair = &comparison.pairs[culprit.pair];
    let op = unfused[pair.reference].op.as_str();
    // Autodiff keeps the scale's output for the backward: it leaves the block, and is seen.
    assert_eq!(op, "float_mul_scalar", "{text}");
    // The culprit is in the third block: two `tanh`s of the forward came before it, and agreed.
    let forward_tanhs_before = unfused[..pair.reference]
        .iter()
        .filter(|r| r.op == "float_tanh" && r.phase == "forward")
        .count();
    assert_eq!(forward_tanhs_before, 2, "{text}");
    assert!(
        comparison.pairs[..culprit.pair]
            .iter()
            .all(|p| p.agreement != Agreement::Diverged)
    );
}

/// The culprit's call captured on `Profiled<Wgpu>` (`[numerics] capture`), and re-run on
/// NdArray from the same inputs: a scale is computed alike there, so the difference is the
/// program's, not the backend's.
#[test]
fn a_captured_call_on_wgpu_is_re_run_on_ndarray_and_agrees() {
    use burn_profiled::config::CheckFinite;

    let _serial = serial();
    let root = support::profile_dir().join("numerics-wgpu-capture");
    let _ = std::fs::remove_dir_all(&root);
    let reference = model::train::<Autodiff<Profiled<Wgpu>>>(&root.join("reference"), SCALES, 1);
    let mut changed = SCALES;
    changed[2] *= 1.0 + 1e-3;
    let current = model::train::<Autodiff<Profiled<Wgpu>>>(&root.join("current"), changed, 1);
    let comparison = numerics::compare(&reference, &current, Tolerance::default());
    let culprit = &current[comparison.pairs[comparison.culprit.expect("diverged").pair].current];
    assert_eq!(culprit.op, "float_mul_scalar");
    let mut config = model::numerics_config(CheckFinite::Off);
    config.numerics.capture = Some([culprit.step, culprit.seq]);
    let dir = root.join("again");
    model::train_with::<Autodiff<Profiled<Wgpu>>>(config, &dir, changed, 1);
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let captured: burn_profiled::numerics::CapturedOp =
        serde_json::from_value(run["captured"].clone()).expect("captured");
    assert_eq!(
        (captured.op.as_str(), captured.seq),
        ("float_mul_scalar", culprit.seq)
    );
    let rerun = captured.rerun.as_ref().expect("re-run on NdArray");
    assert_eq!((rerun.backend.as_str(), &rerun.error), ("ndarray", &None));
    let (agreement, _) = captured.rerun_agreement().expect("compared");
    assert_ne!(agreement, Agreement::Diverged, "{captured}");
    println!("{captured}");
}

/// A fusion bug on purpose: the output of one fused block of step 0's forward scaled by
/// `1 + 1e-3` after it ran (`fused::make_block_wrong`, a test-only hook), against the same
/// program unfused. The first block is the forward's (`fused matmul[matmul, mul_scalar, exp,
/// tanh, ...]`), whose last output is its last `tanh`: that `tanh` is the culprit, in step 0
/// and the forward, at its call site, its inputs agreed, nothing before it diverged, and the
/// ops after it are propagators.
#[test]
fn a_wrong_fused_block_is_the_culprit_in_its_step_and_phase() {
    use std::sync::Arc;
    let _serial = serial();
    let root = support::profile_dir().join("numerics-wrong-block");
    let _ = std::fs::remove_dir_all(&root);
    let unfused = model::train::<Autodiff<Profiled<Wgpu>>>(&root.join("unfused"), SCALES, 2);
    let started = Arc::new(support::Started::default());
    let observing = burn_profiled::probe::observe(started.clone());
    fused::make_block_wrong(0);
    let fused = model::train::<Autodiff<fused::Wgpu>>(&root.join("fused"), SCALES, 2);
    drop(observing);
    let first_block = (started.0.lock().unwrap().iter())
        .map(|(name, _)| *name)
        .find(|name| name.starts_with("fused "))
        .expect("a block ran");
    assert!(
        first_block.starts_with("fused matmul[matmul, mul_scalar, exp, tanh"),
        "{first_block}"
    );

    let comparison = numerics::compare(&unfused, &fused, Tolerance::default());
    let text = numerics::render(&comparison, &unfused, &fused, 10);
    println!("wrong block: {first_block}\n{text}");
    let culprit = comparison.culprit.expect("the runs diverge");
    assert!(culprit.inputs_agreed, "{text}");
    let pair = &comparison.pairs[culprit.pair];
    let (before, after) = (&unfused[pair.reference], &fused[pair.current]);
    let last_forward_tanh = fused
        .iter()
        .rfind(|r| r.step == 0 && r.phase == "forward" && r.op == "float_tanh")
        .expect("the forward's tanhs");
    assert_eq!(
        after.seq, last_forward_tanh.seq,
        "the block's last output: {text}"
    );
    assert_eq!((after.step, after.phase.as_str()), (0, "forward"), "{text}");
    assert_eq!(before.op, "float_tanh", "{text}");
    let site = before.call_site.as_deref().unwrap_or("-");
    assert!(
        site.starts_with("model::train_with::{{closure}} (tests/numerics/model.rs:"),
        "{text}"
    );
    assert!(
        comparison.pairs[..culprit.pair]
            .iter()
            .all(|p| p.agreement != Agreement::Diverged),
        "{text}"
    );
    assert!(comparison.propagators > 0, "{text}");
}

/// Tensors a data-loading thread makes ahead of the steps, on CubeCL's unfused backend, are
/// fingerprinted as their data. Read with the session's batch at a step's end, two batches of
/// the train example's loader once came back zeros on lavapipe (and `burn-profiled numerics`
/// blamed the batch); they are now read on the thread that made them. That race did not
/// show again on demand: this holds the behaviour, it does not reproduce the race.
#[test]
fn a_tensor_made_on_another_thread_is_fingerprinted_as_its_data() {
    use burn::tensor::{Tensor, TensorData};
    type B = Autodiff<Profiled<Wgpu>>;
    const STEPS: usize = 4;
    let _serial = serial();
    let root = support::profile_dir().join("numerics-loader-thread");
    let _ = std::fs::remove_dir_all(&root);
    let device = Default::default();
    let mut session = burn_profiled::Session::start::<B>(
        model::numerics_config(burn_profiled::config::CheckFinite::Off),
        &device,
        &root,
    );
    let values: Vec<f32> = (0..64).map(|i| i as f32 * 0.5 - 3.0).collect();
    let expected = numerics::Fingerprint::of(&values, &[8, 8]);
    // As a data loader does: batches made ahead, two waiting, each consumed by the step.
    let (batches, received) = std::sync::mpsc::sync_channel(2);
    let data = values.clone();
    let loader = std::thread::spawn(move || {
        for _ in 0..STEPS {
            let batch = Tensor::<B, 2>::from_data(
                TensorData::new(data.clone(), [8, 8]),
                &Default::default(),
            );
            if batches.send(batch).is_err() {
                return;
            }
        }
    });
    for batch in received {
        let _ = batch.mul_scalar(2.0).exp().sum();
        session.finish_iter().expect("no limit set");
    }
    loader.join().expect("the loader thread");
    session.finish().expect("the run is written");
    let records = numerics::file::read(&root).expect("numerics.jsonl reads back");
    let made: Vec<&numerics::OpRecord> = records
        .iter()
        .filter(|r| {
            r.op == "float_from_data" && r.outputs.first().is_some_and(|o| o.shape == [8, 8])
        })
        .collect();
    assert_eq!(made.len(), STEPS, "{records:#?}");
    for record in made {
        assert_eq!(record.outputs[0], expected, "the data, not zeros");
    }
}

/// Whether at least 95% of each side's records are paired or inside a paired region.
fn covers_95_percent(comparison: &numerics::Comparison, a: usize, b: usize) -> bool {
    let [covered_a, covered_b] = comparison.alignment.covered();
    covered_a * 100 >= a * 95 && covered_b * 100 >= b * 95
}

/// The Adam model (two `Linear`s, `relu`, Adam), nothing wrong: fused twice, the same records
/// (autotune's trials are not records), every one paired bit for bit; NdArray against
/// unfused CubeCL and unfused against fused, where composite ops (`linear`, `relu`) meet
/// their decompositions, agree with at least 95% of each run's records paired or inside a
/// paired region.
#[test]
fn the_same_adam_program_on_three_backends_agrees_and_pairs_95_percent_of_its_records() {
    use adam_model::{Change, train_adam};
    let _serial = serial();
    let root = support::profile_dir().join("numerics-adam-backends");
    let _ = std::fs::remove_dir_all(&root);
    let ndarray = train_adam::<Autodiff<Profiled<NdArray>>>(&root.join("ndarray"), Change::None, 2);
    let unfused = train_adam::<Autodiff<Profiled<Wgpu>>>(&root.join("unfused"), Change::None, 2);
    let fused = train_adam::<Autodiff<fused::Wgpu>>(&root.join("fused"), Change::None, 2);
    let again = train_adam::<Autodiff<fused::Wgpu>>(&root.join("fused-again"), Change::None, 2);

    assert_eq!(
        fused.len(),
        again.len(),
        "the fused run's records, run to run"
    );
    let same = numerics::compare(&fused, &again, Tolerance::default());
    assert!(
        same.agrees(),
        "{}",
        numerics::render(&same, &fused, &again, 10)
    );
    assert_eq!(same.counts()[0] + same.not_observed(), fused.len());

    for (name, reference, current) in [
        ("NdArray against unfused CubeCL", &ndarray, &unfused),
        ("unfused against fused", &unfused, &fused),
    ] {
        let comparison = numerics::compare(reference, current, Tolerance::default());
        let text = numerics::render(&comparison, reference, current, 10);
        println!("{name}:\n{text}");
        assert!(comparison.agrees(), "{name}: {text}");
        assert!(
            covers_95_percent(&comparison, reference.len(), current.len()),
            "{name}: {text}"
        );
    }
}

/// A composite op wrong on the unfused side (the Adam model's first `linear`, on NdArray
/// behind burn-router, its output scaled by `1 + 1e-3`) against the same program fused on
/// lavapipe, where `linear` reaches the fusion server as a matmul and an add: the culprit is
/// that `linear`'s region, in step 0's forward, its inputs agreed.
#[test]
fn a_composite_op_wrong_unfused_is_the_culprits_region_against_its_decomposition_fused() {
    use adam_model::{Change, train_adam};
    type Wrong = Autodiff<Profiled<perturbed::Perturbed>>;
    let _serial = serial();
    let root = support::profile_dir().join("numerics-wrong-linear");
    let _ = std::fs::remove_dir_all(&root);
    let fused = train_adam::<Autodiff<fused::Wgpu>>(&root.join("fused"), Change::None, 2);
    perturbed::reset_with_wrong_linear();
    let wrong = train_adam::<Wrong>(&root.join("wrong"), Change::None, 2);
    perturbed::reset();

    let comparison = numerics::compare(&fused, &wrong, Tolerance::default());
    let text = numerics::render(&comparison, &fused, &wrong, 10);
    println!("{text}");
    let culprit = comparison.culprit.expect("the runs diverge");
    assert!(culprit.inputs_agreed, "{text}");
    let pair = &comparison.pairs[culprit.pair];
    let after = &wrong[pair.current];
    assert_eq!((after.step, after.phase.as_str()), (0, "forward"), "{text}");
    let first_linear = wrong
        .iter()
        .find(|r| r.op == "linear")
        .expect("the unfused run has linear ops");
    let region = &comparison.alignment.regions[culprit.pair];
    assert!(
        after.seq == first_linear.seq
            || region
                .current
                .iter()
                .any(|&at| wrong[at].seq == first_linear.seq),
        "the wrong linear is the culprit's region: {}\n{text}",
        after.op
    );
    assert!(
        covers_95_percent(&comparison, fused.len(), wrong.len()),
        "{text}"
    );
}
