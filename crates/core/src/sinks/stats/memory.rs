//! Per-op memory in the statistics: what each call allocated and freed and the memory in use
//! when it ended, added to its row; each device's peak with the op, phase and step it was
//! reached at; and what the ops of the current step allocated (for an out-of-memory message).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::shape::Shape;
use serde::Serialize;

use super::Aggregate;
use crate::context::op::Op;
use crate::context::{device as context_device, memory, phase, warmup};

/// The memory of one call of an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[doc(hidden)]
pub struct OpMemory {
    /// Bytes allocated while it ran.
    pub alloc_bytes: u64,
    /// Bytes freed while it ran.
    pub freed_bytes: u64,
    /// Memory in use when it ended (its device's, or the host's).
    pub in_use_bytes: u64,
}

/// Where and when a device's memory in use was highest, among the ends of ops.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemoryPeak {
    /// The device (`host` for host memory).
    pub device: String,
    /// Memory in use at the peak.
    pub bytes: u64,
    /// The op at whose end it was reached.
    pub op: String,
    /// Its phase.
    pub phase: String,
    /// The step (steps finished before it, counting warm-up).
    pub step: usize,
}

/// What one op allocated in the current step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepAllocation {
    /// The op.
    pub op: String,
    /// Bytes it allocated in the step, over its calls.
    pub bytes: u64,
}

struct Peak {
    device: u32,
    bytes: u64,
    op: &'static Op,
    phase: u32,
    step: usize,
}

static PEAKS: Mutex<Vec<Peak>> = Mutex::new(Vec::new());
/// The step the allocations are of, and bytes by op.
static STEP_ALLOCATIONS: Mutex<(usize, Vec<(&'static Op, u64)>)> = Mutex::new((0, Vec::new()));
/// An op asked for its memory on a device that reports none, without a tracking allocator.
static HOST_UNTRACKED: AtomicBool = AtomicBool::new(false);

/// Adds a call's memory to the row of `op` run in `phase` on `device` from `stack` with
/// `shapes`: an op whose memory was read on its launch thread after it ended.
#[doc(hidden)]
pub fn record_memory(
    op: &'static Op,
    (phase, device, stack, forward): (u32, u32, u32, u32),
    shapes: Option<Box<[Shape]>>,
    call: OpMemory,
) {
    if !note_call(op, (phase, device), call) {
        return;
    }
    super::with_row(op, (phase, device, stack, forward), shapes, |row| {
        row.add_memory(call)
    });
}

/// Counts a call's allocations in its step, and its memory in use against its device's peak;
/// false in warm-up (nothing goes to the rows then).
pub(super) fn note_call(op: &'static Op, (phase, device): (u32, u32), call: OpMemory) -> bool {
    let step = memory::step();
    {
        let mut allocations = STEP_ALLOCATIONS
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if allocations.0 != step {
            *allocations = (step, Vec::new());
        }
        match allocations
            .1
            .iter_mut()
            .find(|(other, _)| std::ptr::eq(*other, op))
        {
            Some((_, bytes)) => *bytes += call.alloc_bytes,
            None => allocations.1.push((op, call.alloc_bytes)),
        }
    }
    if warmup::in_warmup() {
        return false;
    }
    let mut peaks = PEAKS.lock().unwrap_or_else(PoisonError::into_inner);
    let peak = Peak {
        device,
        bytes: call.in_use_bytes,
        op,
        phase,
        step,
    };
    match peaks.iter_mut().find(|peak| peak.device == device) {
        Some(highest) if highest.bytes < call.in_use_bytes => *highest = peak,
        Some(_) => {}
        None => peaks.push(peak),
    }
    true
}

impl Aggregate {
    /// Adds one call's memory.
    pub(super) fn add_memory(&mut self, call: OpMemory) {
        self.memory_calls += 1;
        self.alloc_bytes += call.alloc_bytes;
        self.freed_bytes += call.freed_bytes;
        self.peak_bytes = self.peak_bytes.max(call.in_use_bytes);
    }
}

/// Notes that an op's memory could not be read: host memory without a tracking allocator.
#[doc(hidden)]
pub fn host_untracked() {
    HOST_UNTRACKED.store(true, Ordering::Relaxed);
}

/// Whether some op's host memory went untracked (no tracking allocator installed).
#[doc(hidden)]
pub fn host_was_untracked() -> bool {
    HOST_UNTRACKED.load(Ordering::Relaxed)
}

/// Each device's peak memory in use at the end of an op, after warm-up, with the op, phase
/// and step; devices in the order their first op was recorded.
pub fn memory_peaks() -> Vec<MemoryPeak> {
    PEAKS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .map(|peak| MemoryPeak {
            device: device_name(peak.device),
            bytes: peak.bytes,
            op: peak.op.name().to_owned(),
            phase: phase::name(peak.phase),
            step: peak.step,
        })
        .collect()
}

/// What the ops of the current step allocated, most first (warm-up steps included).
pub fn step_allocations() -> Vec<StepAllocation> {
    let allocations = STEP_ALLOCATIONS
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if allocations.0 != memory::step() {
        return Vec::new();
    }
    let mut by_op: Vec<StepAllocation> = allocations
        .1
        .iter()
        .map(|(op, bytes)| StepAllocation {
            op: op.name().to_owned(),
            bytes: *bytes,
        })
        .collect();
    by_op.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.op.cmp(&b.op)));
    by_op
}

/// A device's name for memory: `host` for ops whose device is not known (host memory).
#[doc(hidden)]
pub fn device_name(device: u32) -> String {
    match device {
        0 => "host".to_owned(),
        id => context_device::name(id),
    }
}

pub(super) fn reset() {
    PEAKS.lock().unwrap_or_else(PoisonError::into_inner).clear();
    *STEP_ALLOCATIONS
        .lock()
        .unwrap_or_else(PoisonError::into_inner) = (0, Vec::new());
    HOST_UNTRACKED.store(false, Ordering::Relaxed);
}
