//! The two-module model of the forward-link tests and what they check of a run of it: `conv`
//! with only a convolution, `head` with only linear layers, each in its user range.

use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams, Optimizer};
use burn::tensor::activation::relu;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Distribution, Tensor};
use burn_profiled::nvtx;
use burn_profiled::stats::{self, GroupBy, ModuleRow, NOT_LINKED, Row, StatsConfig};

#[derive(Module, Debug)]
pub struct TwoModules<B: Backend> {
    conv: Conv2d<B>,
    hidden: Linear<B>,
    out: Linear<B>,
}

impl<B: Backend> TwoModules<B> {
    fn new(device: &B::Device) -> Self {
        TwoModules {
            conv: Conv2dConfig::new([1, 2], [3, 3]).init(device),
            hidden: LinearConfig::new(2 * 6 * 6, 8).init(device),
            out: LinearConfig::new(8, 3).init(device),
        }
    }

    /// The loss of a batch: the convolution in `conv`; the rest, loss included, in `head`.
    fn loss(&self, images: Tensor<B, 4>) -> Tensor<B, 1> {
        let features = nvtx::scope("conv", || self.conv.forward(images));
        nvtx::scope("head", || {
            let flat: Tensor<B, 2> = features.flatten(1, 3);
            let hidden = relu(self.hidden.forward(flat));
            self.out.forward(hidden).powf_scalar(2.0).mean()
        })
    }
}

/// `steps` training steps on `device` with statistics and forward links on: the rows by op and
/// phase, and the time per module. Statistics are process-wide: callers take turns.
pub fn trained<B: AutodiffBackend>(device: &B::Device, steps: usize) -> (Vec<Row>, Vec<ModuleRow>) {
    static RANGES: std::sync::Once = std::sync::Once::new();
    RANGES.call_once(|| nvtx::enable(nvtx::RangeConfig::new()));
    let mut model = TwoModules::<B>::new(device);
    let mut optimizer = AdamConfig::new().init::<B, TwoModules<B>>();
    let batches: Vec<Tensor<B, 4>> = (0..steps)
        .map(|_| Tensor::random([4, 1, 8, 8], Distribution::Default, device))
        .collect();
    stats::reset();
    stats::start(StatsConfig {
        forward_links: true,
        ..StatsConfig::default()
    });
    for images in batches {
        let loss = model.loss(images);
        let grads = nvtx::scope("backward", || loss.backward());
        model = nvtx::scope("optimizer", || {
            let grads = GradientsParams::from_grads(grads, &model);
            optimizer.step(1e-3, model, grads)
        });
    }
    stats::stop();
    B::sync(device).expect("the device syncs");
    let snapshot = stats::snapshot();
    let rows = snapshot.rows(GroupBy::OpAndPhase);
    let modules = snapshot.modules();
    stats::reset();
    (rows, modules)
}

fn in_phase<'a>(rows: &'a [Row], phase: &str) -> impl Iterator<Item = &'a Row> {
    rows.iter()
        .filter(move |row| row.phase.as_deref() == Some(phase))
}

fn sorted<T: Ord>(mut items: Vec<T>) -> Vec<T> {
    items.sort();
    items
}

/// Every convolution backward op works for `conv`, every other backward op for `head`.
pub fn check_backward(rows: &[Row]) {
    let backward: Vec<&Row> = in_phase(rows, "backward").collect();
    let of = |prefix: &str| -> Vec<(&str, Option<&str>)> {
        sorted(
            backward
                .iter()
                .filter(|row| row.op.starts_with(prefix))
                .map(|row| (row.op.as_str(), row.forward_phase.as_deref()))
                .collect(),
        )
    };
    // The convolution's input is the data: no gradient of it, so no x backward.
    assert_eq!(
        of("conv2d"),
        [
            ("conv2d_bias_backward", Some("conv")),
            ("conv2d_weight_backward", Some("conv")),
        ],
        "{backward:#?}"
    );
    assert_eq!(
        of("linear"),
        [
            ("linear_bias_backward", Some("head")),
            ("linear_weight_backward", Some("head")),
            ("linear_x_backward", Some("head")),
        ],
        "{backward:#?}"
    );
    // The rest (relu's, the loss's, the flatten's reshape) is the head's too: the backward
    // pass starts at the loss, in `head`.
    assert!(
        backward
            .iter()
            .filter(|row| !row.op.starts_with("conv2d"))
            .all(|row| row.forward_phase.as_deref() == Some("head")),
        "{backward:#?}"
    );
    // Forward rows carry no forward phase: their own phase is it.
    assert!(
        in_phase(rows, "conv")
            .chain(in_phase(rows, "head"))
            .all(|row| row.forward_phase.is_none()),
        "{rows:#?}"
    );
}

/// Adam's ops on each parameter work for the module that read it.
pub fn check_optimizer(rows: &[Row]) {
    let optimizer: Vec<&Row> = in_phase(rows, "optimizer").collect();
    let calls = |module: &str| -> u64 {
        optimizer
            .iter()
            .filter(|row| row.forward_phase.as_deref() == Some(module))
            .map(|row| row.calls)
            .sum()
    };
    // Two parameters in `conv` (the kernel and its bias), four in `head`: Adam runs the same
    // ops on each.
    assert!(calls("conv") > 0, "{optimizer:#?}");
    assert_eq!(2 * calls("conv"), calls("head"), "{optimizer:#?}");
    assert!(
        optimizer
            .iter()
            .all(|row| matches!(row.forward_phase.as_deref(), Some("conv" | "head"))),
        "{optimizer:#?}"
    );
}

/// The time per module: `conv` and `head`, each with forward, backward and optimizer time,
/// adding up to all ops' time.
pub fn check_modules(rows: &[Row], modules: &[ModuleRow]) {
    let names: Vec<&str> = sorted(modules.iter().map(|m| m.module.as_str()).collect());
    assert_eq!(names, ["conv", "head"], "{modules:#?}");
    for module in modules {
        assert!(
            module.forward_ns > 0 && module.backward_ns > 0 && module.optimizer_ns > 0,
            "{module:#?}"
        );
        assert_eq!(
            module.total_ns,
            module.forward_ns + module.backward_ns + module.optimizer_ns
        );
    }
    let all: u64 = rows.iter().map(|row| row.total_ns).sum();
    let by_module: u64 = modules.iter().map(|m| m.total_ns).sum();
    assert_eq!(by_module, all);
    assert!(!modules.iter().any(|m| m.module == NOT_LINKED));
}
