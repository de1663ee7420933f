//! Blob files and their JSON sidecars on disk: read whole, written atomically.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::BlobError;
use super::error::malformed;
use crate::dump::json::PyJson;
use crate::files::write_atomically;

pub(super) fn read_file(path: &Path) -> Result<Vec<u8>, BlobError> {
    std::fs::read(path).map_err(|source| BlobError::Io {
        action: "read",
        path: path.to_owned(),
        source,
    })
}

pub(super) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), BlobError> {
    write_file_parts(path, &[bytes])
}

/// One file from several parts, without joining them in memory first.
pub(super) fn write_file_parts(path: &Path, parts: &[&[u8]]) -> Result<(), BlobError> {
    write_atomically(path, parts).map_err(|source| BlobError::Io {
        action: "write",
        path: path.to_owned(),
        source,
    })
}

/// `{path}.meta.json`, the sidecar of a `.bin` or `.png` blob.
pub fn meta_path(path: &Path) -> PathBuf {
    let mut name = OsString::from(path.as_os_str());
    name.push(".meta.json");
    PathBuf::from(name)
}

/// A JSON sidecar: parsed, or `Malformed` naming it.
pub(super) fn read_meta(path: &Path) -> Result<PyJson, BlobError> {
    let bytes = read_file(path)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| malformed(path, "not UTF-8 text"))?;
    PyJson::parse(text)
        .map(PyJson::expand_numbers)
        .map_err(|e| malformed(path, format!("invalid JSON: {e}")))
}
