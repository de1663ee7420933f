//! The small MLP whose dumps and numerics the Burn 0.22 edition's tests compare with this
//! edition's (`tests/dump_across_burns.rs`, `tests/numerics_across_burns.rs`): values exact in
//! f32 on any backend (multiples of 1/4 and 1/2, a power-of-two mean).

use burn::tensor::activation::relu;
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use burn_profiled::dump::Map;

/// The MLP's tensors and loss.
pub struct Mlp<B: Backend> {
    pub x: Tensor<B, 2>,
    pub w: Tensor<B, 2>,
    pub b: Tensor<B, 1>,
    pub y: Tensor<B, 2>,
    pub loss: Tensor<B, 1>,
}

/// One forward pass of the MLP on `device`, `w` and `b` tracked for their gradients.
pub fn mlp<B: Backend>(device: &B::Device) -> Mlp<B> {
    let xs: Vec<f32> = (0..12).map(|i| (i as f32 - 5.0) * 0.5).collect();
    let ws: Vec<f32> = (0..6).map(|i| (i as f32 - 2.0) * 0.25).collect();
    let x = Tensor::<B, 2>::from_data(TensorData::new(xs, [4, 3]), device);
    let w = Tensor::<B, 2>::from_data(TensorData::new(ws, [3, 2]), device).require_grad();
    let b =
        Tensor::<B, 1>::from_data(TensorData::new(vec![0.5f32, -0.25], [2]), device).require_grad();
    let y = relu(x.clone().matmul(w.clone()) + b.clone().unsqueeze());
    let loss = (y.clone() * y.clone()).mean();
    Mlp { x, w, b, y, loss }
}

impl<B: Backend> Mlp<B> {
    /// What the tests dump of it: `x`, `w`, `b`, `y` and `loss`.
    pub fn tensors(&self) -> Map {
        Map::new()
            .with("x", &self.x)
            .with("w", &self.w)
            .with("b", &self.b)
            .with("y", &self.y)
            .with("loss", &self.loss)
    }

    /// The tensors whose gradients the tests dump: `x` (untracked), `w` and `b`.
    pub fn grad_inputs(&self) -> Map {
        Map::new()
            .with("x", &self.x)
            .with("w", &self.w)
            .with("b", &self.b)
    }
}
