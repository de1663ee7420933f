//! One monotonic clock for every tool, so stopwatch measurements, op statistics and the
//! timeline share a time axis.
//!
//! It reads the CPU's time-stamp counter through `quanta` (calibrated against the OS clock,
//! falling back to it where the counter is unreliable): a few ns per reading where
//! `clock_gettime` costs tens of ns on some VMs, and it is read twice per recorded op.

use std::sync::LazyLock;
use std::time::Duration;

static EPOCH: LazyLock<quanta::Instant> = LazyLock::new(quanta::Instant::now);

/// Time since the first use of this clock in the process.
#[inline]
pub fn now() -> Duration {
    quanta::Instant::now().saturating_duration_since(*EPOCH)
}
