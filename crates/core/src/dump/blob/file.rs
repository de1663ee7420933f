//! Blob files and their JSON sidecars on disk: read as regular files only (a FIFO would block,
//! a device never end), sidecars bounded and never through a symlink; written atomically.

use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::BlobError;
use super::error::malformed;
use crate::dump::json::PyJson;
use crate::files::write_atomically;

/// The most bytes a `.meta.json` sidecar may have.
pub const MAX_META_BYTES: u64 = 1 << 20;

fn read_error(path: &Path) -> impl FnOnce(std::io::Error) -> BlobError {
    let path = path.to_owned();
    move |source| BlobError::Io {
        action: "read",
        path,
        source,
    }
}

/// `path` opened for reading, with its length (`usize::MAX` if more); refused unless it is a
/// regular file.
pub(super) fn open_file(path: &Path) -> Result<(File, usize), BlobError> {
    if !std::fs::metadata(path).map_err(read_error(path))?.is_file() {
        return Err(malformed(path, "not a regular file"));
    }
    let file = File::open(path).map_err(read_error(path))?;
    let length = file.metadata().map_err(read_error(path))?.len();
    Ok((file, usize::try_from(length).unwrap_or(usize::MAX)))
}

/// Exactly `length` more bytes of `file` (at `path`).
pub(super) fn read_bytes(
    path: &Path,
    file: &mut File,
    length: usize,
) -> Result<Vec<u8>, BlobError> {
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(length)
        .map_err(|_| malformed(path, format!("{length} bytes do not fit in memory")))?;
    let wanted = u64::try_from(length).unwrap_or(u64::MAX);
    file.take(wanted)
        .read_to_end(&mut bytes)
        .map_err(read_error(path))?;
    if bytes.len() != length {
        return Err(malformed(
            path,
            format!("the file ended after {} of {length} bytes", bytes.len()),
        ));
    }
    Ok(bytes)
}

/// A whole regular file.
pub(super) fn read_file(path: &Path) -> Result<Vec<u8>, BlobError> {
    let (mut file, length) = open_file(path)?;
    read_bytes(path, &mut file, length)
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

/// Whether a sidecar is there: anything at `path`, a symlink included (which [`read_meta`]
/// then refuses).
pub(super) fn meta_exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// A JSON sidecar: parsed, or `Malformed` naming it. It must be a regular file, not a
/// symlink, of at most [`MAX_META_BYTES`].
pub(super) fn read_meta(path: &Path) -> Result<PyJson, BlobError> {
    if std::fs::symlink_metadata(path)
        .map_err(read_error(path))?
        .file_type()
        .is_symlink()
    {
        return Err(malformed(path, "is a symlink; not followed"));
    }
    let (mut file, length) = open_file(path)?;
    if length as u64 > MAX_META_BYTES {
        return Err(malformed(
            path,
            format!("{length} bytes; a .meta.json sidecar may have at most {MAX_META_BYTES}"),
        ));
    }
    // Exactly the length read above, even if the file grows meanwhile.
    let bytes = read_bytes(path, &mut file, length)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| malformed(path, "not UTF-8 text"))?;
    PyJson::parse(text)
        .map(PyJson::expand_numbers)
        .map_err(|e| malformed(path, format!("invalid JSON: {e}")))
}
