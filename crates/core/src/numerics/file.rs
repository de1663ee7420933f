//! `numerics.jsonl`: a run's [`OpRecord`]s, one JSON object a line after a header line, so
//! that Python's `json` reads it line by line:
//!
//! ```text
//! {"format":"burn-profiled-numerics","version":1}
//! {"seq":0,"step":0,"thread":"main","op":"float_exp","phase":"forward",...}
//! ```
//!
//! Every line, the last too, ends with `\n`: a last line without one is a file cut short.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::OpRecord;
use crate::formats::{NUMERICS_FORMAT, NUMERICS_FORMAT_VERSION};

/// The file's name in a run directory.
pub const NUMERICS_FILE: &str = "numerics.jsonl";

/// Why a numerics file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum NumericsError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a numerics file: no header, or another format's.
    #[error("{}: not a burn-profiled numerics file: {why}", .path.display())]
    NotNumerics {
        /// The file.
        path: PathBuf,
        /// What the first line is instead.
        why: String,
    },
    /// A format version this crate does not read.
    #[error(
        "{}: line 1: numerics format version {found} (this burn-profiled reads version {known}); compare it with the burn-profiled that wrote it",
        .path.display()
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// The version the header gives.
        found: u64,
        /// The version this crate reads.
        known: u32,
    },
    /// A line that is not a record.
    #[error("{}: line {line}: {why}", .path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        why: String,
    },
}

#[derive(Serialize, Deserialize)]
struct Header {
    format: String,
    version: u64,
}

/// The text of a numerics file holding `records`.
pub fn to_text(records: &[OpRecord]) -> String {
    let header = Header {
        format: NUMERICS_FORMAT.to_owned(),
        version: NUMERICS_FORMAT_VERSION.into(),
    };
    let mut text = serde_json::to_string(&header).expect("a header serializes");
    text.push('\n');
    for record in records {
        // Strings, integers and `json_float`'s numbers: nothing here can fail to serialize.
        text.push_str(&serde_json::to_string(record).expect("a record serializes"));
        text.push('\n');
    }
    text
}

/// Writes `records` to `path` (a reader sees the old file or the whole new one), creating its
/// directory.
pub fn write(path: &Path, records: &[OpRecord]) -> std::io::Result<()> {
    crate::files::write_atomically(path, &[to_text(records).as_bytes()])
}

/// Reads a numerics file: `path` itself, or `path/numerics.jsonl` when `path` is a directory.
/// Refuses another format or version, a line cut short, a line that is not a record, and
/// records whose `seq` does not increase, naming the file and the line.
pub fn read(path: &Path) -> Result<Vec<OpRecord>, NumericsError> {
    let path = match path.is_dir() {
        true => path.join(NUMERICS_FILE),
        false => path.to_path_buf(),
    };
    let file = std::fs::File::open(&path).map_err(|source| NumericsError::Read {
        path: path.clone(),
        source,
    })?;
    read_from(&path, file)
}

/// [`read`] from an open reader; `path` names it in errors.
pub fn read_from(path: &Path, reader: impl Read) -> Result<Vec<OpRecord>, NumericsError> {
    let malformed = |line: usize, why: String| NumericsError::Malformed {
        path: path.to_path_buf(),
        line,
        why,
    };
    let mut reader = BufReader::new(reader);
    let mut buffer = Vec::new();
    let mut records: Vec<OpRecord> = Vec::new();
    for line in 1.. {
        buffer.clear();
        let read = reader
            .read_until(b'\n', &mut buffer)
            .map_err(|source| NumericsError::Read {
                path: path.to_path_buf(),
                source,
            })?;
        if read == 0 {
            if line == 1 {
                return Err(NumericsError::NotNumerics {
                    path: path.to_path_buf(),
                    why: "the file is empty".to_owned(),
                });
            }
            break;
        }
        if buffer.pop() != Some(b'\n') {
            return Err(malformed(
                line,
                "cut short (no end of line): the file was truncated, or is still being written"
                    .to_owned(),
            ));
        }
        if line == 1 {
            check_header(path, &buffer)?;
            continue;
        }
        let record: OpRecord = serde_json::from_slice(&buffer)
            .map_err(|error| malformed(line, format!("not an op record: {error}")))?;
        if let Some(last) = records.last()
            && record.seq <= last.seq
        {
            return Err(malformed(
                line,
                format!(
                    "seq: {} after {}: each record's seq is larger than the one before",
                    record.seq, last.seq
                ),
            ));
        }
        records.push(record);
    }
    Ok(records)
}

fn check_header(path: &Path, line: &[u8]) -> Result<(), NumericsError> {
    let not_numerics = |why: String| NumericsError::NotNumerics {
        path: path.to_path_buf(),
        why,
    };
    let header: Header = serde_json::from_slice(line).map_err(|error| {
        not_numerics(format!(
            "line 1 is not a header {{\"format\": \"{NUMERICS_FORMAT}\", \"version\": N}}: {error}"
        ))
    })?;
    if header.format != NUMERICS_FORMAT {
        return Err(not_numerics(format!(
            "line 1: format `{}`, not `{NUMERICS_FORMAT}`",
            header.format
        )));
    }
    if header.version != u64::from(NUMERICS_FORMAT_VERSION) {
        return Err(NumericsError::Version {
            path: path.to_path_buf(),
            found: header.version,
            known: NUMERICS_FORMAT_VERSION,
        });
    }
    Ok(())
}
