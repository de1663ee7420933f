//! One monotonic clock for every tool, so stopwatch measurements, op statistics and the
//! timeline share a time axis.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);

/// Time since the first use of this clock in the process.
#[inline]
pub(crate) fn now() -> Duration {
    EPOCH.elapsed()
}
