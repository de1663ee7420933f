//! The MLP of burn-profiled's `tests/dump_across_burns.rs` on Burn 0.22, and its golden dump.

use burn::tensor::activation::relu;
use burn::tensor::{Device, Tensor, TensorData};
use burn_profiled_022::dump::Map;

pub const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../core/tests/golden/dump_mlp/0"
);

/// The MLP of burn-profiled's `tests/dump_across_burns.rs`: its tensors and loss.
pub struct Mlp {
    pub x: Tensor<2>,
    pub w: Tensor<2>,
    pub b: Tensor<1>,
    pub y: Tensor<2>,
    pub loss: Tensor<1>,
}

pub fn mlp(device: &Device) -> Mlp {
    let xs: Vec<f32> = (0..12).map(|i| (i as f32 - 5.0) * 0.5).collect();
    let ws: Vec<f32> = (0..6).map(|i| (i as f32 - 2.0) * 0.25).collect();
    let x = Tensor::<2>::from_data(TensorData::new(xs, [4, 3]), device);
    let w = Tensor::<2>::from_data(TensorData::new(ws, [3, 2]), device).require_grad();
    let b =
        Tensor::<1>::from_data(TensorData::new(vec![0.5f32, -0.25], [2]), device).require_grad();
    let y = relu(x.clone().matmul(w.clone()) + b.clone().unsqueeze());
    let loss = (y.clone() * y.clone()).mean();
    Mlp { x, w, b, y, loss }
}

impl Mlp {
    pub fn tensors(&self) -> Map {
        Map::new()
            .with("x", &self.x)
            .with("w", &self.w)
            .with("b", &self.b)
            .with("y", &self.y)
            .with("loss", &self.loss)
    }

    pub fn grad_inputs(&self) -> Map {
        Map::new()
            .with("x", &self.x)
            .with("w", &self.w)
            .with("b", &self.b)
    }
}

pub fn assert_is_the_golden_dump(dump: &std::path::Path) {
    for file in ["tensors.json", "grads.json"] {
        let written = std::fs::read_to_string(dump.join(file))
            .unwrap_or_else(|_| panic!("{file} in {dump:?}"));
        let golden = std::fs::read_to_string(format!("{GOLDEN}/{file}")).unwrap();
        assert_eq!(written, golden, "{file} is Burn 0.21's");
    }
}
