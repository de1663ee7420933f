//! Which forward op each backward and optimizer op works for, found from the tensors the ops
//! share (`[stats] forward_links`).
//!
//! Burn's autodiff saves a forward op's inputs or outputs for its backward step; the backward
//! ops of that step read them, and the optimizer reads each parameter the forward read. So a
//! tensor seen in the forward pass names the forward ops that made and read it, and a backward
//! or optimizer op that reads it is linked to one of them:
//!
//! 1. the forward op that made or read the most of the op's inputs;
//! 2. on a tie, the one whose name begins the op's own (`conv2d` for `conv2d_x_backward`, `relu`
//!    for `relu_backward`), then the one the previous backward op was linked to (a step's ops
//!    run one after another), then the forward op first seen latest;
//! 3. an op that reads no forward tensor takes the link of the op before it when that one's
//!    forward op names it (`linear_bias_backward` after `linear_weight_backward`), else the
//!    link of the op that made its inputs (a gradient's sum or reshape, Adam's moments), which
//!    may be one of an earlier step;
//! 4. an op whose inputs are all unknown (the ones that seed the backward pass, the loss's
//!    mean backward) takes the link of the op before it: at the start of the backward pass, the
//!    last forward op, which is the loss's.
//!
//! A tensor is known by its identity where the backend gives one without reading it
//! (`Profiled`'s edition computes them); where none has one, rule 4 alone links, by order.

use rustc_hash::FxHashMap as HashMap;
use std::sync::{Mutex, PoisonError};

use super::op::Op;

/// What part of a training step an op belongs to, for its link.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Pass {
    /// The forward pass (and anything outside backward and optimizer): ops that are linked to.
    Forward,
    /// Burn's autodiff backward pass.
    Backward,
    /// The optimizer's update.
    Optimizer,
}

impl Pass {
    /// The pass a user range (phase) named `name` is: `backward`, `optimizer` (or `optim`), or
    /// `None` for any other name.
    pub fn of_range(name: &str) -> Option<Pass> {
        match name {
            "backward" => Some(Pass::Backward),
            "optimizer" | "optim" => Some(Pass::Optimizer),
            _ => None,
        }
    }
}

/// The pass of the user range (phase) `phase` by its name ([`Pass::of_range`]), `None` for 0
/// and any other name.
pub fn pass_of_phase(phase: u32) -> Option<Pass> {
    thread_local! {
        /// By phase id: `None` until asked, then the answer.
        static PASSES: std::cell::RefCell<Vec<Option<Option<Pass>>>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }
    if phase == 0 {
        return None;
    }
    let index = phase as usize;
    if let Some(Some(known)) = PASSES.with_borrow(|passes| passes.get(index).copied()) {
        return known;
    }
    let pass = Pass::of_range(&super::phase::name(phase));
    PASSES.with_borrow_mut(|passes| {
        if passes.len() <= index {
            passes.resize(index + 1, None);
        }
        passes[index] = Some(pass);
    });
    pass
}

/// A forward op as the links name it: its op, phase (innermost user range), range path and
/// call stack.
#[derive(Clone, Copy, Debug)]
pub struct ForwardOp {
    /// The op.
    pub op: &'static Op,
    /// Its phase ([`phase`](super::phase) id).
    pub phase: u32,
    /// The path of its user ranges ([`phase::current_path`](super::phase::current_path)), the
    /// module it is counted in.
    pub path: u32,
    /// Its call stack (the call-site sink's id), 0 when not taken.
    pub stack: u32,
}

impl ForwardOp {
    fn key(&self) -> (usize, u32, u32, u32) {
        (
            self.op as *const Op as usize,
            self.phase,
            self.path,
            self.stack,
        )
    }
}

impl PartialEq for ForwardOp {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for ForwardOp {}

impl std::hash::Hash for ForwardOp {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state)
    }
}

/// What an op is linked to: the forward op it works for, and which call of it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Link {
    /// The forward op ([`forward_op`]), 0 for none.
    pub forward: u32,
    /// Its call: forward calls are numbered from 1 in the order they run; 0 for none.
    pub call: u64,
}

