//! The phase a fused block's ops were registered in.
//!
//! A fused block runs on burn's fusion thread, when its stream is flushed: often during the
//! next phase (a forward's last ops run when the backward's first ops arrive). Tensor ids
//! tell when an op was registered: burn-fusion numbers tensors from one counter as ops are
//! registered, on the registering thread. So at each change of phase this thread's stream
//! logs the next id and the new phase, and a block's phase is the one logged last before its
//! first output's id. Blocks of a stream run with that stream current on the fusion thread.
//!
//! Logging starts where a fused device is first seen on the user's thread: a tensor handed to
//! fusion (from data), whose conversion checks once per handle whether it has started (one
//! load, beside burn-fusion's own work per op). Starting later, in the fusion thread's first
//! stream, would miss the phases a program enters before fusion has run anything.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::sync::{LazyLock, Mutex, MutexGuard, OnceLock, PoisonError};

use burn_backend::StreamId;
use burn_ir::TensorId;

use crate::context::phase;

/// The entries kept per stream: a block runs long before this many phase changes pass.
const KEPT: usize = 1024;

/// The next tensor id, from burn-fusion's counter (it takes one id).
static NEXT_ID: OnceLock<Box<dyn Fn() -> TensorId + Send + Sync>> = OnceLock::new();

/// Per stream: (first id registered in the phase, phase), oldest first.
type Logs = HashMap<StreamId, VecDeque<(TensorId, u32)>>;
static LOGS: LazyLock<Mutex<Logs>> = LazyLock::new(|| Mutex::new(HashMap::new()));

fn logs() -> MutexGuard<'static, Logs> {
    LOGS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Makes this thread, the fusion thread of `device`, give unfused ops a phase of the stream
/// they come from ([`unfused_phase`]), and names it (`fusion <device>`) in NVTX and on the
/// timeline; once.
pub(super) fn on_fusion_thread(device: &impl std::fmt::Debug) {
    thread_local! {
        static DONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if DONE.replace(true) {
        return;
    }
    crate::numerics_batch::read_with_the_session();
    phase::source_from(phase::PhaseSource {
        phase: unfused_phase,
        ran_dry,
    });
    crate::nvtx::name_current_thread(&format!("fusion {device:?}"));
}

/// Whether phase changes are logged already.
pub(super) fn is_installed() -> bool {
    NEXT_ID.get().is_some()
}

/// Starts logging phase changes, once, with `next_id` telling burn-fusion's next tensor id
/// (`runtime::install_registration`, where a fused device is first seen).
pub(super) fn install(next_id: impl Fn() -> TensorId + Send + Sync + 'static) {
    if NEXT_ID.set(Box::new(next_id)).is_ok() {
        // This thread may be in a phase already: its ops so far belong to it.
        let current = phase::current();
        if current != 0 {
            log(StreamId::current(), TensorId::new(0), current);
        }
        phase::watch(changed);
    }
}

fn log(stream: StreamId, from: TensorId, phase: u32) {
    let mut logs = logs();
    let log = logs.entry(stream).or_default();
    if log.len() == KEPT {
        log.pop_front();
    }
    log.push_back((from, phase));
}

/// This thread's phase changed to `phase`.
fn changed(phase: u32) {
    if let Some(next_id) = NEXT_ID.get() {
        log(StreamId::current(), next_id(), phase);
    }
}

/// The phase the current stream is in now, as last logged (0 when it logged none).
pub(super) fn latest_phase() -> u32 {
    logs()
        .get(&StreamId::current())
        .and_then(|log| log.back())
        .map_or(0, |(_, phase)| *phase)
}

thread_local! {
    /// Per stream, on its fusion thread: the phase of the last op of the last fused block run
    /// since the stream last ran everything registered (a read or a sync).
    static AFTER_BLOCK: RefCell<HashMap<StreamId, u32>> = RefCell::new(HashMap::new());
}

/// A fused block of the current stream, whose last op was registered in `phase`, runs.
pub(super) fn block_runs(phase: u32) {
    AFTER_BLOCK.with_borrow_mut(|after| after.insert(StreamId::current(), phase));
}

/// The stream ran everything registered before now (a read or a sync was asked of it).
fn ran_dry() {
    AFTER_BLOCK.with_borrow_mut(|after| after.remove(&StreamId::current()));
}

/// The phase of an op fusion runs unfused, on the fusion thread. Nothing says when it was
/// registered: after the stream's queue ran dry on a read or a sync (which run when asked
/// for, in the phase of the thread that waits for them), ops run as they arrive, in the phase
/// the stream is in now; after a fused block ran, in the phase of the block's last op. The
/// fusion thread lags behind the thread registering ops (whenever the device's queue is
/// full), so the stream's latest phase would be phases ahead; the block's is out only for the
/// ops of a new phase that run before its first block.
fn unfused_phase() -> u32 {
    AFTER_BLOCK
        .with_borrow(|after| after.get(&StreamId::current()).copied())
        .unwrap_or_else(latest_phase)
}

/// The phase the current stream was in when the tensor `written` was registered (0 when it
/// logged no phase before it).
pub(super) fn phase_of(written: TensorId) -> u32 {
    let logs = logs();
    let Some(log) = logs.get(&StreamId::current()) else {
        return 0;
    };
    match log.partition_point(|(from, _)| *from <= written) {
        0 => 0,
        after => log[after - 1].1,
    }
}
