//! The parser's window on the input: bytes made available a chunk at a time.

use std::io::Read;

use super::parser::Parser;

impl Parser<'_> {
    /// Makes `need` bytes available after `at`, unless the input ends first; returns how many
    /// are.
    pub(super) fn available(&mut self, need: usize) -> usize {
        if self.buf.len() - self.at < need && self.source.is_some() {
            self.read_more(need);
        }
        self.buf.len() - self.at
    }

    #[cold]
    #[inline(never)]
    fn read_more(&mut self, need: usize) {
        self.discarded += self.at;
        self.buf.drain(..self.at);
        self.at = 0;
        while self.buf.len() < need {
            let Some(source) = self.source.as_mut() else {
                break;
            };
            let want = self.chunk.max(need - self.buf.len());
            match Read::take(&mut **source, want as u64).read_to_end(&mut self.buf) {
                Ok(read) if read == want => {}
                Ok(_) => self.source = None,
                Err(error) => {
                    self.read_error = Some(error);
                    self.source = None;
                }
            }
        }
    }

    pub(super) fn peek(&mut self) -> Option<u8> {
        if let Some(&byte) = self.buf.get(self.at) {
            return Some(byte);
        }
        (self.available(1) > 0).then(|| self.buf[self.at])
    }

    pub(super) fn skip_space(&mut self) {
        loop {
            let rest = &self.buf[self.at..];
            match rest
                .iter()
                .position(|b| !matches!(b, b' ' | b'\n' | b'\r' | b'\t'))
            {
                Some(n) => {
                    self.at += n;
                    return;
                }
                None => {
                    self.at = self.buf.len();
                    if self.available(1) == 0 {
                        return;
                    }
                }
            }
        }
    }

    pub(super) fn eat(&mut self, literal: &str) -> bool {
        self.available(literal.len());
        if self.buf[self.at..].starts_with(literal.as_bytes()) {
            self.at += literal.len();
            true
        } else {
            false
        }
    }

    pub(super) fn eat_byte(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }
}