impl Link {
    /// The payload of the NVTX range of an op of `pass` linked so, as PyTorch's `emit_nvtx`
    /// gives each range the sequence number of the forward op: a forward op's call, or the
    /// forward call a backward op works for; 0 (no payload) for the rest.
    pub fn nvtx_payload(self, pass: Pass) -> u64 {
        match pass {
            Pass::Forward | Pass::Backward => self.call,
            Pass::Optimizer => 0,
        }
    }

    /// The ends of `fwdbwd` flows an op of `pass` linked so has on the timeline: `(its forward
    /// call, 0)` for a forward op, `(0, the forward call)` for a backward op, none for the rest.
    pub fn flow_calls(self, pass: Pass) -> (u64, u64) {
        match pass {
            Pass::Forward => (self.call, 0),
            Pass::Backward => (0, self.call),
            Pass::Optimizer => (0, 0),
        }
    }
}

/// What is known of one tensor.
struct Tensor {
    /// The forward call that made it, or the one its maker (a backward or optimizer op) was
    /// linked to.
    made_for: Link,
    /// Whether a forward op made it.
    made_in_forward: bool,
    /// The forward ops that read it, first four, each with its latest call.
    read_by: Vec<Link>,
    /// When it was last made or read ([`Lineage::clock`]).
    touched: u64,
}

/// The tensors seen, and the forward ops by id.
struct Lineage {
    tensors: HashMap<u64, Tensor>,
    forward_ops: Vec<ForwardOp>,
    ids: HashMap<ForwardOp, u32>,
    /// The link of the last op.
    previous: Link,
    /// Forward calls numbered so far.
    calls: u64,
    /// Ops seen; a tensor untouched for as many ops as were seen since the last pruning is
    /// dropped at the next.
    clock: u64,
    pruned_at: (u64, usize),
}

static LINEAGE: Mutex<Option<Lineage>> = Mutex::new(None);

/// The most forward ops a tensor keeps as its readers.
const READERS: usize = 4;
/// Below this many tensors nothing is pruned.
const PRUNE_FROM: usize = 4096;

/// Forgets every tensor and forward op (a session's start).
pub fn reset() {
    *LINEAGE.lock().unwrap_or_else(PoisonError::into_inner) = Some(Lineage {
        tensors: HashMap::default(),
        forward_ops: Vec::new(),
        ids: HashMap::default(),
        previous: Link::default(),
        calls: 0,
        clock: 0,
        pruned_at: (0, 0),
    });
}

/// The forward op of link `id` (from [`link`]); `None` for 0 or an id of before the last
/// [`reset`].
pub fn forward_op(id: u32) -> Option<ForwardOp> {
    let lineage = LINEAGE.lock().unwrap_or_else(PoisonError::into_inner);
    let index = usize::try_from(id).ok()?.checked_sub(1)?;
    lineage.as_ref()?.forward_ops.get(index).copied()
}

/// An op of `pass` is about to run on tensors with identities `inputs`: its link, the forward
/// op and call it works for (for a forward op, itself and this call), `Link::default()` when
/// none is found. Pass the link to [`made`] with the op's outputs.
pub fn link(forward: ForwardOp, pass: Pass, inputs: &[u64]) -> Link {
    let mut guard = LINEAGE.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(lineage) = guard.as_mut() else {
        return Link::default();
    };
    lineage.clock += 1;
    let clock = lineage.clock;
    if pass == Pass::Forward {
        lineage.calls += 1;
        let link = Link {
            forward: lineage.intern(forward),
            call: lineage.calls,
        };
        lineage.previous = link;
        for input in inputs {
            let tensor = lineage.tensors.entry(*input).or_insert(Tensor {
                made_for: Link::default(),
                made_in_forward: false,
                read_by: Vec::new(),
                touched: clock,
            });
            tensor.touched = clock;
            let readers = tensor.read_by.len();
            match tensor
                .read_by
                .iter_mut()
                .find(|r| r.forward == link.forward)
            {
                Some(reader) => reader.call = link.call,
                None if readers < READERS => tensor.read_by.push(link),
                None => {}
            }
        }
        return link;
    }
    let chosen = lineage.choose(forward.op, inputs);
    for input in inputs {
        if let Some(tensor) = lineage.tensors.get_mut(input) {
            tensor.touched = clock;
        }
    }
    lineage.previous = chosen;
    chosen
}

