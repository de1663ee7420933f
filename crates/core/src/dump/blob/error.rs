//! [`BlobError`], and the constructors the readers and writers share.

use std::io;
use std::path::{Path, PathBuf};

/// A problem with a blob file or an array: every message says what is wrong, and names the
/// file where there is one.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    /// The file could not be read or written.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The file exists but its contents are not what they must be.
    #[error("{}: {reason}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The array cannot be written to the file in the requested form (the original's image
    /// assertions, with its wording).
    #[error("{message}")]
    Unwritable {
        /// The file that was to be written.
        path: PathBuf,
        /// The whole message, file included.
        message: String,
    },
    /// An array in memory is unusable: its bytes do not match its shape, a permutation is
    /// invalid, or a Burn dtype has no dumped form.
    #[error("{reason}")]
    InvalidArray {
        /// What is wrong.
        reason: String,
    },
}

pub(super) fn malformed(path: &Path, reason: impl Into<String>) -> BlobError {
    BlobError::Malformed {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

pub(super) fn invalid(reason: impl Into<String>) -> BlobError {
    BlobError::InvalidArray {
        reason: reason.into(),
    }
}

pub(super) fn with_file(path: &Path, error: BlobError) -> BlobError {
    match error {
        BlobError::InvalidArray { reason } => malformed(path, reason),
        other => other,
    }
}
