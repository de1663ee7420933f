//! Strings: escapes, surrogate pairs and UTF-8 checks.

use super::error::Malformed;
use super::parser::Parser;

impl Parser<'_> {
    /// Makes the whole string starting at `at` available (up to the end of the input if it is
    /// unterminated).
    fn bring_string(&mut self) {
        let mut scanned = 1;
        loop {
            let window = &self.buf[self.at..];
            if scanned < window.len() {
                match window[scanned..]
                    .iter()
                    .position(|&b| b == b'"' || b == b'\\')
                {
                    Some(n) if window[scanned + n] == b'"' => return,
                    // Skip the escaped byte too.
                    Some(n) => {
                        scanned += n + 2;
                        continue;
                    }
                    None => scanned = window.len(),
                }
            }
            if self.available(scanned + 1) <= scanned {
                return;
            }
        }
    }

    pub(super) fn string(&mut self) -> Result<String, Malformed> {
        self.bring_string();
        // Only the available bytes are read from here on: `buf` must not move.
        let next_byte = |parser: &Self| parser.buf.get(parser.at).copied();
        self.at += 1;
        let mut out = String::new();
        loop {
            let start = self.at;
            while let Some(b) = next_byte(self) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            let run = std::str::from_utf8(&self.buf[start..self.at])
                .map_err(|_| self.error("invalid UTF-8 in a string"))?;
            out.push_str(run);
            match next_byte(self) {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    let escaped =
                        next_byte(self).ok_or_else(|| self.error("unterminated escape"))?;
                    self.at += 1;
                    match escaped {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{08}'),
                        b'f' => out.push('\u{0c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => out.push(self.unicode_escape()?),
                        _ => return Err(self.error("invalid escape")),
                    }
                }
                Some(_) => return Err(self.error("control character in a string")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u16, Malformed> {
        let digits = self
            .buf
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.error("short \\u escape"))?;
        let text = std::str::from_utf8(digits).map_err(|_| self.error("invalid \\u escape"))?;
        let unit = u16::from_str_radix(text, 16).map_err(|_| self.error("invalid \\u escape"))?;
        self.at += 4;
        Ok(unit)
    }

    fn unicode_escape(&mut self) -> Result<char, Malformed> {
        let first = self.hex4()?;
        let mut units = vec![first];
        if (0xD800..0xDC00).contains(&first) && self.buf[self.at..].starts_with(b"\\u") {
            let before = self.at;
            self.at += 2;
            let second = self.hex4()?;
            if (0xDC00..0xE000).contains(&second) {
                units.push(second);
            } else {
                // Not a pair: the second escape is read on its own, as Python does.
                self.at = before;
            }
        }
        // Lone surrogates (Python writes them) become U+FFFD.
        Ok(char::decode_utf16(units)
            .next()
            .and_then(Result::ok)
            .unwrap_or('\u{FFFD}'))
    }
}
