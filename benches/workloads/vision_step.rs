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
    #[allow(dead_code)] // Not every bench runs it.
    pub fn run(&mut self) {
        self.run_in(|_, work| work());
    }

    /// [`run`](Self::run) with its forward, backward and optimizer each in a user range of
    /// that name (with NVTX ranges enabled, phases), as the examples have them.
    #[allow(dead_code)] // Not every bench runs it.
    pub fn run_in_phases(&mut self) {
        self.run_in(|name, work| burn_profiled::nvtx::scope(name, work));
    }

    fn run_in(&mut self, phase: impl Fn(&'static str, &mut dyn FnMut())) {
        let Some(model) = self.model.take() else {
            return;
        };
        let mut loss = None;
        phase("forward", &mut || {
            let logits = model.forward(self.images.clone(), false);
            loss = Some(
                CrossEntropyLossConfig::new()
                    .init(&self.device)
                    .forward(logits, self.labels.clone()),
            );
        });
        let mut grads = None;
        phase("backward", &mut || {
            grads = loss.take().map(|loss| loss.backward())
        });
        let Some(grads) = grads else {
            return;
        };
        let mut grads = Some(GradientsParams::from_grads(grads, &model));
        let mut model = Some(model);
        phase("optimizer", &mut || {
            if let (Some(model), Some(grads)) = (model.take(), grads.take()) {
                self.model = Some(self.optim.step(1e-3, model, grads));
            }
        });
        let _ = B::sync(&self.device);
    }
}
