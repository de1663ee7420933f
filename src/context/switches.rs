//! What is switched on, in one byte, so an op with everything off pays one relaxed load.
//!
//! Each sink sets its own bit when it starts and clears it when it stops; the probe reads the
//! whole byte once per op and passes it along, so an op ends exactly as it started.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, PoisonError};

/// NVTX op ranges in the `burn` domain.
pub(crate) const RANGES: u8 = 1;
/// `B::sync` of the op's device before the op starts and before it is reported finished.
pub(crate) const SYNC: u8 = 1 << 1;
/// At least one observer is installed.
pub(crate) const OBSERVE: u8 = 1 << 2;
/// Op statistics are recorded.
pub(crate) const STATS: u8 = 1 << 3;
/// The timeline is recorded.
pub(crate) const TRACE: u8 = 1 << 4;
/// Statistics are keyed by input shapes.
pub(crate) const SHAPES: u8 = 1 << 5;
/// Device time: each op tags the kernel launches it makes with its id.
pub(crate) const DEVICE: u8 = 1 << 6;
/// A launch thread is attached: ops outside its steps queue their ranges there. Reads as on
/// only while there is something to queue (op ranges or device time), so that an attached
/// launch thread with everything else off leaves ops on the one-load path.
pub(crate) const QUEUED: u8 = 1 << 7;

/// What the probe reads.
static FLAGS: AtomicU8 = AtomicU8::new(0);
/// What was switched on, and whether per-op memory is (it reads device memory on the launch
/// thread, so it keeps ops queuing there); `FLAGS` is derived from them.
static REQUESTED: Mutex<(u8, bool)> = Mutex::new((0, false));

/// Sets or clears `flag`.
pub(crate) fn set(flag: u8, on: bool) {
    let mut requested = REQUESTED.lock().unwrap_or_else(PoisonError::into_inner);
    if on {
        requested.0 |= flag;
    } else {
        requested.0 &= !flag;
    }
    publish(*requested);
}

/// Per-op memory on or off: with it, an attached launch thread takes the ops' queued work
/// even with op ranges and device time off.
pub(crate) fn set_memory_per_op(on: bool) {
    let mut requested = REQUESTED.lock().unwrap_or_else(PoisonError::into_inner);
    requested.1 = on;
    publish(*requested);
}

fn publish((mut flags, memory_per_op): (u8, bool)) {
    if flags & (RANGES | DEVICE) == 0 && !memory_per_op {
        flags &= !QUEUED;
    }
    FLAGS.store(flags, Ordering::Relaxed);
}

/// All switches: `0` means everything is off.
#[inline(always)]
pub(crate) fn all() -> u8 {
    FLAGS.load(Ordering::Relaxed)
}

/// Whether `flag` is on.
pub(crate) fn is_on(flag: u8) -> bool {
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
    }
}
