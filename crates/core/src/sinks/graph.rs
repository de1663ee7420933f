//! The graph of one step (`[memory] graph = true`): its ops in the order they ran, the tensors
//! they read and made with shapes and bytes, producer and consumer edges, when each tensor was
//! made and freed, and each backward and optimizer op's forward op, written as `graph.json`.
//!
//! The editions hand over each op of the chosen step as it ends ([`op`]), with its tensors
//! known by identity (the same identities as [`lineage`]'s), and each tensor's end as they see
//! it ([`freed`]): on Burn 0.21 when the tracking allocator sees its host buffer freed, on Burn
//! 0.22 at the IR's drop of it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use rustc_hash::FxHashMap as HashMap;
use serde::Serialize;

use crate::call_sites;
use crate::context::lineage::{self, Link, Pass};
use crate::context::op::Op;
use crate::context::{live_allocations, phase};

pub use crate::formats::GRAPH_FORMAT_VERSION;

/// No step chosen.
const NONE: usize = usize::MAX;

/// The step whose ops are recorded.
static CHOSEN: AtomicUsize = AtomicUsize::new(NONE);
/// Whether the chosen step runs now: ops hand themselves over.
static RECORDING: AtomicBool = AtomicBool::new(false);
static GRAPH: Mutex<Option<Recorder>> = Mutex::new(None);

/// How the ends of tensors are seen, as `graph.json`'s `frees` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Frees {
    /// From the IR: each tensor's drop (Burn 0.22).
    Ir,
    /// From the tracking allocator: a tensor's host buffer freed (Burn 0.21 on the host).
    HostAllocator,
    /// Not seen: every `freed_at` is null.
    NotSeen,
}

/// One tensor an op read or made, as an edition sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorSeen {
    /// Its identity while it lives (the same as [`lineage`]'s).
    pub id: u64,
    /// Its dims.
    pub shape: Vec<usize>,
    /// Its element type, as burn names it in lower case (`f32`, `i64`, `bool`).
    pub dtype: String,
    /// Its size: elements times the element's size.
    pub bytes: u64,
}

/// One op of the recorded step, as an edition hands it over when it ends.
#[derive(Debug, Clone, Copy)]
pub struct OpSeen<'a> {
    /// The op.
    pub op: &'static Op,
    /// Its phase ([`phase`] id).
    pub phase: u32,
    /// Its call stack (the call-site sink's id), 0 when not taken.
    pub stack: u32,
    /// Its pass and link ([`lineage::link`]).
    pub link: (Link, Pass),
    /// The tensors it read, in argument order.
    pub inputs: &'a [TensorSeen],
    /// The tensors it made.
    pub outputs: &'a [TensorSeen],
    /// The tensors whose values ended within it, where the edition sees that (Burn 0.22: the
    /// IR's drops and last reads).
    pub ended: &'a [u64],
    /// Whether some tensor of its had no identity (left out of `inputs` or `outputs`).
    pub unknown_tensors: bool,
    /// The step it was registered in, where it runs later on another thread (Burn 0.22's
    /// blocks); `None`: the step that runs now ([`recording`]).
    pub step: Option<usize>,
}

/// `graph.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Graph {
    /// [`GRAPH_FORMAT_VERSION`].
    pub format_version: u32,
    /// The step recorded (counted from 0, warm-up included, as `run.json`'s steps).
    pub step: usize,
    /// How tensors' ends were seen.
    pub frees: Frees,
    /// The step's ops, in the order they ended.
    pub ops: Vec<GraphOp>,
    /// Every tensor the ops read or made, numbered in the order first seen.
    pub tensors: Vec<GraphTensor>,
    /// One edge per tensor made in the step and an op that read it.
    pub edges: Vec<Edge>,
    /// Ops with a tensor whose identity was not known: their inputs or outputs are partial.
    pub ops_with_unknown_tensors: usize,
}

/// One op of the step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraphOp {
    /// Its place in `ops`.
    pub index: usize,
    /// The op's name.
    pub op: String,
    /// Its phase (innermost user range, `-` outside any).
    pub phase: String,
    /// `forward`, `backward` or `optimizer`.
    pub pass: &'static str,
    /// Where the user's code called it, with call sites on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_site: Option<String>,
    /// For a backward or optimizer op, the forward op it works for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forward: Option<ForwardOf>,
    /// The tensors it read (`tensors` indices), in argument order.
    pub inputs: Vec<usize>,
    /// The tensors it made.
    pub outputs: Vec<usize>,
}

