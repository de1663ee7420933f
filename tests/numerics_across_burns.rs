//! `[numerics]` records what the program hands over (the loss, the dumper's tensors and
//! gradients) on both editions, named alike, so that a Burn 0.21 run and a Burn 0.22 run of the
//! same model compare with `burn-profiled numerics`. Two training steps of the MLP of
//! `tests/dump_across_burns.rs` on `Profiled<NdArray>`: their value records are the golden
//! file that the Burn 0.22 edition's `tests/numerics_values_wgpu.rs` compares its own run
//! with. The values are exact in f32 on any backend, so both agree to the last bit.

use burn::backend::{Autodiff, NdArray};
use burn_profiled::config::RuntimeConfig;
use burn_profiled::dump::{AddOptions, DumpType, TensorDumper};
use burn_profiled::{Profiled, Session};

mod support;
use burn_profiled::numerics::{self, Tolerance, file};
use support::mlp::mlp;

type B = Autodiff<Profiled<NdArray>>;

/// The golden value records, beside the core's other numerics goldens.
const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/core/tests/golden/numerics_mlp_values.jsonl"
);

#[test]
fn the_loss_and_the_dumpers_tensors_and_gradients_are_recorded_as_values_named_alike() {
    let device = Default::default();
    let out = tempfile::tempdir().unwrap();
    let mut config = RuntimeConfig::default();
    config.numerics.fingerprints = true;
    let mut session = Session::start::<B>(config, &device, out.path().join("run"));
    let mut dumper = TensorDumper::new(out.path().join("dumps"));
    for _step in 0..2 {
        let model = mlp::<B>(&device);
        let json = || AddOptions::new(DumpType::Json);
        dumper
            .add_tensor_data("mlp", model.tensors(), json())
            .unwrap();
        dumper
            .add_grad_data("mlp", model.grad_inputs(), json())
            .unwrap();
        dumper.set_gradients::<B>(model.loss.clone()).unwrap();
        dumper.dump(true).unwrap();
        session.record_loss(&model.loss);
        session.finish_iter().unwrap();
    }
    session.finish().unwrap();

    let records = file::read(&out.path().join("run")).unwrap();
    let values: Vec<_> = records.iter().filter(|r| r.is_value()).cloned().collect();
    let names: Vec<(u64, &str)> = values.iter().map(|r| (r.step, r.op.as_str())).collect();
    let step = [
        "dump:mlp.x",
        "dump:mlp.w",
        "dump:mlp.b",
        "dump:mlp.y",
        "dump:mlp.loss",
        "grad:mlp.w",
        "grad:mlp.b",
        "loss",
    ];
    let expected: Vec<(u64, &str)> = (0..2)
        .flat_map(|s| step.iter().map(move |name| (s, *name)))
        .collect();
    assert_eq!(names, expected);
    assert!(
        records.len() > values.len(),
        "Profiled<NdArray> records its ops too"
    );
    assert_eq!(values[5].outputs[0].shape, [3, 2], "the gradient of w");
    let loss = &values[7].outputs[0];
    assert_eq!(
        (loss.dtype.as_str(), loss.shape.as_slice()),
        ("f32", &[1][..])
    );
    assert_eq!(
        values[7].producers,
        Some(Vec::new()),
        "a value has no inputs"
    );

    // The whole run against its values alone: the ops are only before, the values identical.
    let comparison = numerics::compare(&records, &values, Tolerance::default());
    let text = numerics::render(&comparison, &records, &values, 10);
    assert_eq!(
        text,
        "identical: 16 ops aligned in 2 steps, every statistic bit for bit\n\
         not aligned: 44 ops only before, 0 only after\n"
    );

    let golden_text = file::to_text(&values)
        // The thread is the test's; the golden's is the same on both editions.
        .replace(
            &format!("\"thread\":\"{}\"", values[0].thread),
            "\"thread\":\"main\"",
        );
    if std::env::var_os("BURN_PROFILED_BLESS").is_some() {
        std::fs::write(GOLDEN, &golden_text).unwrap();
    }
    let golden = std::fs::read_to_string(GOLDEN)
        .unwrap_or_else(|_| panic!("{GOLDEN}: run once with BURN_PROFILED_BLESS=1"));
    assert_eq!(golden_text, golden);
}
