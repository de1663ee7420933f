//! A dump of a small MLP's tensors and gradients on Burn 0.21 is the golden dump that the Burn
//! 0.22 edition's `tests/dump_wgpu.rs` compares its own dump of the same model and weights
//! with: the two editions write the same files. The values are exact in f32 on any backend
//! (multiples of 1/4 and 1/2, a power-of-two mean), so both dumps agree to the last bit.

use burn::backend::{Autodiff, NdArray};
use burn::tensor::activation::relu;
use burn::tensor::{Tensor, TensorData};
use burn_profiled::dump::{AddOptions, DumpType, Map, TensorDumper};

type B = Autodiff<NdArray>;

/// Where the golden dump is: the core's tests, beside the other dump formats' goldens.
const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/crates/core/tests/golden/dump_mlp"
);

#[test]
fn the_mlp_dump_on_burn_021_is_the_golden_one_that_burn_022s_is_compared_with() {
    let device = Default::default();
    let xs: Vec<f32> = (0..12).map(|i| (i as f32 - 5.0) * 0.5).collect();
    let ws: Vec<f32> = (0..6).map(|i| (i as f32 - 2.0) * 0.25).collect();
    let x = Tensor::<B, 2>::from_data(TensorData::new(xs, [4, 3]), &device);
    let w = Tensor::<B, 2>::from_data(TensorData::new(ws, [3, 2]), &device).require_grad();
    let b = Tensor::<B, 1>::from_data(TensorData::new(vec![0.5f32, -0.25], [2]), &device)
        .require_grad();
    let y = relu(x.clone().matmul(w.clone()) + b.clone().unsqueeze());
    let loss = (y.clone() * y.clone()).mean();

    let out = tempfile::tempdir().unwrap();
    let mut dumper = TensorDumper::new(out.path());
    let json = || AddOptions::new(DumpType::Json);
    let tensors = Map::new()
        .with("x", &x)
        .with("w", &w)
        .with("b", &b)
        .with("y", &y)
        .with("loss", &loss);
    dumper.add_tensor_data("mlp", tensors, json()).unwrap();
    let grads = Map::new().with("x", &x).with("w", &w).with("b", &b);
    dumper.add_grad_data("mlp", grads, json()).unwrap();
    dumper.set_gradients::<B>(loss).unwrap();
    dumper.dump(true).unwrap();

    for file in ["tensors.json", "grads.json"] {
        let written = std::fs::read_to_string(out.path().join("0").join(file)).unwrap();
        let golden_path = format!("{GOLDEN}/0/{file}");
        if std::env::var_os("BURN_PROFILED_BLESS").is_some() {
            std::fs::create_dir_all(format!("{GOLDEN}/0")).unwrap();
            std::fs::write(&golden_path, &written).unwrap();
        }
        let golden = std::fs::read_to_string(&golden_path)
            .unwrap_or_else(|_| panic!("{golden_path}: run once with BURN_PROFILED_BLESS=1"));
        assert_eq!(written, golden, "{file}");
    }
}
