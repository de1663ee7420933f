//! What is switched on, in one byte, so an op with everything off pays one relaxed load.
//!
//! Each sink sets its own bit when it starts and clears it when it stops; the probe reads the
//! whole byte once per op and passes it along, so an op ends exactly as it started.

use std::sync::atomic::{AtomicU8, Ordering};

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
/// A launch thread is attached: ops outside its steps queue their ranges there.
pub(crate) const QUEUED: u8 = 1 << 7;

static FLAGS: AtomicU8 = AtomicU8::new(0);

/// Sets or clears `flag`.
pub(crate) fn set(flag: u8, on: bool) {
    if on {
        FLAGS.fetch_or(flag, Ordering::Relaxed);
    } else {
        FLAGS.fetch_and(!flag, Ordering::Relaxed);
    }
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
