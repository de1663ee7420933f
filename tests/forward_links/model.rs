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
use burn_profiled::trace;
use serde_json::Value;

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

/// What a run recorded: the rows by op and phase, the time per module, and `trace.json`.
pub struct Run {
    pub rows: Vec<Row>,
    pub modules: Vec<ModuleRow>,
    pub trace: Value,
}

/// `steps` training steps on `device` with statistics, forward links and the timeline on.
/// Statistics and the timeline are process-wide: callers take turns.
pub fn trained<B: AutodiffBackend>(device: &B::Device, steps: usize) -> Run {
    trained_syncing::<B>(device, steps, false)
}

/// [`trained`], with the device synced at each step's end, outside any range, when `sync`: a
/// fused backend runs the step's ops then, while statistics record.
pub fn trained_syncing<B: AutodiffBackend>(device: &B::Device, steps: usize, sync: bool) -> Run {
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
    trace::clear();
    trace::start(trace::TraceConfig::default());
    for images in batches {
        let loss = model.loss(images);
        let grads = nvtx::scope("backward", || loss.backward());
        model = nvtx::scope("optimizer", || {
            let grads = GradientsParams::from_grads(grads, &model);
            optimizer.step(1e-3, model, grads)
        });
        if sync {
            B::sync(device).expect("the device syncs");
        }
    }
    stats::stop();
    trace::stop();
    B::sync(device).expect("the device syncs");
    let snapshot = stats::snapshot();
    let (trace, _) = trace::to_json();
    trace::clear();
    stats::reset();
    Run {
        rows: snapshot.rows(GroupBy::OpAndPhase),
        modules: snapshot.modules(),
        trace: serde_json::from_str(&trace).expect("trace.json is JSON"),
    }
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

/// `trace.json` has a `fwdbwd` flow from a forward op to each backward op, as Kineto writes
/// them: it starts at a forward op's span and ends at a backward op's, and there are as many
/// as backward op calls (each is linked, and the timeline holds every forward op).
pub fn check_flows(rows: &[Row], trace: &Value) {
    let events = trace["traceEvents"].as_array().expect("traceEvents");
    let ops: Vec<&Value> = events.iter().filter(|e| e["cat"] == "cpu_op").collect();
    let span_at = |flow: &Value| -> String {
        let at = ops
            .iter()
            .filter(|op| op["tid"] == flow["tid"] && op["ts"] == flow["ts"])
            .map(|op| op["name"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>();
        assert_eq!(at.len(), 1, "one op span where {flow} is: {at:?}");
        at[0].clone()
    };
    let flows: Vec<&Value> = events.iter().filter(|e| e["cat"] == "fwdbwd").collect();
    let starts: Vec<&&Value> = flows.iter().filter(|e| e["ph"] == "s").collect();
    let ends: Vec<&&Value> = flows.iter().filter(|e| e["ph"] == "f").collect();
    let backward_calls: u64 = in_phase(rows, "backward").map(|row| row.calls).sum();
    assert_eq!(ends.len() as u64, backward_calls);
    assert_eq!(starts.len(), ends.len());
    let forward_ops: Vec<&str> = in_phase(rows, "conv")
        .chain(in_phase(rows, "head"))
        .map(|row| row.op.as_str())
        .collect();
    let backward_ops: Vec<&str> = in_phase(rows, "backward")
        .map(|row| row.op.as_str())
        .collect();
    for (start, end) in starts.iter().zip(&ends) {
        assert_eq!(start["id"], end["id"], "each flow is a pair");
        assert_eq!(end["bp"], "e");
        assert!(forward_ops.contains(&span_at(start).as_str()), "{start}");
        assert!(backward_ops.contains(&span_at(end).as_str()), "{end}");
    }
    let conv_flows = ends
        .iter()
        .filter(|end| span_at(end).starts_with("conv2d_"))
        .count();
    assert!(conv_flows > 0);
    // ... and the convolution call of the same step: none runs between them.
    let ts = |event: &Value| event["ts"].as_f64().expect("ts");
    for (start, end) in starts.iter().zip(&ends) {
        if span_at(end).starts_with("conv2d_") {
            assert_eq!(span_at(start), "conv2d", "{start} {end}");
            let between = ops
                .iter()
                .filter(|op| op["name"] == "conv2d" && ts(op) > ts(start) && ts(op) < ts(end))
                .count();
            assert_eq!(between, 0, "{start} {end}");
        }
    }
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
