//! What a session costs a fused training step on Burn 0.22 (`cargo bench -p burn-profiled-022
//! --bench session_step`): the examples' vision model on wgpu (Mesa's lavapipe without a GPU),
//! fused as Burn fuses by default, each step ending with a device sync.
//!
//! Variants, interleaved (burn-profiled's `benches/workloads/interleaved.rs`): one step of each
//! per round, in a rotating order, each against the plain step of the same round.
//! - no session: Burn alone;
//! - everything off: the session's block observer installed, every tool off;
//! - statistics: the op table's statistics;
//! - statistics + forward links: each block's tensors fed to the links' lineage as well
//!   (`[stats] forward_links`; the step's backward and optimizer in user ranges of those names
//!   in every variant, as the examples have them);
//! - op ranges + statistics: every block's NVTX range too, on the compute runner (the NVTX
//!   recorder stands for Nsight Systems: without a tool, ranges do nothing);
//! - op ranges + statistics + device time: every kernel timed through CubeCL's launch observer, collected after the
//!   step as a session does every 20 steps (here after every step: the most it costs).
//!
//! A session's tools are process-wide and enable-once, so the variants switch its parts
//! (`burn_profiled_022::bench`) rather than starting sessions.

use std::time::Instant;

use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer};
use burn::tensor::{Device, DeviceKind, Int, Tensor};
use burn_profiled_022::bench::{BlockObserver, start_device_time};
use burn_profiled_022::nvtx;
use burn_profiled_core::device_time;
use burn_profiled_core::{probe, stats};

nvtx_recorder::install_static!();

#[path = "../examples/common/vision.rs"]
mod vision;
use vision::VisionModel;

#[path = "../../../benches/workloads/interleaved.rs"]
#[allow(dead_code)]
mod interleaved;
use interleaved::Variant;

const BATCH: usize = 8;
const WARM_UP_STEPS: usize = 5;

/// The model, its optimizer and one batch.
struct Step {
    model: Option<VisionModel>,
    optim: ModuleOptimizer,
    images: Tensor<4>,
    labels: Tensor<1, Int>,
    device: Device,
}

impl Step {
    fn new(device: &Device) -> Self {
        device.seed(3);
        let (images, labels) = vision::generated_batch(0, BATCH);
        let mut step = Step {
            model: Some(VisionModel::new(device)),
            optim: AdamConfig::new().init(),
            images: Tensor::from_data(images, device),
            labels: Tensor::from_data(labels, device),
            device: device.clone(),
        };
        // Kernels compile (and tune) on their first run: not in the measurement.
        for _ in 0..WARM_UP_STEPS {
            step.run();
        }
        step
    }

    /// One step: forward, backward, Adam, then a sync.
    fn run(&mut self) {
        let Some(model) = self.model.take() else {
            return;
        };
        let logits = nvtx::scope("forward", || model.forward(self.images.clone()));
        let loss = CrossEntropyLossConfig::new()
            .init(&self.device)
            .forward(logits, self.labels.clone());
        let grads = nvtx::scope("backward", || loss.backward());
        self.model = Some(nvtx::scope("optimizer", || {
            let grads = GradientsParams::from_grads(grads, &model);
            self.optim.step(1e-3, model, grads)
        }));
        let _ = self.device.sync();
    }
}

fn main() {
    let bench = std::env::args().any(|arg| arg == "--bench");
    if !bench {
        return;
    }
    // `BURN_DEVICE=cuda` (with the `cuda` feature) on a GPU; wgpu otherwise.
    let device = match std::env::var_os("BURN_DEVICE") {
        Some(_) => Device::default(),
        None => Device::wgpu(DeviceKind::DefaultDevice),
    }
    .autodiff();
    let observer = BlockObserver::new(&device);
    let timed_with = |step: &mut Step, statistics: Option<stats::StatsConfig>, ranges: bool| {
        let observation = observer.install(statistics.is_some());
        if let Some(config) = statistics {
            stats::start(config);
        }
        probe::set_op_ranges(ranges);
        let started = Instant::now();
        step.run();
        let time = started.elapsed();
        probe::set_op_ranges(false);
        stats::stop();
        drop(observation);
        time
    };
    let statistics = Some(stats::StatsConfig::default());
    let with_links = Some(stats::StatsConfig {
        forward_links: true,
        ..stats::StatsConfig::default()
    });
    let mut plain = Step::new(&device);
    let mut all_off = Step::new(&device);
    let mut with_statistics = Step::new(&device);
    let mut with_forward_links = Step::new(&device);
    let mut with_ranges = Step::new(&device);
    let mut with_device_time = Step::new(&device);
    interleaved::compare(
        &format!(
            "session_step (Burn 0.22.1, {}), interleaved",
            std::env::var("BURN_DEVICE").unwrap_or_else(|_| "wgpu".to_owned())
        ),
        60,
        &mut [
            Variant::new("no session", || {
                let started = Instant::now();
                plain.run();
                started.elapsed()
            }),
            Variant::new("everything off", || timed_with(&mut all_off, None, false)),
            Variant::new("statistics", || {
                timed_with(&mut with_statistics, statistics, false)
            }),
            Variant::new("statistics + forward links", || {
                timed_with(&mut with_forward_links, with_links, false)
            }),
            Variant::new("op ranges + statistics", || {
                timed_with(&mut with_ranges, statistics, true)
            }),
            Variant::new("+ device time", || {
                start_device_time().expect("the launch observer installs");
                let time = timed_with(&mut with_device_time, statistics, true);
                let started = Instant::now();
                let _ = device_time::stop();
                probe::flush_device_time();
                time + started.elapsed()
            }),
        ],
    );
    stats::reset();
}
