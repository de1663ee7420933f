//! Every block burn-fusion runs as an op: burn-fusion's observer sees each block start and end
//! on the fusion thread, with its ops' IR; each becomes an op event for the core's sinks (NVTX
//! op range, statistics, timeline).

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use burn_fusion::observer::{BlockOperations, FusionObserver};
use burn_ir::{OperationIr, TensorId};
use burn_profiled_core::context::lineage::{Link, Pass};
use burn_profiled_core::context::op::Op;
use burn_profiled_core::context::switches::{
    self, DEVICE, Flags, LINKS, RANGES, SHAPES, STATS, TRACE,
};
use burn_profiled_core::context::{clock, phase};
use burn_profiled_core::device_time;
use burn_profiled_core::memory::LiveBlock;
use burn_profiled_core::op_names;
use burn_profiled_core::shape::Shape;
use burn_profiled_core::sinks::stats::OpMemory;
use burn_profiled_core::sinks::{op_ranges, stats, trace};
use burn_profiled_core::work::Work;

use crate::block_links;
use crate::block_work;
use crate::launch_ranges;
use crate::logical_memory::LiveTensors;
use crate::phases;
use crate::runners::ComputeRunner;

/// At most this many input shapes key a block's statistics by shapes (as on Burn 0.21).
const MAX_SHAPES: usize = 8;

/// Ops whose fused kernel is a reduction: a block holding one is a `reduce` block.
const REDUCTIONS: [&str; 19] = [
    "sum",
    "sum_dim",
    "sum_dims",
    "mean",
    "mean_dim",
    "prod",
    "prod_dim",
    "max",
    "max_dim",
    "min",
    "min_dim",
    "max_abs",
    "max_abs_dim",
    "arg_max",
    "arg_min",
    "max_dim_with_indices",
    "min_dim_with_indices",
    "top_k",
    "arg_top_k",
];

/// A block's name: the op's own for a block of one op, `fused <kind>[<ops>]` for several, `drop`
/// for one that only freed tensors. The kind is the one burn-cubecl-fusion's fuser would have
/// (it does not say which took the block): `matmul` with a matmul in it, `reduce` with a
/// reduction, `elementwise` otherwise.
pub(crate) fn block_name(ops: &[String]) -> String {
    match ops {
        [] => "drop".to_owned(),
        [op] => op.clone(),
        ops => {
            let kind = if ops.iter().any(|op| op == "matmul") {
                "matmul"
            } else if ops.iter().any(|op| REDUCTIONS.contains(&op.as_str())) {
                "reduce"
            } else {
                "elementwise"
            };
            let names: Vec<&str> = ops.iter().map(String::as_str).collect();
            op_names::block_label(kind, &names)
        }
    }
}

/// The block open on this (fusion) thread.
struct OpenBlock {
    op: &'static Op,
    /// The phase its first op was registered in.
    phase: u32,
    /// The switches seen at its start: its end does what its start did.
    flags: Flags,
    started: Duration,
    shapes: Option<Vec<Shape>>,
    /// What its ops did, when work is counted.
    work: Option<Work>,
    /// Its id for device time, with device time on: its kernels are tagged with it.
    device_op: Option<u64>,
    /// What its ops allocated and freed, with per-op memory on.
    memory: Option<OpMemory>,
    /// The forward block it works for and its pass, with forward links on.
    link: Option<(Link, Pass)>,
}

thread_local! {
    static OPEN: RefCell<Option<OpenBlock>> = const { RefCell::new(None) };
}

/// The observer a session installs: its blocks are the ops of `device`.
pub(crate) struct BlockRecorder {
    /// The session's device, as the core's device id.
    pub(crate) device: u32,
    /// Whether an op was registered with the fusion server since the session started.
    pub(crate) saw_an_op: AtomicBool,
    /// Whether blocks need their phase: the session keeps statistics or a timeline.
    phases: bool,
    /// Where the device's kernels are launched, for block ranges: `None` where the session
    /// could not reach it (not a CubeCL device), and ranges open on the fusion thread.
    launches: Option<ComputeRunner>,
    /// The device's live tensors, from the session's start, with `[memory] per_op`; the
    /// timeline's counter track for them.
    memory: Option<(Mutex<LiveTensors>, String)>,
}

impl BlockRecorder {
    pub(crate) fn new(
        device: u32,
        phases: bool,
        launches: Option<ComputeRunner>,
        memory: Option<String>,
    ) -> Self {
        BlockRecorder {
            device,
            saw_an_op: AtomicBool::new(false),
            phases,
            launches,
            memory: memory.map(|track| (Mutex::new(LiveTensors::default()), track)),
        }
    }

    /// The bytes of the device's tensors alive now, as the IR gives them, with `[memory]
    /// per_op`: those made since the session started and not freed since.
    pub(crate) fn live_bytes(&self) -> Option<u64> {
        let (live, _) = self.memory.as_ref()?;
        Some(
            live.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .live_bytes(),
        )
    }

    /// The device's tensors alive now that named blocks made, each with the block's maker and
    /// step, with `[memory] per_op`.
    pub(crate) fn live_blocks(&self) -> Vec<LiveBlock> {
        self.memory.as_ref().map_or_else(Vec::new, |(live, _)| {
            live.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .live_blocks()
        })
    }

    /// How many tensors had no byte size (sub-byte quantized types), with `[memory] per_op`.
    pub(crate) fn unsized_tensors(&self) -> u64 {
        self.memory.as_ref().map_or(0, |(live, _)| {
            live.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .unsized_tensors()
        })
    }
}

