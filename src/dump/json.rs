//! JSON as Python's `json` module writes and reads it, so dumps from a PyTorch reference and
//! from Burn compare against each other both ways.
//!
//! Writing follows `json.dump(obj, f, indent=2)`: two-space indent, `": "` after keys, ASCII
//! only (`\uXXXX` escapes), floats as Python's `repr` (`0.1`, `1e-05`, `1.0`), the tokens `NaN`,
//! `Infinity` and `-Infinity` for non-finite floats, and no trailing newline. Reading accepts
//! the same, keeps key order and tells integers (`1`) from floats (`1.0`).

use std::fmt::Write as _;

use crate::python;

/// A JSON value, with Python's distinction between integers and floats.
#[derive(Debug, Clone, PartialEq)]
pub enum PyJson {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// An integer (Python `int`).
    Int(i64),
    /// A float (Python `float`), non-finite values included.
    Float(f64),
    /// A string.
    Str(String),
    /// An array.
    List(Vec<PyJson>),
    /// An object, keys in order.
    Object(Vec<(String, PyJson)>),
}

impl PyJson {
    /// The value of `key` in an object.
    pub fn get(&self, key: &str) -> Option<&PyJson> {
        match self {
            PyJson::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value as a number, as Python's `numbers.Number` sees it: ints, floats and bools.
    pub fn as_number(&self) -> Option<f64> {
        match self {
            PyJson::Bool(b) => Some(f64::from(u8::from(*b))),
            PyJson::Int(i) => Some(*i as f64),
            PyJson::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// The value as Python's `json.dumps(value, indent=2)` writes it.
    pub fn to_python_string(&self) -> String {
        let mut out = String::new();
        write_value(&mut out, self, 0, &mut |_| Ok(())).unwrap_or(());
        out
    }

    /// Writes the value as Python's `json.dump(value, f, indent=2)` does, streaming: large
    /// dumps are never held in memory as one string.
    pub fn write_python(&self, writer: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut out = String::with_capacity(1 << 16);
        write_value(&mut out, self, 0, &mut |out: &mut String| {
            if out.len() >= 1 << 16 {
                writer.write_all(out.as_bytes())?;
                out.clear();
            }
            Ok(())
        })?;
        writer.write_all(out.as_bytes())
    }

    /// Parses JSON text, `NaN`/`Infinity`/`-Infinity` included.
    pub fn parse(text: &str) -> Result<PyJson, JsonError> {
        let mut parser = Parser {
            bytes: text.as_bytes(),
            at: 0,
            depth: 0,
        };
        parser.skip_space();
        let value = parser.value()?;
        parser.skip_space();
        if parser.at != parser.bytes.len() {
            return Err(parser.error("trailing characters after the JSON value"));
        }
        Ok(value)
    }
}

fn indent(out: &mut String, level: usize) {
    out.push('\n');
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// Appends `value` to `out`; `flush` may drain `out` between items.
fn write_value(
    out: &mut String,
    value: &PyJson,
    level: usize,
    flush: &mut dyn FnMut(&mut String) -> std::io::Result<()>,
) -> std::io::Result<()> {
    match value {
        PyJson::Null => out.push_str("null"),
        PyJson::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        PyJson::Int(i) => {
            let _ = write!(out, "{i}");
        }
        PyJson::Float(f) => write_float_token(out, *f),
        PyJson::Str(s) => write_string(out, s),
        PyJson::List(items) if items.is_empty() => out.push_str("[]"),
        PyJson::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, level + 1);
                write_value(out, item, level + 1, flush)?;
                flush(out)?;
            }
            indent(out, level);
            out.push(']');
        }
        PyJson::Object(entries) if entries.is_empty() => out.push_str("{}"),
        PyJson::Object(entries) => {
            out.push('{');
            for (i, (key, item)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                indent(out, level + 1);
                write_string(out, key);
                out.push_str(": ");
                write_value(out, item, level + 1, flush)?;
                flush(out)?;
            }
            indent(out, level);
            out.push('}');
        }
    }
    Ok(())
}

/// A float as Python's `json` writes it, appended to `out`.
pub(crate) fn write_float_token(out: &mut String, value: f64) {
    if value.is_nan() {
        out.push_str("NaN");
    } else if value.is_infinite() {
        out.push_str(if value > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        python::write_repr(out, value);
    }
}

fn write_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || !c.is_ascii() => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

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

/// Deeper nesting is refused rather than risking the stack on a hostile file.
const MAX_DEPTH: usize = 512;

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
    depth: usize,
}

impl Parser<'_> {
    fn error(&self, message: &str) -> JsonError {
        let before = &self.bytes[..self.at.min(self.bytes.len())];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let column = before.iter().rev().take_while(|b| **b != b'\n').count() + 1;
        JsonError {
            message: message.to_owned(),
            line,
            column,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, literal: &str) -> bool {
        if self.bytes[self.at..].starts_with(literal.as_bytes()) {
            self.at += literal.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<PyJson, JsonError> {
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
        parse: fn(&mut Self) -> Result<PyJson, JsonError>,
    ) -> Result<PyJson, JsonError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("nesting deeper than 512 levels"));
        }
        let value = parse(self);
        self.depth -= 1;
        value
    }

    fn object(&mut self) -> Result<PyJson, JsonError> {
        self.at += 1;
        let mut entries = Vec::new();
        self.skip_space();
        if self.eat("}") {
            return Ok(PyJson::Object(entries));
        }
        loop {
            self.skip_space();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a string key"));
            }
            let key = self.string()?;
            self.skip_space();
            if !self.eat(":") {
                return Err(self.error("expected `:` after a key"));
            }
            self.skip_space();
            let value = self.value()?;
            entries.push((key, value));
            self.skip_space();
            if self.eat(",") {
                continue;
            }
            if self.eat("}") {
                return Ok(PyJson::Object(entries));
            }
            return Err(self.error("expected `,` or `}` in an object"));
        }
    }

