//! Errors: [`JsonError`] with its line and column, found from the byte offset of a [`Malformed`].

use std::io::{self, Read};

use super::CHUNK;

/// Malformed JSON: what is wrong and where (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at line {line}, column {column}")]
pub struct JsonError {
    /// What is wrong.
    pub message: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in bytes).
    pub column: usize,
}

/// Why a JSON file could not be read: [`PyJson::read_file`](crate::dump::json::PyJson::read_file).
#[derive(Debug, thiserror::Error)]
pub enum JsonReadError {
    /// The file could not be opened or read.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The file is not (Python's) JSON.
    #[error(transparent)]
    Malformed(#[from] JsonError),
}

/// What is wrong, and the byte offset in the input where it is found.
pub(super) struct Malformed {
    pub(super) message: &'static str,
    pub(super) offset: usize,
}

impl Malformed {
    /// The error with its line and column, counted in `input` (read up to the offset).
    pub(super) fn locate(self, mut input: impl Read) -> JsonError {
        let (mut line, mut column) = (1, 1);
        let mut left = self.offset;
        let mut chunk = vec![0; CHUNK.min(left.max(1))];
        while left > 0 {
            let want = chunk.len().min(left);
            let read = match input.read(&mut chunk[..want]) {
                Ok(0) => break,
                Ok(read) => read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            for &byte in &chunk[..read] {
                if byte == b'\n' {
                    line += 1;
                    column = 1;
                } else {
                    column += 1;
                }
            }
            left -= read;
        }
        JsonError {
            message: self.message.to_owned(),
            line,
            column,
        }
    }
}
