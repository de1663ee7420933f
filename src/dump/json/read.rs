//! Reading JSON as Python's `json` module reads it, from text or from a file a chunk at a time.

use std::io::{self, Read};
use std::path::Path;

use super::{NumberValues, Numbers, PyJson};

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

/// Why a JSON file could not be read: [`PyJson::read_file`].
#[derive(Debug, thiserror::Error)]
pub enum JsonReadError {
    /// The file could not be opened or read.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The file is not (Python's) JSON.
    #[error(transparent)]
    Malformed(#[from] JsonError),
}

/// Deeper nesting is refused rather than risking the stack on a hostile file.
const MAX_DEPTH: usize = 512;

/// Bytes read from a file at a time: large files are never held in memory whole.
const CHUNK: usize = 1 << 20;

/// Bytes made available before a number is read; a number that reaches the end of them is read
/// again with more.
const LOOKAHEAD: usize = 64;

/// A number whose token ends this close to the end of the available bytes (`1e` of `1e5`) is
/// read again with more.
const NUMBER_TAIL: usize = 8;

/// What is wrong, and the byte offset in the input where it is found.
struct Malformed {
    message: &'static str,
    offset: usize,
}

impl Malformed {
    /// The error with its line and column, counted in `input` (read up to the offset).
    fn locate(self, mut input: impl Read) -> JsonError {
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

/// The items of a list being read: flat while they are numbers of one kind, or flat lists of
/// one shape and kind (rows), else one node each.
enum Items {
    Floats(Vec<f64>),
    Ints(Vec<i64>),
    Rows(Numbers),
    Nodes(Vec<PyJson>),
}

impl Items {
    fn push(&mut self, value: PyJson) {
        match (&mut *self, value) {
            (Items::Nodes(nodes), value) if nodes.is_empty() => {
                *self = match value {
                    PyJson::Float(f) => Items::Floats(vec![f]),
                    PyJson::Int(i) => Items::Ints(vec![i]),
                    PyJson::Numbers(mut row) => {
                        row.shape.insert(0, 1);
                        Items::Rows(row)
                    }
                    other => Items::Nodes(vec![other]),
                }
            }
            (Items::Nodes(nodes), value) => nodes.push(value),
            (Items::Floats(floats), PyJson::Float(f)) => floats.push(f),
            (Items::Ints(ints), PyJson::Int(i)) => ints.push(i),
            (Items::Rows(rows), PyJson::Numbers(row)) if rows.shape[1..] == row.shape[..] => {
                match (&mut rows.values, row.values) {
                    (NumberValues::Float(all), NumberValues::Float(v)) => all.extend(v),
                    (NumberValues::Int(all), NumberValues::Int(v)) => all.extend(v),
                    (NumberValues::Bool(all), NumberValues::Bool(v)) => all.extend(v),
                    (_, values) => {
                        let row = Numbers {
                            shape: row.shape,
                            values,
                        };
                        return self.push_node(PyJson::Numbers(row));
                    }
                }
                rows.shape[0] += 1;
            }
            (_, value) => self.push_node(value),
        }
    }

    /// Pushes `value` as a node, turning the flat items read so far into nodes.
    fn push_node(&mut self, value: PyJson) {
        let mut nodes = match std::mem::replace(self, Items::Nodes(Vec::new())) {
            Items::Floats(floats) => floats.into_iter().map(PyJson::Float).collect(),
            Items::Ints(ints) => ints.into_iter().map(PyJson::Int).collect(),
            Items::Rows(rows) => split_rows(rows),
            Items::Nodes(nodes) => nodes,
        };
        nodes.push(value);
        *self = Items::Nodes(nodes);
    }

    fn finish(self) -> PyJson {
        let flat = |values: NumberValues| {
            PyJson::Numbers(Numbers {
                shape: vec![values.len()],
                values,
            })
        };
        match self {
            Items::Floats(floats) => flat(NumberValues::Float(floats)),
            Items::Ints(ints) => flat(NumberValues::Int(ints)),
            Items::Rows(rows) => PyJson::Numbers(rows),
            Items::Nodes(nodes) => PyJson::List(nodes),
        }
    }
}

/// The rows of `rows` (shape `[n, ...]`), one [`PyJson::Numbers`] each.
fn split_rows(rows: Numbers) -> Vec<PyJson> {
    let shape = rows.shape[1..].to_vec();
    let count = rows.shape[0];
    let len = shape.iter().product::<usize>();
    let row = |values: NumberValues| {
        PyJson::Numbers(Numbers {
            shape: shape.clone(),
            values,
        })
    };
    let parts = |i: usize| i * len..(i + 1) * len;
    match rows.values {
        NumberValues::Float(v) => (0..count)
            .map(|i| row(NumberValues::Float(v[parts(i)].to_vec())))
            .collect(),
        NumberValues::Int(v) => (0..count)
            .map(|i| row(NumberValues::Int(v[parts(i)].to_vec())))
            .collect(),
        NumberValues::Bool(v) => (0..count)
            .map(|i| row(NumberValues::Bool(v[parts(i)].to_vec())))
            .collect(),
    }
}

/// A reader of JSON text held whole, or read from a file a chunk at a time.
struct Parser<'r> {
    /// The bytes of the input from `discarded` on; `buf[at..]` is not read yet.
    buf: Vec<u8>,
    at: usize,
    /// The bytes of the input before `buf[0]`, read and dropped.
    discarded: usize,
    /// Where more input comes from; `None` once it has ended.
    source: Option<&'r mut dyn Read>,
    /// The read error that ended the input early.
    read_error: Option<io::Error>,
    /// Bytes read at a time ([`CHUNK`]; tests read less to cross chunk ends everywhere).
    chunk: usize,
    depth: usize,
}

impl<'r> Parser<'r> {
    fn new(buf: Vec<u8>, source: Option<&'r mut dyn Read>) -> Self {
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
    fn document(&mut self) -> Result<PyJson, Malformed> {
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

    fn error(&self, message: &'static str) -> Malformed {
        Malformed {
            message,
            offset: self.discarded + self.at,
        }
    }

    /// Makes `need` bytes available after `at`, unless the input ends first; returns how many
    /// are.
    fn available(&mut self, need: usize) -> usize {
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

    fn peek(&mut self) -> Option<u8> {
        if let Some(&byte) = self.buf.get(self.at) {
            return Some(byte);
        }
        (self.available(1) > 0).then(|| self.buf[self.at])
    }

    fn skip_space(&mut self) {
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

    fn eat(&mut self, literal: &str) -> bool {
        self.available(literal.len());
        if self.buf[self.at..].starts_with(literal.as_bytes()) {
            self.at += literal.len();
            true
        } else {
            false
        }
    }

    fn eat_byte(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.at += 1;
            true
        } else {
            false
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
        let mut entries = Vec::new();
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
            entries.push((key, value));
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

    /// Whether a number token (not `-Infinity`) comes next.
    fn number_follows(&mut self) -> bool {
        self.available(2);
        match self.buf.get(self.at) {
            Some(b'0'..=b'9') => true,
            Some(b'-') => self.buf.get(self.at + 1) != Some(&b'I'),
            _ => false,
        }
    }

    /// The number at `at` and the length of its token, which is wholly available.
    fn number_token(&mut self) -> Result<(f64, usize), Malformed> {
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

    fn number(&mut self) -> Result<PyJson, Malformed> {
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

    fn string(&mut self) -> Result<String, Malformed> {
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
            self.at += 2;
            units.push(self.hex4()?);
        }
        // Lone surrogates (Python writes them) become U+FFFD.
        Ok(char::decode_utf16(units)
            .next()
            .and_then(Result::ok)
            .unwrap_or('\u{FFFD}'))
    }
}

/// See [`PyJson::parse`].
pub(super) fn parse(text: &str) -> Result<PyJson, JsonError> {
    Parser::new(text.as_bytes().to_vec(), None)
        .document()
        .map_err(|error| error.locate(text.as_bytes()))
}

/// See [`PyJson::read_file`].
pub(super) fn read_file(path: &Path) -> Result<PyJson, JsonReadError> {
    let mut file = std::fs::File::open(path)?;
    let mut parser = Parser::new(Vec::with_capacity(CHUNK + LOOKAHEAD), Some(&mut file));
    let parsed = parser.document();
    if let Some(error) = parser.read_error.take() {
        return Err(JsonReadError::Io(error));
    }
    parsed.map_err(|error| {
        // Lines are only counted for an error: the file is read again up to it.
        let located = match std::fs::File::open(path) {
            Ok(file) => error.locate(file),
            Err(_) => error.locate(io::empty()),
        };
        JsonReadError::Malformed(located)
    })
}

#[cfg(test)]
mod tests {
    use super::super::PyJson::{self, *};

    #[test]
    fn reads_ints_and_floats_apart_and_rejects_garbage_with_a_position() {
        assert_eq!(
            PyJson::parse("[1, 1.0, -2, 3e2, 99999999999999999999]").unwrap(),
            List(vec![Int(1), Float(1.0), Int(-2), Float(300.0), Float(1e20)])
        );
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\" 1}",
            "\"abc",
            "[1] x",
            "nul",
            "{\"a\": \"\\x\"}",
            "\"\u{1}\"",
            "[-inf]",
            "[1.5, -nan]",
            "inf",
            "-",
        ] {
            let error = PyJson::parse(bad).unwrap_err();
            assert!(error.line >= 1 && error.column >= 1, "{bad}: {error}");
        }
        for (cut, message) in [
            (
                "[1.5, 2",
                "the input ends inside an array at line 1, column 8",
            ),
            (
                "{\"a\": [1], ",
                "the input ends inside an object at line 1, column 12",
            ),
            (
                "{\"a\"",
                "the input ends inside an object at line 1, column 5",
            ),
        ] {
            assert_eq!(PyJson::parse(cut).unwrap_err().to_string(), message);
        }
        let error = PyJson::parse("{\n  \"a\": [1,\n  2,,]\n}").unwrap_err();
        assert_eq!((error.line, error.column), (3, 5), "{error}");
        let deep = "[".repeat(10_000);
        assert!(
            PyJson::parse(&deep)
                .unwrap_err()
                .message
                .contains("nesting")
        );
    }

    /// Reads `text` as [`PyJson::read_file`] reads a file, `chunk` bytes at a time.
    fn read_in_chunks(text: impl AsRef<[u8]>, chunk: usize) -> Result<PyJson, super::JsonError> {
        let text = text.as_ref();
        let mut source = text;
        let mut parser = super::Parser::new(Vec::new(), Some(&mut source));
        parser.chunk = chunk;
        parser.document().map_err(|error| error.locate(text))
    }

    fn any_json() -> impl proptest::strategy::Strategy<Value = PyJson> {
        use proptest::prelude::*;
        let float = prop_oneof![
            any::<f64>(),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(1e-300),
            Just(-0.1),
        ];
        let leaf = prop_oneof![
            Just(Null),
            any::<bool>().prop_map(Bool),
            any::<i64>().prop_map(Int),
            float.prop_map(Float),
            "[a-z\\\"\\n\u{e9}\u{1F600}]{0,12}".prop_map(Str),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..8).prop_map(List),
                proptest::collection::vec(("[a-z]{0,4}", inner), 0..6).prop_map(Object),
                // Rows of numbers, read into their flat form.
                (1..4usize, 1..5usize, any::<bool>()).prop_map(|(rows, len, ints)| {
                    List(
                        (0..rows)
                            .map(|r| {
                                List(
                                    (0..len)
                                        .map(|i| {
                                            let v = (r * 31 + i) as i64 - 40;
                                            if ints { Int(v) } else { Float(v as f64 / 3.0) }
                                        })
                                        .collect(),
                                )
                            })
                            .collect(),
                    )
                }),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn reading_in_chunks_gives_the_same_values_and_errors(
            value in any_json(),
            chunk in 1..80usize,
            cut in proptest::prelude::any::<proptest::sample::Index>(),
            junk in proptest::prelude::any::<u8>(),
        ) {
            let text = value.to_python_string();
            // (An int after floats is read as a float, so the text may not round-trip.)
            let whole = PyJson::parse(&text).unwrap().to_python_string();
            let chunked = read_in_chunks(&text, chunk).unwrap().to_python_string();
            proptest::prop_assert_eq!(chunked, whole);
            // Broken texts: cut short, or with a byte put in; the same error at the same place.
            let at = cut.index(text.len() + 1);
            let mut broken = text.as_bytes()[..at].to_vec();
            for bad in [broken.clone(), {
                broken.push(junk);
                broken.extend_from_slice(&text.as_bytes()[at..]);
                broken
            }] {
                let Ok(bad) = String::from_utf8(bad) else { continue };
                let whole = PyJson::parse(&bad).map(|v| v.to_python_string());
                let chunked = read_in_chunks(&bad, chunk).map(|v| v.to_python_string());
                proptest::prop_assert_eq!(chunked, whole);
            }
        }
    }

    proptest::proptest! {
        /// Any bytes: an error or a value, never a panic, whatever the chunk size; text reads
        /// as it parses whole.
        #[test]
        fn any_bytes_read_without_panicking(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
            json_like in "[\\[\\]{}\",:0-9a-zINE .eE+\\\\u-]{0,80}",
            chunk in 1..40usize,
        ) {
            let _ = read_in_chunks(&bytes, chunk);
            let chunked = read_in_chunks(&json_like, chunk).map(|v| v.to_python_string());
            let whole = PyJson::parse(&json_like).map(|v| v.to_python_string());
            proptest::prop_assert_eq!(chunked, whole);
        }
    }

    #[test]
    fn numbers_longer_than_the_lookahead_are_read_whole_at_any_chunk_end() {
        let long = format!("1.{}1e5", "0".repeat(70));
        for text in [
            format!("[{long}, -{long}, 2e-3]"),
            format!("[1.5, {long}, 7]"),
            format!("{{\"k\": {}}}", "9".repeat(100)),
            "[0.1, -Infinity, NaN, 1e-5]".to_owned(),
        ] {
            let whole = PyJson::parse(&text).unwrap();
            for chunk in 1..100 {
                let chunked = read_in_chunks(&text, chunk).unwrap();
                assert_eq!(
                    chunked.to_python_string(),
                    whole.to_python_string(),
                    "{text} in chunks of {chunk}"
                );
            }
        }
        assert_eq!(
            PyJson::parse(&format!("[{long}]")).unwrap(),
            List(vec![Float(100000.0)])
        );
    }

    #[test]
    fn files_are_read_in_chunks_and_errors_placed_in_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        let numbers: Vec<PyJson> = (0..200_000).map(|i| Float(f64::from(i) / 7.0)).collect();
        let text = Object(vec![("t".into(), List(numbers))]).to_python_string();
        assert!(text.len() > 2 * super::CHUNK, "{}", text.len());
        std::fs::write(&path, &text).unwrap();
        let read = PyJson::read_file(&path).unwrap();
        assert_eq!(read.to_python_string(), text);
        assert!(matches!(read.get("t"), Some(Numbers(n)) if n.shape == [200_000]));

        // A bad token on the last number's line, past the first chunks.
        let broken = text.replacen("\n  ]", " x\n  ]", 1);
        std::fs::write(&path, &broken).unwrap();
        let error = PyJson::read_file(&path).unwrap_err();
        let lines = broken.lines().count();
        let last = broken.lines().nth(lines - 3).unwrap();
        assert_eq!(
            error.to_string(),
            format!(
                "expected `,` or `]` in an array at line {}, column {}",
                lines - 2,
                last.len()
            )
        );
        let missing = PyJson::read_file(&dir.path().join("missing.json")).unwrap_err();
        assert!(
            matches!(&missing, super::JsonReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound),
            "{missing}"
        );
    }
}