/// The op linked to `link` made tensors with identities `outputs`: each is known from now on
/// as made for that forward op (by it, when `pass` is the forward).
pub fn made(link: Link, pass: Pass, outputs: &[u64]) {
    let mut guard = LINEAGE.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(lineage) = guard.as_mut() else {
        return;
    };
    let clock = lineage.clock;
    for output in outputs {
        lineage.tensors.insert(
            *output,
            Tensor {
                made_for: link,
                made_in_forward: pass == Pass::Forward,
                read_by: Vec::new(),
                touched: clock,
            },
        );
    }
    lineage.prune();
}

impl Lineage {
    fn intern(&mut self, forward: ForwardOp) -> u32 {
        if let Some(id) = self.ids.get(&forward) {
            return *id;
        }
        self.forward_ops.push(forward);
        let id = self.forward_ops.len() as u32;
        self.ids.insert(forward, id);
        id
    }

    /// The link of a backward or optimizer op named as `op` reading `inputs` (the module docs'
    /// rules).
    fn choose(&self, op: &'static Op, inputs: &[u64]) -> Link {
        // Each candidate forward op with its votes and the latest of its calls seen.
        let mut direct: Vec<(Link, u32)> = Vec::new();
        let mut inherited: Vec<(Link, u32)> = Vec::new();
        let vote = |votes: &mut Vec<(Link, u32)>, link: Link| {
            if link.forward == 0 {
                return;
            }
            match votes.iter_mut().find(|(c, _)| c.forward == link.forward) {
                Some((candidate, count)) => {
                    *count += 1;
                    candidate.call = candidate.call.max(link.call);
                }
                None => votes.push((link, 1)),
            }
        };
        for tensor in inputs.iter().filter_map(|input| self.tensors.get(input)) {
            if tensor.made_in_forward || !tensor.read_by.is_empty() {
                let mut links = tensor.read_by.clone();
                if tensor.made_in_forward
                    && !links.iter().any(|l| l.forward == tensor.made_for.forward)
                {
                    links.push(tensor.made_for);
                }
                for link in links {
                    vote(&mut direct, link);
                }
            } else {
                vote(&mut inherited, tensor.made_for);
            }
        }
        let named_for = |link: &Link| {
            link.forward != 0
                && self
                    .forward_ops
                    .get(link.forward as usize - 1)
                    .is_some_and(|forward| names_its_backward(forward.op.name(), op.name()))
        };
        if direct.is_empty() && named_for(&self.previous) {
            // A backward op of the step that just ran, reading only gradients
            // (`linear_bias_backward` after `linear_weight_backward`).
            return self.previous;
        }
        let votes = if direct.is_empty() { inherited } else { direct };
        let Some(most) = votes.iter().map(|(_, count)| *count).max() else {
            return self.previous;
        };
        let tied: Vec<Link> = votes
            .iter()
            .filter(|(_, count)| *count == most)
            .map(|(link, _)| *link)
            .collect();
        tied.iter()
            .find(|link| named_for(link))
            .or_else(|| {
                tied.iter()
                    .find(|link| link.forward == self.previous.forward)
            })
            .or_else(|| tied.iter().max_by_key(|link| link.forward))
            .copied()
            .unwrap_or_default()
    }

    /// Drops the tensors untouched since the last pruning, once there are twice as many as it
    /// left (and at least [`PRUNE_FROM`]).
    fn prune(&mut self) {
        let (at, left) = self.pruned_at;
        if self.tensors.len() < PRUNE_FROM.max(2 * left) {
            return;
        }
        self.tensors.retain(|_, tensor| tensor.touched > at);
        self.pruned_at = (self.clock, self.tensors.len());
    }
}

/// Whether a backward op named `backward` is named for the forward op `forward`:
/// `conv2d_x_backward` for `conv2d`, `relu_backward` for `relu`, `float_max_pool2d_backward`...
fn names_its_backward(forward: &str, backward: &str) -> bool {
    let forward = forward.strip_prefix("float_").unwrap_or(forward);
    let backward = backward.strip_prefix("float_").unwrap_or(backward);
    backward.ends_with("backward")
        && backward
            .strip_prefix(forward)
            .is_some_and(|rest| rest.starts_with('_'))
}

