//! The parser: its state, and the grammar of values, objects and lists.

use std::collections::HashMap;
use std::io::{self, Read};

use super::CHUNK;
use super::error::Malformed;
use super::items::Items;
use crate::dump::json::PyJson;

/// Deeper nesting is refused rather than risking the stack on a hostile file.
const MAX_DEPTH: usize = 512;

/// A reader of JSON text held whole, or read from a file a chunk at a time.
pub(super) struct Parser<'r> {
    /// The bytes of the input from `discarded` on; `buf[at..]` is not read yet.
    pub(super) buf: Vec<u8>,
    pub(super) at: usize,
    /// The bytes of the input before `buf[0]`, read and dropped.
    pub(super) discarded: usize,
    /// Where more input comes from; `None` once it has ended.
    pub(super) source: Option<&'r mut dyn Read>,
    /// The read error that ended the input early.
    pub(super) read_error: Option<io::Error>,
    /// Bytes read at a time ([`CHUNK`]; tests read less to cross chunk ends everywhere).
    pub(super) chunk: usize,
    depth: usize,
}

impl<'r> Parser<'r> {
    pub(super) fn new(buf: Vec<u8>, source: Option<&'r mut dyn Read>) -> Self {
        Parser {
            buf,
            at: 0,
            discarded: 0,
            source,
            read_error: None,
            chunk: CHUNK,
            depth: 0,
        }
    }

    /// The one JSON value of the input, with nothing but whitespace after it.
    pub(super) fn document(&mut self) -> Result<PyJson, Malformed> {
        self.skip_space();
        let value = self.value()?;
        self.skip_space();
        if self.available(1) > 0 {
            return Err(self.error("trailing characters after the JSON value"));
        }
        Ok(value)
    }

    /// `message`, or `at_end` where the input has ended (a truncated file).
    fn error_or_end(&mut self, message: &'static str, at_end: &'static str) -> Malformed {
        match self.peek() {
            None => self.error(at_end),
            Some(_) => self.error(message),
        }
    }

    pub(super) fn error(&self, message: &'static str) -> Malformed {
        Malformed {
            message,
            offset: self.discarded + self.at,
        }
    }

    fn value(&mut self) -> Result<PyJson, Malformed> {
        match self.peek() {
            None => Err(self.error("unexpected end of input")),
            Some(b'{') => self.nested(Self::object),
            Some(b'[') => self.nested(Self::list),
            Some(b'"') => Ok(PyJson::Str(self.string()?)),
            Some(b't') if self.eat("true") => Ok(PyJson::Bool(true)),
            Some(b'f') if self.eat("false") => Ok(PyJson::Bool(false)),
            Some(b'n') if self.eat("null") => Ok(PyJson::Null),
            Some(b'N') if self.eat("NaN") => Ok(PyJson::Float(f64::NAN)),
            Some(b'I') if self.eat("Infinity") => Ok(PyJson::Float(f64::INFINITY)),
            Some(b'-') if self.eat("-Infinity") => Ok(PyJson::Float(f64::NEG_INFINITY)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("unexpected character")),
        }
    }

    fn nested(
        &mut self,
        parse: fn(&mut Self) -> Result<PyJson, Malformed>,
    ) -> Result<PyJson, Malformed> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("nesting deeper than 512 levels"));
        }
        let value = parse(self);
        self.depth -= 1;
        value
    }

    fn object(&mut self) -> Result<PyJson, Malformed> {
        self.at += 1;
        let mut entries: Vec<(String, PyJson)> = Vec::new();
        // A key given twice keeps its first place and takes the last value, as Python's
        // `json` reads it.
        let mut index: HashMap<String, usize> = HashMap::new();
        self.skip_space();
        if self.eat_byte(b'}') {
            return Ok(PyJson::Object(entries));
        }
        loop {
            self.skip_space();
            if self.peek() != Some(b'"') {
                return Err(
                    self.error_or_end("expected a string key", "the input ends inside an object")
                );
            }
            let key = self.string()?;
            self.skip_space();
            if !self.eat_byte(b':') {
                return Err(self.error_or_end(
                    "expected `:` after a key",
                    "the input ends inside an object",
                ));
            }
            self.skip_space();
            let value = self.value()?;
            match index.get(&key) {
                Some(&at) => entries[at].1 = value,
                None => {
                    index.insert(key.clone(), entries.len());
                    entries.push((key, value));
                }
            }
            self.skip_space();
            if self.eat_byte(b',') {
                continue;
            }
            if self.eat_byte(b'}') {
                return Ok(PyJson::Object(entries));
            }
            return Err(self.error_or_end(
                "expected `,` or `}` in an object",
                "the input ends inside an object",
            ));
        }
    }

    fn list(&mut self) -> Result<PyJson, Malformed> {
        self.at += 1;
        let mut items = Items::Nodes(Vec::new());
        self.skip_space();
        if self.eat_byte(b']') {
            return Ok(items.finish());
        }
        loop {
            self.skip_space();
            match &mut items {
                // Once the list is known to hold floats, the rest are read as floats (an int
                // token among them, which `tolist()` never writes, compares equal anyway).
                Items::Floats(floats) if self.number_follows() => {
                    let (value, length) = self.number_token()?;
                    self.at += length;
                    floats.push(value);
                }
                _ => {
                    let value = self.value()?;
                    items.push(value);
                }
            }
            self.skip_space();
            if self.eat_byte(b',') {
                continue;
            }
            if self.eat_byte(b']') {
                return Ok(items.finish());
            }
            return Err(self.error_or_end(
                "expected `,` or `]` in an array",
                "the input ends inside an array",
            ));
        }
    }
}