/// The forward op a backward or optimizer op works for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForwardOf {
    /// Its name.
    pub op: String,
    /// Its phase.
    pub phase: String,
    /// Its place in `ops` when that call ran in this step (`null`: an earlier step's).
    pub index: Option<usize>,
}

/// One tensor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraphTensor {
    /// Its place in `tensors`.
    pub index: usize,
    /// Its dims.
    pub shape: Vec<usize>,
    /// Its element type.
    pub dtype: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// The op that made it (`null`: made before the step: a parameter, a batch, an optimizer
    /// state).
    pub made_by: Option<usize>,
    /// The ops that read it, in order.
    pub read_by: Vec<usize>,
    /// When it was freed: the index of the op that was running, or about to, when it was (an
    /// op that consumed it, or the first op after the user dropped it); `ops.len()` after the
    /// last op; `null` while alive at the step's end, or where frees are not seen.
    pub freed_at: Option<usize>,
}

/// A producer-consumer edge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Edge {
    /// The op that made the tensor.
    pub from: usize,
    /// An op that read it.
    pub to: usize,
    /// The tensor.
    pub tensor: usize,
}

struct Recorder {
    step: usize,
    frees: Frees,
    ops: Vec<GraphOp>,
    tensors: Vec<GraphTensor>,
    /// The tensor each identity is now.
    current: HashMap<u64, usize>,
    /// The op of each forward call of the step.
    calls: HashMap<u64, usize>,
    unknown: usize,
    /// Whether the step after the chosen one began: host frees are no longer the step's.
    ended: bool,
}

/// Records the ops of step `step` (counted from 0), whose tensors' ends are seen as `frees`
/// says. The editions call [`set_step`] as steps begin.
pub fn start(step: usize, frees: Frees) {
    *GRAPH.lock().unwrap_or_else(PoisonError::into_inner) = Some(Recorder {
        step,
        frees,
        ops: Vec::new(),
        tensors: Vec::new(),
        current: HashMap::default(),
        calls: HashMap::default(),
        unknown: 0,
        ended: false,
    });
    CHOSEN.store(step, Ordering::Relaxed);
    RECORDING.store(step == 0, Ordering::Relaxed);
}

/// Step `step` begins (counted from 0): recording starts at the chosen step and ends after it.
pub fn set_step(step: usize) {
    let chosen = CHOSEN.load(Ordering::Relaxed);
    if chosen == NONE {
        return;
    }
    if step > chosen {
        end_recording();
    }
    RECORDING.store(step == chosen, Ordering::Relaxed);
}

/// The step chosen, while one is: an edition whose ops run later on another thread (Burn
/// 0.22's blocks) collects the tensors of the ops registered in it.
pub fn chosen_step() -> Option<usize> {
    Some(CHOSEN.load(Ordering::Relaxed)).filter(|step| *step != NONE)
}

/// Whether the chosen step runs now: the editions collect the ops' tensors only then.
#[inline]
pub fn recording() -> bool {
    RECORDING.load(Ordering::Relaxed)
}

fn end_recording() {
    RECORDING.store(false, Ordering::Relaxed);
    if let Some(recorder) = GRAPH
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_mut()
        && !recorder.ended
    {
        recorder.host_frees();
        recorder.ended = true;
        live_allocations::unwatch_all();
    }
}

/// The ends of tensors are seen as `frees` says (an edition that sees them).
pub fn frees_seen(frees: Frees) {
    if let Some(recorder) = GRAPH
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_mut()
    {
        recorder.frees = frees;
    }
}

/// The host buffer at `block` holds the tensor `tensor` ([`op`]'s index): its free, seen by
/// the tracking allocator, is the tensor's end.
pub fn watch_host_buffer(block: usize, tensor: usize) {
    if !live_allocations::tracing() {
        return;
    }
    live_allocations::watch(block, tensor as u32);
    if let Some(recorder) = GRAPH
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_mut()
    {
        recorder.frees = Frees::HostAllocator;
    }
}

/// An op of the chosen step ended: it goes into the graph. Returns the `tensors` indices its
/// outputs got, for [`freed`].
pub fn op(seen: OpSeen<'_>) -> Vec<usize> {
    let recorded = match seen.step {
        None => recording(),
        Some(step) => step == CHOSEN.load(Ordering::Relaxed),
    };
    if !recorded {
        return Vec::new();
    }
    let mut guard = GRAPH.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(recorder) = guard.as_mut() else {
        return Vec::new();
    };
    recorder.op(seen)
}