/// Serialises the tests that use the process's lineage.
#[cfg(test)]
pub(crate) fn tests_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    static MATMUL: Op = Op::new("float_matmul\0");
    static RELU: Op = Op::new("relu\0");
    static RELU_BACKWARD: Op = Op::new("relu_backward\0");
    static SWAP_DIMS: Op = Op::new("float_swap_dims\0");
    static SUM_DIM: Op = Op::new("float_sum_dim\0");
    static SUB: Op = Op::new("float_sub\0");

    fn forward(op: &'static Op, phase: u32) -> ForwardOp {
        ForwardOp {
            op,
            phase,
            path: phase,
            stack: 0,
        }
    }

    /// One op: its link's forward op, with its outputs made.
    fn run(op: &'static Op, phase: u32, pass: Pass, inputs: &[u64], outputs: &[u64]) -> u32 {
        run_call(op, phase, pass, inputs, outputs).forward
    }

    /// One op: its link, with its outputs made.
    fn run_call(op: &'static Op, phase: u32, pass: Pass, inputs: &[u64], outputs: &[u64]) -> Link {
        let link = link(forward(op, phase), pass, inputs);
        made(link, pass, outputs);
        link
    }

    #[test]
    fn backward_ops_are_linked_by_the_tensors_they_share_with_the_forward() {
        let _lock = crate::context::lineage::tests_lock();
        reset();
        // Forward: x (1) -relu-> h (2) -matmul with w (3)-> y (4), in two modules.
        let relu = run(&RELU, 1, Pass::Forward, &[1], &[2]);
        let matmul = run(&MATMUL, 2, Pass::Forward, &[2, 3], &[4]);
        // Backward of the matmul: w^T (5), the gradient of h (6); h^T (7) and w's gradient (8).
        assert_eq!(run(&SWAP_DIMS, 9, Pass::Backward, &[3], &[5]), matmul);
        assert_eq!(run(&MATMUL, 9, Pass::Backward, &[10, 5], &[6]), matmul);
        // h is relu's output and the matmul's input: the previous op's link decides.
        assert_eq!(run(&SWAP_DIMS, 9, Pass::Backward, &[2], &[7]), matmul);
        assert_eq!(run(&MATMUL, 9, Pass::Backward, &[7, 10], &[8]), matmul);
        // relu's backward reads h too: its name decides.
        assert_eq!(run(&RELU_BACKWARD, 9, Pass::Backward, &[2, 6], &[11]), relu);
        // A sum of a gradient reads no forward tensor: it takes its input's link.
        assert_eq!(run(&SUM_DIM, 9, Pass::Backward, &[8], &[12]), matmul);
        // The optimizer's update of w reads w: the matmul that read it.
        assert_eq!(run(&SUB, 10, Pass::Optimizer, &[3, 12], &[13]), matmul);
        assert_eq!(forward_op(matmul).map(|f| f.phase), Some(2));
        // An op on tensors never seen takes the link of the op before it.
        assert_eq!(run(&SUM_DIM, 9, Pass::Backward, &[99], &[100]), matmul);
        reset();
        assert_eq!(run(&SUM_DIM, 9, Pass::Backward, &[99], &[100]), 0);
    }

    #[test]
    fn a_backward_op_is_linked_to_the_latest_call_of_its_forward_op() {
        let _lock = crate::context::lineage::tests_lock();
        reset();
        // Two steps: the matmul reads w (1) in each, its backward reads w after the second.
        let first = run_call(&MATMUL, 1, Pass::Forward, &[1, 2], &[3]);
        let second = run_call(&MATMUL, 1, Pass::Forward, &[1, 4], &[5]);
        assert_eq!((first.forward, first.call), (second.forward, 1));
        assert_eq!(second.call, 2);
        assert_eq!(run_call(&SWAP_DIMS, 9, Pass::Backward, &[1], &[6]), second);
        // Its output carries the call on to the op that reads it.
        assert_eq!(run_call(&SUM_DIM, 9, Pass::Backward, &[6], &[7]), second);
    }

    #[test]
    fn names_of_backward_ops() {
        assert!(names_its_backward("conv2d", "conv2d_x_backward"));
        assert!(names_its_backward("relu", "relu_backward"));
        assert!(names_its_backward(
            "max_pool2d_with_indices",
            "max_pool2d_with_indices_backward"
        ));
        assert!(!names_its_backward("conv2d", "conv2d"));
        assert!(!names_its_backward(
            "float_matmul",
            "float_max_pool2d_backward"
        ));
    }
}
