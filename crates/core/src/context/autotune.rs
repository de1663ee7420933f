//! How many of autotune's trial runs an edition left off the op path: CubeCL trying a fused
//! block's candidate kernels on forks of its inputs, whose ops are not the program's. Counted
//! here so that a run's `run.json` says how many its first steps held.

use std::sync::atomic::{AtomicU64, Ordering};

static TRIALS: AtomicU64 = AtomicU64::new(0);

/// One trial run was left off the op path.
pub fn trial_left_out() {
    TRIALS.fetch_add(1, Ordering::Relaxed);
}

/// The trial runs left off the op path since the process started.
pub fn trials_left_out() -> u64 {
    TRIALS.load(Ordering::Relaxed)
}
