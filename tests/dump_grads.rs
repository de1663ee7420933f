//! Gradients from Burn's autodiff: dumping them leaves training bit-identical.

use std::path::Path;

use burn::backend::{Autodiff, NdArray};
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Int, Tensor, TensorData};
use burn_profiled::dump::{
    AddOptions, DumpError, DumpType, Map, REQUIRES_GRAD_FALSE, TensorDumper,
};

type A = Autodiff<NdArray>;

#[derive(Module, Debug)]
struct Net<B: Backend> {
    linear: Linear<B>,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Mode {
    NoDump,
    /// `set_gradients(loss)` in place of the user's `loss.backward()`, its gradients used for
    /// the step.
    OwnBackward,
    /// The user's `loss.backward()`, then `set_gradients_from(&grads)`.
    FromUserGrads,
}

/// Losses and final parameters of a few Adam steps, dumping the weight's gradient each step.
fn train<B: AutodiffBackend>(mode: Mode, dir: &Path) -> (Vec<f32>, Vec<f32>) {
    let device = B::Device::default();
    B::seed(&device, 7);
    let mut model = Net::<B> {
        linear: LinearConfig::new(4, 2).init(&device),
    };
    let mut optim = AdamConfig::new().init();
    let x = Tensor::<B, 2>::from_data(
        TensorData::new((0..12).map(|i| i as f32 / 7.0 - 0.5).collect(), [3, 4]),
        &device,
    );
    let mut dumper = TensorDumper::new(dir);
    let mut losses = Vec::new();
    for _ in 0..4 {
        let loss = model.linear.forward(x.clone()).powi_scalar(2).mean();
        losses.push(loss.clone().into_scalar().to_string().parse().unwrap());
        if mode != Mode::NoDump {
            dumper
                .add_grad_data(
                    "w",
                    model.linear.weight.val(),
                    AddOptions::new(DumpType::Binary),
                )
                .unwrap();
        }
        let grads = if mode == Mode::OwnBackward {
            dumper.set_gradients::<B>(loss).unwrap()
        } else {
            loss.backward()
        };
        if mode == Mode::FromUserGrads {
            dumper.set_gradients_from::<B>(&grads).unwrap();
        }
        if mode != Mode::NoDump {
            dumper.dump(true).unwrap();
        }
        let grads = GradientsParams::from_grads(grads, &model);
        model = optim.step(1e-2, model, grads);
    }
    let params = model
        .linear
        .weight
        .val()
        .into_data()
        .iter::<f32>()
        .chain(model.linear.bias.unwrap().val().into_data().iter::<f32>())
        .collect();
    (losses, params)
}

#[test]
fn dumping_gradients_leaves_training_bit_identical() {
    let plain = tempfile::tempdir().unwrap();
    let own = tempfile::tempdir().unwrap();
    let from = tempfile::tempdir().unwrap();
    let reference = train::<A>(Mode::NoDump, plain.path());
    let with_own_backward = train::<A>(Mode::OwnBackward, own.path());
    let with_user_grads = train::<A>(Mode::FromUserGrads, from.path());
    let bits = |(l, p): &(Vec<f32>, Vec<f32>)| {
        (
            l.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            p.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        )
    };
    assert_eq!(bits(&reference), bits(&with_own_backward));
    assert_eq!(bits(&reference), bits(&with_user_grads));
    // Both ways dump the same gradients.
    for step in 0..4 {
        let file = format!("{step}/[grads.json]w.bin");
        let a = std::fs::read(own.path().join(&file)).unwrap();
        let b = std::fs::read(from.path().join(&file)).unwrap();
        assert_eq!(a, b, "{file}");
        assert_eq!(a.len(), 4 * 2 * 4);
    }
}

#[test]
fn gradient_values_untracked_unused_and_summed_values() {
    let dir = tempfile::tempdir().unwrap();
    let device = Default::default();
    let mut d = TensorDumper::new(dir.path());
    let x = Tensor::<A, 1>::from_floats([1.0, -2.0], &device).require_grad();
    let unused = Tensor::<A, 1>::from_floats([1.0], &device).require_grad();
    let untracked = Tensor::<A, 1>::from_floats([1.0], &device);
    let ints = Tensor::<A, 1, Int>::from_ints([1, 2], &device);
    d.add_grad_data(
        "g",
        Map::new()
            .with("x", x.clone())
            .with("unused", unused)
            .with("untracked", untracked)
            .with("ints", ints),
        AddOptions::new(DumpType::Json),
    )
    .unwrap();
    // d/dx [sum(3x) + sum(x²)] = 3 + 2x
    let y = x.clone() * 3.0;
    let _ = d
        .set_gradients::<A>(vec![y.sum(), (x.clone() * x).sum()])
        .unwrap();
    d.dump(true).unwrap();
    let expected = format!(
        "{{\n  \"g\": {{\n    \"x\": [\n      5.0,\n      -1.0\n    ],\n    \"unused\": null,\n    \"untracked\": \"{REQUIRES_GRAD_FALSE}\",\n    \"ints\": \"{REQUIRES_GRAD_FALSE}\"\n  }}\n}}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("0/grads.json")).unwrap(),
        expected
    );
}

#[test]
fn set_gradients_errors() {
    let dir = tempfile::tempdir().unwrap();
    let device = Default::default();
    let mut d = TensorDumper::new(dir.path());
    let x = Tensor::<A, 1>::from_floats([1.0, 2.0], &device).require_grad();
    d.add_grad_data("x", x.clone(), AddOptions::new(DumpType::Json))
        .unwrap();
    let error = d.set_gradients::<A>(x.clone() * 2.0).err().unwrap();
    assert!(error.to_string().contains("scalar"), "{error}");
    let error = d.set_gradients::<A>(Vec::new()).err().unwrap();
    assert!(error.to_string().contains("at least one"), "{error}");

    // Gradient data of another backend than the one given to `set_gradients`.
    type Other = Autodiff<NdArray<f64>>;
    let mut d = TensorDumper::new(dir.path());
    d.add_grad_data("x", x, AddOptions::new(DumpType::Json))
        .unwrap();
    let z = Tensor::<Other, 1>::from_floats([1.0], &device).require_grad();
    let error = d.set_gradients::<Other>(z.sum()).err().unwrap();
    assert!(matches!(error, DumpError::Gradients(_)), "{error}");
    assert!(error.to_string().contains("`x`"), "{error}");
}

#[test]
fn gradients_compare_with_a_previous_dump_strings_and_nan_included() {
    let dir = tempfile::tempdir().unwrap();
    let device = Default::default();
    let run = |d: &mut TensorDumper| {
        let x = Tensor::<A, 1>::from_floats([1.0, 2.0], &device).require_grad();
        let untracked = Tensor::<A, 1>::from_floats([1.0], &device);
        d.add_tensor_data(
            "nan",
            Tensor::<A, 1>::from_floats([f32::NAN, 1.0], &device),
            AddOptions::new(DumpType::Json),
        )
        .unwrap();
        d.add_grad_data(
            "g",
            Map::new().with("x", x.clone()).with("u", untracked),
            AddOptions::new(DumpType::Json),
        )
        .unwrap();
        d.set_gradients::<A>((x * 2.0).sum()).map(|_| ())
    };
    let mut first = TensorDumper::new(dir.path());
    run(&mut first).unwrap();
    first.dump(true).unwrap();
    let mut second = TensorDumper::new(dir.path());
    second.set_dump_is_compare(Default::default());
    run(&mut second).unwrap();
    assert!(second.dump(true).unwrap());
    assert_eq!(second.dump_count(), 1);
    // Grads added but not computed, in compare mode.
    let mut third = TensorDumper::new(dir.path());
    third.set_dump_is_compare(burn_profiled::dump::CompareSettings {
        allow_missing_data_in_current: true,
        ..Default::default()
    });
    let x = Tensor::<A, 1>::from_floats([1.0], &device).require_grad();
    third
        .add_grad_data("g", x, AddOptions::new(DumpType::Json))
        .unwrap();
    assert_eq!(
        third.dump(true).unwrap_err().to_string(),
        "Gradients were not computed. Call `set_gradients` before comparing to previously dumped data."
    );
    assert_eq!(third.dump_count(), 1);
}
