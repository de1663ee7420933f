//! Whether this thread is running a fused block's fallback op: the op a block runs unfused (a
//! matmul or a reduction CubeCL did not fuse), either for the block itself or as one of
//! autotune's trial runs.
//!
//! On a cache miss, CubeCL's tuner runs each candidate of a fused matmul or reduction on a
//! fork of the block's context, three warm-ups and ten samples
//! (`cubecl-runtime-0.10.0/src/tune/tune_benchmark.rs` lines 32 to 109, on the device thread);
//! the candidate `fused_matmul_fallback` runs the block's op through the backend's own op
//! (`burn-cubecl-fusion-0.21.0/src/optim/matmul/tune.rs` lines 124 and 294 to 298), which
//! would reach `Profiled`'s op path as if the program had called it. The block's fallback
//! tells a trial from the block's run by the context it is given: a trial's is a fork, the
//! block's run the context the block was handed.

use std::cell::Cell;

use burn_profiled_core::context::autotune;

/// What the fallback op running on this thread runs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FallbackRun {
    /// No fallback op runs.
    None,
    /// One of autotune's trial runs: not the program's op, left off the op path.
    Trial,
    /// The block's own run: its op is the block's, recorded with the block.
    #[cfg_attr(not(feature = "fusion"), allow(dead_code))]
    Block,
}

thread_local! {
    static RUNNING: Cell<FallbackRun> = const { Cell::new(FallbackRun::None) };
}

/// What the fallback op running on this thread runs for, if one does.
#[inline]
pub(crate) fn running() -> FallbackRun {
    RUNNING.get()
}

/// Runs `f` as a fallback op that runs for `run`.
#[cfg_attr(not(feature = "fusion"), allow(dead_code))]
pub(crate) fn run_as<T>(run: FallbackRun, f: impl FnOnce() -> T) -> T {
    /// Restores the thread's state, also if `f` panics.
    struct Restore(FallbackRun);
    impl Drop for Restore {
        fn drop(&mut self) {
            RUNNING.set(self.0);
        }
    }
    let _restore = Restore(RUNNING.replace(run));
    if run == FallbackRun::Trial {
        autotune::trial_left_out();
    }
    f()
}

/// How many of autotune's trial runs of fused blocks' fallback ops were left off the op path
/// (not rows of the op table, not records of `numerics.jsonl`) since the process started; a
/// session's `run.json` says how many ran during it (`autotune_trials`).
pub fn autotune_trials() -> u64 {
    autotune::trials_left_out()
}
