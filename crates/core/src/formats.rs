//! The versions of the files a run directory holds, written by every edition and read by
//! [`runs`](crate::runs): a reader refuses a version it does not know.

/// The version of the format of `run.json` and `ops.json`. A change to either file's format
/// (the golden files under `tests/golden/`) is a new version, not an edit of the golden file.
pub const RUN_FORMAT_VERSION: u32 = 1;
