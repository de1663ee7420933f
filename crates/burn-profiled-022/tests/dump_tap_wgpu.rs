//! Gradient taps on Burn 0.22 (lavapipe): the gradient of an intermediate tensor, its
//! analytic value, and training bit-identical with and without taps.

use burn::module::Module;
use burn::nn::{Linear, LinearConfig, Relu};
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, DeviceKind, Tensor, TensorData};
use burn_profiled_022::dump::json::PyJson;
use burn_profiled_022::dump::{AddOptions, DumpType, REQUIRES_GRAD_FALSE, TensorDumper};

fn json() -> AddOptions {
    AddOptions::new(DumpType::Json)
}

fn device() -> Device {
    Device::wgpu(DeviceKind::DefaultDevice).autodiff()
}

#[test]
fn an_intermediate_gradient_equals_its_analytic_value() {
    let device = device();
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    let x = Tensor::<1>::from_floats([1.0, -2.0, 0.5], &device).require_grad();
    // y = 3x, z = sum(y²): dz/dy = 2y = 6x, dz/dx = 18x.
    let y = d.grad_tap("y", x.clone() * 3.0, json()).unwrap();
    d.add_grad_data("x", &x, json()).unwrap();
    // An untracked intermediate, and a tapped tensor the loss does not use.
    let c = Tensor::<1>::from_floats([1.0], &device);
    let _c = d.grad_tap("constant", c * 2.0, json()).unwrap();
    let _unused = d.grad_tap("unused", x.clone() * 5.0, json()).unwrap();
    let z = y.powi_scalar(2).sum();
    let grads = z.backward();
    d.set_gradients_from(&grads).unwrap();
    d.dump(true).unwrap();
    let text = std::fs::read_to_string(dir.path().join("0/grads.json")).unwrap();
    let expected = PyJson::parse(&format!(
        r#"{{"y": [6.0, -12.0, 3.0], "x": [18.0, -36.0, 9.0], "constant": "{REQUIRES_GRAD_FALSE}", "unused": null}}"#
    ))
    .unwrap();
    assert_eq!(PyJson::parse(&text).unwrap(), expected, "{text}");
}

#[test]
fn a_tapped_tensor_keeps_its_bits_zeros_signs_included() {
    let device = device();
    let dir = tempfile::tempdir().unwrap();
    let mut d = TensorDumper::new(dir.path());
    let w = Tensor::<1>::from_floats([1.0], &device).require_grad();
    let values = [-0.0f32, 0.0, 1.5, -7.25, f32::MIN_POSITIVE, f32::INFINITY];
    let x = Tensor::<1>::from_floats(values, &device) * w;
    let bits =
        |t: Tensor<1>| -> Vec<u32> { t.into_data().iter::<f32>().map(f32::to_bits).collect() };
    let tapped = d.grad_tap("x", x.clone(), json()).unwrap();
    assert_eq!(bits(tapped), bits(x));
}

#[derive(Module, Debug)]
struct Net {
    first: Linear,
    relu: Relu,
    second: Linear,
}

/// Losses and final parameters over a few Adam steps, with or without taps.
fn train(taps: bool) -> (Vec<u32>, Vec<u32>) {
    let device = device();
    device.seed(3);
    let mut model = Net {
        first: LinearConfig::new(4, 8).init(&device),
        relu: Relu::new(),
        second: LinearConfig::new(8, 1).init(&device),
    };
    let mut optim = AdamConfig::new().init();
    let x = Tensor::<2>::from_data(
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
        losses.push(loss.clone().into_scalar::<f32>().to_bits());
        let grads = loss.backward();
        if taps {
            d.set_gradients_from(&grads).unwrap();
            d.dump(true).unwrap();
        }
        let grads = GradientsParams::from_grads(grads, &model);
        model = optim.step(1e-2, model, grads);
    }
    if taps {
        let text = std::fs::read_to_string(dir.path().join("4/grads.json")).unwrap();
        let grads = PyJson::parse(&text).unwrap().expand_numbers();
        assert!(
            matches!(grads.get("hidden"), Some(PyJson::List(rows)) if rows.len() == 5),
            "{text}"
        );
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
