//! Gradient taps on intermediate activations: the analytic gradient, and training
//! bit-identical with and without taps.

use burn::backend::{Autodiff, NdArray};
use burn::module::Module;
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use burn_profiled::dump::json::PyJson;
use burn_profiled::dump::{
    AddOptions, DumpError, DumpType, REQUIRES_GRAD_FALSE, TensorDumper, enable_grad_taps,
};

type A = Autodiff<NdArray>;

fn json() -> AddOptions {
    AddOptions::new(DumpType::Json)
}

#[test]
fn an_intermediate_gradient_equals_its_analytic_value() {
    enable_grad_taps::<A>();
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    let device = Default::default();
    let x = Tensor::<A, 1>::from_floats([1.0, -2.0, 0.5], &device).require_grad();
    // y = 3x, z = sum(y²): dz/dy = 2y = 6x, dz/dx = 18x.
    let y = d.grad_tap("y", x.clone() * 3.0, json()).unwrap();
    d.add_grad_data("x", x.clone(), json()).unwrap();
    // An untracked intermediate, and a tapped tensor the loss does not use.
    let c = Tensor::<A, 1>::from_floats([1.0], &device);
    let _c = d.grad_tap("constant", c * 2.0, json()).unwrap();
    let _unused = d.grad_tap("unused", x.clone() * 5.0, json()).unwrap();
    let z = y.powi_scalar(2).sum();
    let grads = z.backward();
    d.set_gradients_from::<A>(&grads).unwrap();
    d.dump(true).unwrap();
    let text = std::fs::read_to_string(dir.path().join("0/grads.json")).unwrap();
    let expected = PyJson::parse(&format!(
        r#"{{"y": [6.0, -12.0, 3.0], "x": [18.0, -36.0, 9.0], "constant": "{REQUIRES_GRAD_FALSE}", "unused": null}}"#
    ))
    .unwrap();
    assert_eq!(PyJson::parse(&text).unwrap(), expected, "{text}");
}

#[test]
fn taps_work_through_profiled_autodiff() {
    type P = burn_profiled::Profiled<Autodiff<NdArray>>;
    enable_grad_taps::<P>();
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    let x = Tensor::<P, 1>::from_floats([2.0], &Default::default()).require_grad();
    let y = d.grad_tap("y", x * 3.0, json()).unwrap();
    let _grads = d.set_gradients::<P>(y.powi_scalar(2).sum()).unwrap();
    d.dump(true).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("0/grads.json")).unwrap(),
        "{\n  \"y\": [\n    12.0\n  ]\n}"
    );
}

#[test]
fn a_backend_without_autodiff_or_not_enabled() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    let t = Tensor::<NdArray, 1>::from_floats([1.0], &Default::default());
    let same = d.grad_tap("plain", t.clone(), json()).unwrap();
    assert_eq!(same.into_data(), t.into_data());
    type NotEnabled = Autodiff<NdArray<f64>>;
    let u = Tensor::<NotEnabled, 1>::from_floats([1.0], &Default::default());
    let error = d.grad_tap("u", u, json()).unwrap_err();
    assert!(matches!(error, DumpError::Gradients(_)), "{error}");
    assert!(error.to_string().contains("enable_grad_taps"), "{error}");
}

#[derive(Module, Debug)]
struct Net<B: Backend> {
    first: Linear<B>,
    relu: Relu,
    second: Linear<B>,
}

/// Losses and final parameters over a few Adam steps, with or without taps.
fn train(taps: bool) -> (Vec<u32>, Vec<u32>) {
    enable_grad_taps::<A>();
    let device = Default::default();
    A::seed(&device, 3);
    let mut model = Net::<A> {
        first: LinearConfig::new(4, 8).init(&device),
        relu: Relu::new(),
        second: LinearConfig::new(8, 1).init(&device),
    };
    let mut optim = AdamConfig::new().init();
    let x = Tensor::<A, 2>::from_data(
        TensorData::new((0..20).map(|i| (i as f32).sin()).collect(), [5, 4]),
        &device,
    );
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    let mut losses = Vec::new();
    for _ in 0..5 {
        let mut h = model.first.forward(x.clone());
        if taps {
            h = d.grad_tap("hidden", h, json()).unwrap();
        }
        let mut out = model.second.forward(model.relu.forward(h));
        if taps {
            out = d.grad_tap("out", out, json()).unwrap();
        }
        let loss = out.powi_scalar(2).mean();
        losses.push(loss.clone().into_scalar().to_bits());
        let grads = loss.backward();
        if taps {
            d.set_gradients_from::<A>(&grads).unwrap();
            d.dump(true).unwrap();
        }
        let grads = GradientsParams::from_grads(grads, &model);
        model = optim.step(1e-2, model, grads);
    }
    if taps {
        let text = std::fs::read_to_string(dir.path().join("4/grads.json")).unwrap();
        let grads = PyJson::parse(&text).unwrap().expand_numbers();
        assert!(matches!(grads.get("hidden"), Some(PyJson::List(rows)) if rows.len() == 5));
    }
    let params = [model.first.weight.val(), model.second.weight.val()]
        .into_iter()
        .flat_map(|p| {
            p.into_data()
                .iter::<f32>()
                .map(f32::to_bits)
                .collect::<Vec<_>>()
        })
        .collect();
    (losses, params)
}

#[test]
fn training_is_bit_identical_with_and_without_taps() {
    assert_eq!(train(false), train(true));
}

#[test]
fn a_failed_set_gradients_leaves_the_taps_for_the_retry() {
    type Other = Autodiff<burn_profiled::Profiled<NdArray>>;
    enable_grad_taps::<A>();
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    let x = Tensor::<A, 1>::from_floats([1.0, 2.0], &Default::default()).require_grad();
    let y = d.grad_tap("y", x.clone() * 3.0, json()).unwrap();
    d.add_grad_data("x", x.clone(), json()).unwrap();
    let grads = y.sum().backward();
    // Gradients of another backend: `x` cannot be resolved from them.
    let w = Tensor::<Other, 1>::from_floats([1.0], &Default::default()).require_grad();
    let other = w.sum().backward();
    let error = d.set_gradients_from::<Other>(&other).unwrap_err();
    assert!(
        error.to_string().contains("is not a tensor of the backend"),
        "{error}"
    );
    d.set_gradients_from::<A>(&grads).unwrap();
    d.dump(true).unwrap();
    let text = std::fs::read_to_string(dir.path().join("0/grads.json")).unwrap();
    let expected = PyJson::parse(r#"{"y": [1.0, 1.0], "x": [3.0, 3.0]}"#).unwrap();
    assert_eq!(PyJson::parse(&text).unwrap(), expected, "{text}");
}
