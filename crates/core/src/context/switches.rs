//! What is switched on, in one word, so an op with everything off pays one relaxed load.
//!
//! Each sink sets its own bit when it starts and clears it when it stops; the probe reads the
//! whole byte once per op and passes it along, so an op ends exactly as it started.

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Mutex, PoisonError};

/// The switches, one bit each.
pub type Flags = u16;

/// NVTX op ranges in the `burn` domain.
pub const RANGES: Flags = 1;
/// `B::sync` of the op's device before the op starts and before it is reported finished.
pub const SYNC: Flags = 1 << 1;
/// At least one observer is installed.
pub const OBSERVE: Flags = 1 << 2;
/// Op statistics are recorded.
pub const STATS: Flags = 1 << 3;
/// The timeline is recorded.
pub const TRACE: Flags = 1 << 4;
/// Statistics are keyed by input shapes.
pub const SHAPES: Flags = 1 << 5;
/// Device time: each op tags the kernel launches it makes with its id.
pub const DEVICE: Flags = 1 << 6;
/// A launch thread is attached: ops outside its steps queue their ranges there. Reads as on
/// only while there is something to queue (op ranges or device time), so that an attached
/// launch thread with everything else off leaves ops on the one-load path.
pub const QUEUED: Flags = 1 << 7;
/// Per-op numerics: each op's outputs are read for their fingerprints or checked for NaN and
/// Inf (`[numerics]`).
pub const NUMERICS: Flags = 1 << 8;
/// Backward and optimizer ops are linked to forward ops (`context::lineage`): ops take the
/// identities of their tensors.
pub const LINKS: Flags = 1 << 9;

/// What the probe reads.
static FLAGS: AtomicU16 = AtomicU16::new(0);
/// What was asked for; `FLAGS` is derived from it.
static REQUESTED: Mutex<Requested> = Mutex::new(Requested {
    flags: 0,
    memory_per_op: false,
    nvtx_tool: false,
});

#[derive(Clone, Copy)]
struct Requested {
    /// The flags switched on.
    flags: Flags,
    /// Per-op memory reads device memory on the launch thread, so it keeps ops queuing there.
    memory_per_op: bool,
    /// Whether NVTX loaded a tool: without one, op ranges read as off.
    nvtx_tool: bool,
}

/// Sets or clears `flag`.
pub fn set(flag: Flags, on: bool) {
    update(|requested| {
        if on {
            requested.flags |= flag;
        } else {
            requested.flags &= !flag;
        }
    });
}

/// Per-op memory on or off: with it, an attached launch thread takes the ops' queued work
/// even with op ranges and device time off.
pub fn set_memory_per_op(on: bool) {
    update(|requested| requested.memory_per_op = on);
}

/// Whether an NVTX tool takes op ranges: [`RANGES`] reads as on only with one.
pub fn set_nvtx_tool(attached: bool) {
    update(|requested| requested.nvtx_tool = attached);
}

/// Whether `flag` was switched on, whether or not it reads as on.
pub fn requested(flag: Flags) -> bool {
    REQUESTED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .flags
        & flag
        != 0
}

fn update(change: impl FnOnce(&mut Requested)) {
    let mut requested = REQUESTED.lock().unwrap_or_else(PoisonError::into_inner);
    change(&mut requested);
    publish(*requested);
}

fn publish(requested: Requested) {
    let mut flags = requested.flags;
    if !requested.nvtx_tool {
        flags &= !RANGES;
    }
    if flags & (RANGES | DEVICE) == 0 && !requested.memory_per_op {
        flags &= !QUEUED;
    }
    FLAGS.store(flags, Ordering::Relaxed);
}

/// All switches: `0` means everything is off.
#[inline(always)]
pub fn all() -> Flags {
    FLAGS.load(Ordering::Relaxed)
}

/// Whether `flag` is on.
pub fn is_on(flag: Flags) -> bool {
    all() & flag != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attached_launch_thread_alone_leaves_ops_on_the_off_path() {
        let _serial = crate::sinks::TEST_SERIAL
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        set_nvtx_tool(true);
        set(QUEUED, true);
        assert_eq!(all(), 0);
        set(RANGES, true);
        assert_eq!(all(), RANGES | QUEUED);
        set(RANGES, false);
        set(DEVICE, true);
        assert_eq!(all(), DEVICE | QUEUED);
        set(DEVICE, false);
        assert_eq!(all(), 0);
        set(QUEUED, false);
        set(RANGES, true);
        assert_eq!(all(), RANGES);
        set(RANGES, false);
        set_nvtx_tool(false);
    }

    #[test]
    fn op_ranges_read_as_off_without_an_nvtx_tool_and_keep_no_launch_thread_queuing() {
        let _serial = crate::sinks::TEST_SERIAL
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        set_nvtx_tool(false);
        set(QUEUED, true);
        set(RANGES, true);
        assert_eq!(all(), 0);
        assert!(requested(RANGES));
        set(RANGES, false);
        set(QUEUED, false);
    }
}