    fn list(&mut self) -> Result<PyJson, JsonError> {
        self.at += 1;
        let mut items = Vec::new();
        self.skip_space();
        if self.eat("]") {
            return Ok(PyJson::List(items));
        }
        loop {
            self.skip_space();
            items.push(self.value()?);
            self.skip_space();
            if self.eat(",") {
                continue;
            }
            if self.eat("]") {
                return Ok(PyJson::List(items));
            }
            return Err(self.error("expected `,` or `]` in an array"));
        }
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.at += 1;
        let mut out = String::new();
        loop {
            let start = self.at;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            let run = std::str::from_utf8(&self.bytes[start..self.at])
                .map_err(|_| self.error("invalid UTF-8 in a string"))?;
            out.push_str(run);
            match self.peek() {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    let escaped = self
                        .peek()
                        .ok_or_else(|| self.error("unterminated escape"))?;
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

    fn hex4(&mut self) -> Result<u16, JsonError> {
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or_else(|| self.error("short \\u escape"))?;
        let text = std::str::from_utf8(digits).map_err(|_| self.error("invalid \\u escape"))?;
        let unit = u16::from_str_radix(text, 16).map_err(|_| self.error("invalid \\u escape"))?;
        self.at += 4;
        Ok(unit)
    }

    fn unicode_escape(&mut self) -> Result<char, JsonError> {
        let first = self.hex4()?;
        let mut units = vec![first];
        if (0xD800..0xDC00).contains(&first) && self.eat("\\u") {
            units.push(self.hex4()?);
        }
        // Lone surrogates (Python writes them) become U+FFFD.
        Ok(char::decode_utf16(units)
            .next()
            .and_then(Result::ok)
            .unwrap_or('\u{FFFD}'))
    }

    fn number(&mut self) -> Result<PyJson, JsonError> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        let mut is_float = false;
        while let Some(b) = self.peek() {
            match b {
                b'0'..=b'9' => {}
                b'.' | b'e' | b'E' | b'+' | b'-' => is_float = true,
                _ => break,
            }
            self.at += 1;
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at])
            .map_err(|_| self.error("invalid number"))?;
        if !is_float && let Ok(int) = text.parse::<i64>() {
            return Ok(PyJson::Int(int));
        }
        // Integers beyond i64 are read as floats, as precise as they can be.
        text.parse::<f64>()
            .map(PyJson::Float)
            .map_err(|_| self.error("invalid number"))
    }
}

#[cfg(test)]
mod tests {
    use super::PyJson::{self, *};

    #[test]
    fn writes_like_python_json_dump_indent_2() {
        let value = Object(vec![
            (
                "a".into(),
                List(vec![List(vec![Float(1.0), Float(2.5)]), List(vec![])]),
            ),
            ("b".into(), Object(vec![])),
            (
                "c".into(),
                List(vec![Int(3), Null, Bool(true), Str("é\"\n".into())]),
            ),
            (
                "d".into(),
                List(vec![
                    Float(f64::NAN),
                    Float(f64::INFINITY),
                    Float(f64::NEG_INFINITY),
                    Float(1e-5),
                ]),
            ),
            ("e".into(), Float(0.10000000149011612)),
            ("emoji".into(), Str("😀".into())),
        ]);
        let expected = "{\n  \"a\": [\n    [\n      1.0,\n      2.5\n    ],\n    []\n  ],\n  \"b\": {},\n  \"c\": [\n    3,\n    null,\n    true,\n    \"\\u00e9\\\"\\n\"\n  ],\n  \"d\": [\n    NaN,\n    Infinity,\n    -Infinity,\n    1e-05\n  ],\n  \"e\": 0.10000000149011612,\n  \"emoji\": \"\\ud83d\\ude00\"\n}";
        assert_eq!(value.to_python_string(), expected);
        // And reads back to the same value (NaN aside).
        let back = PyJson::parse(expected).unwrap();
        assert_eq!(back.get("a"), value.get("a"));
        assert_eq!(back.get("c"), value.get("c"));
        assert_eq!(back.get("emoji"), value.get("emoji"));
        assert!(
            matches!(back.get("d"), Some(List(items)) if matches!(items[0], Float(f) if f.is_nan()))
        );
    }

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
        ] {
            let error = PyJson::parse(bad).unwrap_err();
            assert!(error.line >= 1 && error.column >= 1, "{bad}: {error}");
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
}