/// The shapes of what a block reads: its ops' inputs that no op of the block wrote.
fn input_shapes<'a>(ops: impl Iterator<Item = &'a OperationIr>) -> Vec<Shape> {
    let mut written: HashSet<TensorId> = HashSet::new();
    let mut shapes = Vec::new();
    for op in ops {
        for input in op.inputs() {
            if shapes.len() < MAX_SHAPES && !written.contains(&input.id) {
                shapes.push(Shape::from(input.shape.as_slice()));
            }
        }
        written.extend(op.outputs().map(|output| output.id));
    }
    shapes
}

impl FusionObserver for BlockRecorder {
    fn registered(&self, operation: &OperationIr) {
        if !self.saw_an_op.load(Ordering::Relaxed) {
            self.saw_an_op.store(true, Ordering::Relaxed);
        }
        if self.phases {
            phases::registered(operation);
        }
    }

    fn block_starts(&self, block: BlockOperations<'_>) {
        // Also with everything off: the block's ops are done with their phases, and their
        // tensors are live or freed.
        let registered = phases::of_block(block.iter());
        let (phase, registered_in) = (registered.phase, registered.step);
        let flags = switches::all();
        let named = flags & (RANGES | STATS | TRACE | DEVICE | LINKS) != 0;
        let op = named.then(|| {
            let names: Vec<String> = block
                .iter()
                .filter(|op| !matches!(op, OperationIr::Drop(_)))
                .map(op_names::op_name)
                .collect();
            Op::named(&block_name(&names))
        });
        let memory = self.memory.as_ref().map(|(live, _)| {
            live.lock().unwrap_or_else(PoisonError::into_inner).apply(
                block.iter(),
                op.map(|op| (stats::maker(op, phase, 0, None), registered_in)),
            )
        });
        let Some(op) = op else {
            return;
        };
        let link = (flags & LINKS != 0).then(|| block_links::link(op, registered, block.iter()));
        let shapes =
            (flags & SHAPES != 0 && stats::keyed_by_shapes()).then(|| input_shapes(block.iter()));
        let work =
            (flags & SHAPES != 0 && stats::counts_work()).then(|| block_work::of(block.iter()));
        if flags & RANGES != 0 {
            let payload = link.map_or(0, |(link, pass)| link.nvtx_payload(pass));
            match &self.launches {
                Some(runner) => launch_ranges::push(runner, op, payload),
                None => launch_ranges::push_here(op, payload),
            }
        }
        let started = clock::now();
        let device_op = (flags & DEVICE != 0).then(|| {
            let id = device_time::new_op_id();
            // No call stack: the block's ops were registered on other threads.
            device_time::op_started(
                id,
                op,
                (
                    phase,
                    self.device,
                    0,
                    link.map_or(0, |(link, _)| link.forward),
                ),
                shapes.as_deref(),
                started,
            );
            device_time::tag_launches(id);
            id
        });
        OPEN.set(Some(OpenBlock {
            op,
            phase,
            flags,
            started,
            shapes,
            work,
            device_op,
            memory: memory.filter(|_| stats::memory_per_op()),
            link,
        }));
    }

    fn block_ran(&self) {
        let Some(open) = OPEN.take() else {
            return;
        };
        let ended = clock::now();
        if let Some(id) = open.device_op {
            device_time::untag_launches();
            device_time::op_finished(id);
        }
        phase::inheriting(open.phase, || {
            if open.flags & TRACE != 0 {
                trace::record_op(
                    open.op,
                    (open.started, ended),
                    self.device,
                    open.shapes.as_deref(),
                    (open.link).map_or((0, 0), |(link, pass)| link.flow_calls(pass)),
                );
                if let (Some(call), Some((_, track))) = (open.memory, &self.memory) {
                    trace::record_counter(
                        track,
                        ended,
                        &[("live_bytes", call.in_use_bytes as f64)],
                    );
                }
            }
            if open.flags & STATS != 0 {
                stats::record(
                    open.op,
                    ended.saturating_sub(open.started),
                    open.shapes,
                    (
                        self.device,
                        0,
                        open.link.map_or(0, |(link, _)| link.forward),
                    ),
                    open.memory,
                    open.work,
                );
            }
        });
        if open.flags & RANGES != 0 {
            match &self.launches {
                Some(runner) => launch_ranges::pop(runner),
                None => op_ranges::pop_op(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::block_name;

    fn names(ops: &[&str]) -> Vec<String> {
        ops.iter().map(|op| (*op).to_owned()).collect()
    }

    #[test]
    fn a_block_of_one_op_is_named_for_the_op() {
        assert_eq!(block_name(&names(&["matmul"])), "matmul");
    }

    #[test]
    fn a_block_that_only_frees_tensors_is_a_drop() {
        assert_eq!(block_name(&[]), "drop");
    }

    #[test]
    fn a_fused_block_is_named_for_its_kind_and_ops_as_on_burn_021() {
        assert_eq!(
            block_name(&names(&["add", "mul", "exp"])),
            "fused elementwise[add, mul, exp]"
        );
        assert_eq!(
            block_name(&names(&["matmul", "add"])),
            "fused matmul[matmul, add]"
        );
        assert_eq!(
            block_name(&names(&["exp", "sum_dim"])),
            "fused reduce[exp, sum_dim]"
        );
    }
}
