//! A training step of the examples' vision model, ending with a device sync, for the benches
//! that time whole steps (`fused_step`, `memory`).

use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{Adam, AdamConfig, GradientsParams, Optimizer};
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Int, Tensor};

#[path = "../../examples/common/vision.rs"]
mod vision;
use vision::VisionModel;

/// Images per batch.
pub const BATCH: usize = 8;

/// The model, its optimizer and one batch.
pub struct Step<B: AutodiffBackend> {
    model: Option<VisionModel<B>>,
    optim: OptimizerAdaptor<Adam, VisionModel<B>, B>,
    images: Tensor<B, 4>,
    labels: Tensor<B, 1, Int>,
    device: B::Device,
}

impl<B: AutodiffBackend> Step<B> {
    pub fn new(device: &B::Device) -> Self {
        B::seed(device, 3);
        let (images, labels) = vision::generated_batch(0, BATCH);
        Step {
            model: Some(VisionModel::new(device)),
            optim: AdamConfig::new().init(),
            images: Tensor::from_data(images, device),
            labels: Tensor::from_data(labels, device),
            device: device.clone(),
        }
    }

    /// One step: forward, backward, Adam, then a sync.
    pub fn run(&mut self) {
        let Some(model) = self.model.take() else {
            return;
        };
        let logits = model.forward(self.images.clone(), false);
        let loss = CrossEntropyLossConfig::new()
            .init(&self.device)
            .forward(logits, self.labels.clone());
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        self.model = Some(self.optim.step(1e-3, model, grads));
        let _ = B::sync(&self.device);
    }
}