/// The tensors `tensors` (indices [`op`] returned) ended, before the op that runs now ended.
pub fn freed(tensors: &[usize]) {
    let mut guard = GRAPH.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(recorder) = guard.as_mut().filter(|r| !r.ended) else {
        return;
    };
    recorder.freed(tensors.iter().copied());
}

/// The tensors with identities `ids` ended in step `step` outside any op of the graph (Burn
/// 0.22's blocks of drops alone), before the next op.
pub fn ended(step: usize, ids: &[u64]) {
    if step != CHOSEN.load(Ordering::Relaxed) {
        return;
    }
    if let Some(recorder) = GRAPH
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_mut()
    {
        let tensors: Vec<usize> = (ids.iter())
            .filter_map(|id| recorder.current.get(id).copied())
            .collect();
        recorder.freed(tensors);
    }
}

/// Stops recording and hands over the graph, `None` when no step was chosen or the chosen one
/// never ran.
pub fn finish() -> Option<Graph> {
    CHOSEN.store(NONE, Ordering::Relaxed);
    RECORDING.store(false, Ordering::Relaxed);
    end_recording();
    let recorder = GRAPH
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()?;
    if recorder.ops.is_empty() {
        return None;
    }
    let edges = recorder
        .tensors
        .iter()
        .filter_map(|tensor| Some((tensor.made_by?, tensor)))
        .flat_map(|(from, tensor)| {
            tensor.read_by.iter().map(move |to| Edge {
                from,
                to: *to,
                tensor: tensor.index,
            })
        })
        .collect();
    Some(Graph {
        format_version: GRAPH_FORMAT_VERSION,
        step: recorder.step,
        frees: recorder.frees,
        ops: recorder.ops,
        tensors: recorder.tensors,
        edges,
        ops_with_unknown_tensors: recorder.unknown,
    })
}

impl Recorder {
    fn freed(&mut self, tensors: impl IntoIterator<Item = usize>) {
        let at = self.ops.len();
        for tensor in tensors {
            if let Some(tensor) = self.tensors.get_mut(tensor) {
                tensor.freed_at.get_or_insert(at);
            }
        }
    }

    /// The host buffers the tracking allocator saw freed since the last op.
    fn host_frees(&mut self) {
        if self.frees == Frees::HostAllocator {
            let freed = live_allocations::take_freed();
            self.freed(freed.into_iter().map(|tag| tag as usize));
        }
    }

    fn op(&mut self, seen: OpSeen<'_>) -> Vec<usize> {
        self.host_frees();
        let index = self.ops.len();
        let (link, pass) = seen.link;
        let mut inputs = Vec::with_capacity(seen.inputs.len());
        for tensor in seen.inputs {
            let at = match self.current.get(&tensor.id) {
                Some(at) => *at,
                None => self.new_tensor(tensor, None),
            };
            if self.tensors[at].read_by.last() != Some(&index) {
                self.tensors[at].read_by.push(index);
            }
            inputs.push(at);
        }
        let mut outputs = Vec::with_capacity(seen.outputs.len());
        for tensor in seen.outputs {
            // An op that wrote into an input's buffer (NdArray's in-place ops) made a new
            // tensor of the same identity: the input's value ends here.
            if let Some(before) = self.current.get(&tensor.id).copied()
                && inputs.contains(&before)
            {
                self.tensors[before].freed_at.get_or_insert(index);
            }
            outputs.push(self.new_tensor(tensor, Some(index)));
        }
        let ended: Vec<usize> = (seen.ended.iter())
            .filter_map(|id| self.current.get(id).copied())
            .collect();
        for tensor in ended {
            self.tensors[tensor].freed_at.get_or_insert(index);
        }
        if pass == Pass::Forward && link.call != 0 {
            self.calls.insert(link.call, index);
        }
        let forward = match pass {
            Pass::Forward => None,
            _ => lineage::forward_op(link.forward).map(|forward| ForwardOf {
                op: forward.op.name().to_owned(),
                phase: phase::name(forward.phase),
                index: self.calls.get(&link.call).copied(),
            }),
        };
        self.unknown += usize::from(seen.unknown_tensors);
        self.ops.push(GraphOp {
            index,
            op: seen.op.name().to_owned(),
            phase: phase::name(seen.phase),
            pass: match pass {
                Pass::Forward => "forward",
                Pass::Backward => "backward",
                Pass::Optimizer => "optimizer",
            },
            call_site: call_sites::call_site(seen.stack).map(|site| site.to_string()),
            forward,
            inputs,
            outputs: outputs.clone(),
        });
        outputs
    }

