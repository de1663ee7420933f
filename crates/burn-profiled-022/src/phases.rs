//! The user's phase, carried to the fusion thread in order with the ops it registers.
//!
//! A user range opens and closes on the user's thread; the ops it registers run later, on the
//! fusion thread, often after the range closed (fusion waits for more ops, or for a read). At
//! each change of phase, the user's thread queues a small task on the fusion thread's runner
//! ([`runners`](crate::runners)), which takes it in one FIFO with burn-fusion's registrations,
//! so the task runs there after the ops registered before the change and before those after
//! it. The fusion thread so knows, at each registration, the phase of the stream that made it,
//! and a block is in the phase its first op was registered in. Nothing is drained or waited
//! for.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use burn_ir::{OperationIr, TensorId};
use burn_profiled_core::context::memory as context_memory;
use burn_profiled_core::context::phase;
use burn_std::stream::StreamId;

use crate::runners::FusionRunner;

thread_local! {
    /// On the fusion thread: each stream's phase and range path, as its last cursor task set
    /// them.
    static STREAM_PHASES: RefCell<HashMap<StreamId, (u32, u32)>> = RefCell::new(HashMap::new());
    /// On the fusion thread: the phase, the range path and the step each registered op's
    /// outputs were made in, until the block that runs the op takes them.
    static OUTPUT_PHASES: RefCell<HashMap<TensorId, (u32, u32, u32)>> =
        RefCell::new(HashMap::new());
    /// On the fusion thread: the step of the ops registered now, carried like the phases (the
    /// run's step counter moves on the user's thread, ahead of the registrations queued).
    static REGISTRATION_STEP: Cell<u32> = const { Cell::new(0) };
}

/// The cursors of the devices sessions were started on.
static CURSORS: Mutex<Vec<FusionRunner>> = Mutex::new(Vec::new());

/// Starts carrying the phases of every thread to the fusion thread of `handle`.
pub(crate) fn follow(handle: FusionRunner) {
    // The user's phase at the start, for the ops this thread registers before it changes.
    let stream = StreamId::current();
    let now = (phase::current(), phase::current_path());
    let step = context_memory::step() as u32;
    handle.submit(move |_| {
        set_stream_phase(stream, now);
        REGISTRATION_STEP.set(step);
    });
    CURSORS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(handle);
    phase::watch(phase_changed);
}

fn set_stream_phase(stream: StreamId, phase: (u32, u32)) {
    STREAM_PHASES.with_borrow_mut(|phases| phases.insert(stream, phase));
}

/// The phase of the calling thread changed to `phase`: queue it on every followed device.
fn phase_changed(phase: u32) {
    let stream = StreamId::current();
    let phase = (phase, phase::current_path());
    for handle in CURSORS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
    {
        handle.submit(move |_| set_stream_phase(stream, phase));
    }
}

/// A step ended, and `step` steps are done: queue it on every followed device, so that the ops
/// registered after it are of the next step.
pub(crate) fn step_ended(step: usize) {
    for handle in CURSORS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
    {
        handle.submit(move |_| REGISTRATION_STEP.set(step as u32));
    }
}

/// On the fusion thread: the step of the ops registered now.
pub(crate) fn registration_step() -> u32 {
    REGISTRATION_STEP.get()
}

/// On the fusion thread, as `operation` is registered: its outputs are made in the phase of
/// the stream registering it, in the step it was registered in (the block of an op that nothing
/// reads may run steps later).
pub(crate) fn registered(operation: &OperationIr) {
    let step = REGISTRATION_STEP.get();
    let phase = STREAM_PHASES.with_borrow(|phases| {
        phases
            .get(&StreamId::current())
            .copied()
            .unwrap_or_default()
    });
    OUTPUT_PHASES.with_borrow_mut(|outputs| {
        for output in operation.outputs() {
            outputs.insert(output.id, (phase.0, phase.1, step));
        }
    });
}

/// Where a block was registered: the phase and range path of its first op with an output, and
/// the step (0, outside any range, and no step when no op has one).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BlockPhase {
    pub(crate) phase: u32,
    pub(crate) path: u32,
    pub(crate) step: Option<u32>,
}

/// On the fusion thread, as a block of `operations` starts: where it was registered.
pub(crate) fn of_block<'a>(operations: impl Iterator<Item = &'a OperationIr>) -> BlockPhase {
    OUTPUT_PHASES.with_borrow_mut(|outputs| {
        if outputs.is_empty() {
            return BlockPhase::default();
        }
        let mut first = None;
        for operation in operations {
            for output in operation.outputs() {
                if let Some(made_in) = outputs.remove(&output.id) {
                    first.get_or_insert(made_in);
                }
            }
        }
        first.map_or_else(BlockPhase::default, |(phase, path, step)| BlockPhase {
            phase,
            path,
            step: Some(step),
        })
    })
}
