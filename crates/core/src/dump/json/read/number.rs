//! Numbers: Python's ints apart from floats, read whole across chunk ends.

use super::error::Malformed;
use super::parser::Parser;
use crate::dump::json::PyJson;

/// Bytes made available before a number is read; a number that reaches the end of them is read
/// again with more.
pub(super) const LOOKAHEAD: usize = 64;

/// A number whose token ends this close to the end of the available bytes (`1e` of `1e5`) is
/// read again with more.
const NUMBER_TAIL: usize = 8;

impl Parser<'_> {
    /// Whether a number token (not `-Infinity`) comes next.
    pub(super) fn number_follows(&mut self) -> bool {
        self.available(2);
        match self.buf.get(self.at) {
            Some(b'0'..=b'9') => true,
            Some(b'-') => self.buf.get(self.at + 1) != Some(&b'I'),
            _ => false,
        }
    }

    /// The number at `at` and the length of its token, which is wholly available.
    pub(super) fn number_token(&mut self) -> Result<(f64, usize), Malformed> {
        self.available(LOOKAHEAD);
        // JSON numbers start with a digit (the float parser would also take `inf` and `nan`).
        let digits = self.at + usize::from(self.buf.get(self.at) == Some(&b'-'));
        if !self.buf.get(digits).is_some_and(u8::is_ascii_digit) {
            return Err(self.error("invalid number"));
        }
        loop {
            let rest = &self.buf[self.at..];
            let parsed = fast_float2::parse_partial::<f64, _>(rest);
            // A token cut short by the end of the available bytes may be read wrongly or be
            // invalid (`1e`): read it again with more.
            let whole = match parsed {
                Ok((_, length)) => rest.len() - length > NUMBER_TAIL,
                Err(_) => false,
            };
            if !whole && self.source.is_some() {
                let more = rest.len() + LOOKAHEAD;
                self.available(more);
                continue;
            }
            return parsed.map_err(|_| self.error("invalid number"));
        }
    }

    pub(super) fn number(&mut self) -> Result<PyJson, Malformed> {
        let (value, length) = self.number_token()?;
        let text = &self.buf[self.at..self.at + length];
        self.at += length;
        // Python reads `1` as an int and `1.0` or `1e3` as a float.
        if text.iter().all(|b| b.is_ascii_digit() || *b == b'-')
            && let Some(int) = std::str::from_utf8(text).ok().and_then(|t| t.parse().ok())
        {
            return Ok(PyJson::Int(int));
        }
        // Integers beyond i64 are read as floats, as precise as they can be.
        Ok(PyJson::Float(value))
    }
}