    fn new_tensor(&mut self, tensor: &TensorSeen, made_by: Option<usize>) -> usize {
        let index = self.tensors.len();
        self.tensors.push(GraphTensor {
            index,
            shape: tensor.shape.clone(),
            dtype: tensor.dtype.clone(),
            bytes: tensor.bytes,
            made_by,
            read_by: Vec::new(),
            freed_at: None,
        });
        self.current.insert(tensor.id, index);
        index
    }
}

/// Serialises the tests that record a graph.
#[cfg(test)]
pub(crate) fn tests_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::lineage::ForwardOp;

    static MATMUL: Op = Op::new("graph_float_matmul\0");
    static MATMUL_BACKWARD: Op = Op::new("graph_float_matmul_backward\0");

    fn tensor(id: u64, shape: &[usize]) -> TensorSeen {
        TensorSeen {
            id,
            shape: shape.to_vec(),
            dtype: "f32".to_owned(),
            bytes: 4 * shape.iter().product::<usize>() as u64,
        }
    }

    fn run(
        op: &'static Op,
        pass: Pass,
        inputs: &[TensorSeen],
        outputs: &[TensorSeen],
    ) -> Vec<usize> {
        let ids: Vec<u64> = inputs.iter().map(|t| t.id).collect();
        let forward = ForwardOp {
            op,
            phase: 0,
            path: 0,
            stack: 0,
        };
        let link = lineage::link(forward, pass, &ids);
        let out: Vec<u64> = outputs.iter().map(|t| t.id).collect();
        lineage::made(link, pass, &out);
        super::op(OpSeen {
            op,
            phase: 0,
            stack: 0,
            link: (link, pass),
            inputs,
            outputs,
            ended: &[],
            unknown_tensors: false,
            step: None,
        })
    }

    #[test]
    fn only_the_chosen_step_is_recorded_with_its_edges_frees_and_links() {
        let _lock = tests_lock();
        let _lineage = lineage::tests_lock();
        lineage::reset();
        start(1, Frees::HostAllocator);
        assert!(!recording());
        // Step 0: not recorded (its matmul is still the forward op of record for step 1's).
        let (x, w) = (tensor(1, &[2, 3]), tensor(2, &[3, 4]));
        let _ = run(
            &MATMUL,
            Pass::Forward,
            &[x.clone(), w.clone()],
            &[tensor(3, &[2, 4])],
        );
        set_step(1);
        assert!(recording());
        let y = tensor(4, &[2, 4]);
        let made = run(
            &MATMUL,
            Pass::Forward,
            &[x.clone(), w.clone()],
            std::slice::from_ref(&y),
        );
        assert_eq!(made, vec![2]);
        let grad = run(
            &MATMUL_BACKWARD,
            Pass::Backward,
            &[y.clone(), w.clone()],
            &[tensor(5, &[2, 3])],
        );
        freed(&made);
        set_step(2);
        assert!(!recording());
        let _ = run(&MATMUL, Pass::Forward, &[x, w], &[tensor(6, &[2, 4])]);
        freed(&grad);
        let graph = finish().expect("step 1 ran");
        let json = serde_json::to_value(&graph).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "format_version": 1,
                "step": 1,
                "frees": "host_allocator",
                "ops": [
                    {"index": 0, "op": "graph_float_matmul", "phase": "-", "pass": "forward",
                     "inputs": [0, 1], "outputs": [2]},
                    {"index": 1, "op": "graph_float_matmul_backward", "phase": "-",
                     "pass": "backward",
                     "forward": {"op": "graph_float_matmul", "phase": "-", "index": 0},
                     "inputs": [2, 1], "outputs": [3]},
                ],
                "tensors": [
                    {"index": 0, "shape": [2, 3], "dtype": "f32", "bytes": 24, "made_by": null,
                     "read_by": [0], "freed_at": null},
                    {"index": 1, "shape": [3, 4], "dtype": "f32", "bytes": 48, "made_by": null,
                     "read_by": [0, 1], "freed_at": null},
                    {"index": 2, "shape": [2, 4], "dtype": "f32", "bytes": 32, "made_by": 0,
                     "read_by": [1], "freed_at": 2},
                    {"index": 3, "shape": [2, 3], "dtype": "f32", "bytes": 24, "made_by": 1,
                     "read_by": [], "freed_at": null},
                ],
                "edges": [{"from": 0, "to": 1, "tensor": 2}],
                "ops_with_unknown_tensors": 0,
            })
        );
        assert_eq!(finish(), None, "handed over once");
    }
}
