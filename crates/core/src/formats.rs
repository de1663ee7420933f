//! The versions of the files a run directory holds, written by every edition and read by
//! [`runs`](crate::runs): a reader refuses a version it does not know.

/// The version of the format of `run.json` and `ops.json`. A change to either file's format
/// (the golden files under `tests/golden/`) is a new version, not an edit of the golden file.
///
/// - 1: the first.
/// - 2: `[roofline]` in `run.json`'s configuration; each op's FLOPs, bytes and place on the
///   roofline in `ops.json` (its rows' `flops`, `bytes`, `roofline`, and `work`).
/// - 3: `[stats] call_sites` in `run.json`'s configuration; `ops_by_call_site.json`, whose rows
///   have the op's `call_site` (and `stacks.folded`, the folded stacks of flame graphs).
/// - 4: `[numerics]` in `run.json`'s configuration; `run.json`'s `non_finite`, the first op
///   that made a NaN or an Inf (`numerics::NonFinite`), and `numerics.jsonl` among its files.
/// - 5: `non_finite`'s `rerun`, that op run again on NdArray (`numerics::Rerun`), where it was;
///   `[numerics] capture` in `run.json`'s configuration, and `run.json`'s `captured`
///   (`numerics::CapturedOp`); `first_step_seconds`.
/// - 6: `[stats] forward_links` in `run.json`'s configuration; the `forward_phase` of
///   backward and optimizer rows in `ops.json` and `ops_by_call_site.json`;
///   `ops_by_module.json`, the time per module.
/// - 7: `run.json`'s `memory.kept_alive` (with per-op memory, where it can be seen): the ops
///   whose outputs made in one step are still alive at the run's end (`memory::KeptAlive`).
///   `ops.json`'s keys are version 6's (its golden file now has a tracking allocator's per-op
///   host memory, which version 6 wrote too).
/// - 8: `[memory] graph` and `graph_step` in `run.json`'s configuration, and `graph.json`
///   among its files ([`GRAPH_FORMAT_VERSION`]).
/// - 9: `run.json`'s `autotune_trials`, autotune's trial runs of fused blocks' ops left off
///   the op path (absent when none ran).
pub const RUN_FORMAT_VERSION: u32 = 9;

/// The oldest version of `run.json` and `ops.json` that [`runs`](crate::runs) reads: each
/// version since only added keys.
pub const OLDEST_RUN_FORMAT_VERSION: u32 = 1;

/// The version of `graph.json`, the graph of a step (`[memory] graph`). A change to its format
/// (the golden file `tests/golden/graph_json_v1.txt`) is a new version.
///
/// - 1: the first.
pub const GRAPH_FORMAT_VERSION: u32 = 1;

/// The `format` of `numerics.jsonl`'s header line.
pub const NUMERICS_FORMAT: &str = "burn-profiled-numerics";

/// The version of `numerics.jsonl` (its header's `version`). A change to the format (the golden
/// text in `numerics/tests.rs`) is a new version, not an edit of the golden text.
///
/// - 1: the first.
pub const NUMERICS_FORMAT_VERSION: u32 = 1;
