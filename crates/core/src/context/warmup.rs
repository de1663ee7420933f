//! Whether the run is warming up: the stopwatch says so, op statistics wait for the end.

use std::sync::atomic::{AtomicBool, Ordering};

static IN_WARMUP: AtomicBool = AtomicBool::new(false);

/// True while the process-wide stopwatch is enabled and in warm-up.
#[inline]
pub fn in_warmup() -> bool {
    IN_WARMUP.load(Ordering::Relaxed)
}

/// Published by the process-wide stopwatch at each change.
pub fn set_in_warmup(warming_up: bool) {
    IN_WARMUP.store(warming_up, Ordering::Relaxed);
}
