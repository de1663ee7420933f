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
#[derive(Debug, Clone)]
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
    /// A rectangular nested list of numbers of one kind (what `tensor.tolist()` gives), held
    /// flat: the same JSON as the nested [`PyJson::List`]s it stands for, and equal to them,
    /// without a node per element. Dumps and the parser use it for tensors.
    Numbers(Numbers),
}

/// The flat form of a nested list of numbers: [`PyJson::Numbers`].
#[derive(Debug, Clone, PartialEq)]
pub struct Numbers {
    /// The nesting: `[2, 3]` is a list of two lists of three numbers. Never empty.
    pub shape: Vec<usize>,
    /// The numbers, row-major.
    pub values: NumberValues,
}

/// The numbers of a [`Numbers`], all of one kind.
#[derive(Debug, Clone, PartialEq)]
pub enum NumberValues {
    /// Floats.
    Float(Vec<f64>),
    /// Integers.
    Int(Vec<i64>),
    /// Booleans.
    Bool(Vec<bool>),
}

impl NumberValues {
    /// How many numbers.
    pub fn len(&self) -> usize {
        match self {
            NumberValues::Float(v) => v.len(),
            NumberValues::Int(v) => v.len(),
            NumberValues::Bool(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`th number as a JSON scalar.
    pub fn get(&self, i: usize) -> PyJson {
        match self {
            NumberValues::Float(v) => PyJson::Float(v[i]),
            NumberValues::Int(v) => PyJson::Int(v[i]),
            NumberValues::Bool(v) => PyJson::Bool(v[i]),
        }
    }

    /// The `i`th number as `f64` (bools as 0 and 1).
    pub fn f64_at(&self, i: usize) -> f64 {
        match self {
            NumberValues::Float(v) => v[i],
            NumberValues::Int(v) => v[i] as f64,
            NumberValues::Bool(v) => f64::from(u8::from(v[i])),
        }
    }
}

impl Numbers {
    /// The nested lists it stands for.
    pub fn to_lists(&self) -> PyJson {
        fn nest(numbers: &NumberValues, shape: &[usize], at: &mut usize) -> PyJson {
            match shape.split_first() {
                None => {
                    let value = numbers.get(*at);
                    *at += 1;
                    value
                }
                Some((&n, rest)) => PyJson::List((0..n).map(|_| nest(numbers, rest, at)).collect()),
            }
        }
        nest(&self.values, &self.shape, &mut 0)
    }
}

impl PartialEq for PyJson {
    fn eq(&self, other: &PyJson) -> bool {
        use PyJson::*;
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Float(a), Float(b)) => a == b,
            (Str(a), Str(b)) => a == b,
            (List(a), List(b)) => a == b,
            (Object(a), Object(b)) => a == b,
            (Numbers(a), Numbers(b)) => a == b,
            (Numbers(a), b @ List(_)) | (b @ List(_), Numbers(a)) => &a.to_lists() == b,
            _ => false,
        }
    }
}

impl PyJson {
    /// The value of `key` in an object.
    pub fn get(&self, key: &str) -> Option<&PyJson> {
        match self {
            PyJson::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value with every [`PyJson::Numbers`] written out as nested lists.
    pub fn expand_numbers(self) -> PyJson {
        match self {
            PyJson::Numbers(numbers) => numbers.to_lists(),
            PyJson::List(items) => {
                PyJson::List(items.into_iter().map(PyJson::expand_numbers).collect())
            }
            PyJson::Object(entries) => PyJson::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, v.expand_numbers()))
                    .collect(),
            ),
            other => other,
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
        PyJson::Numbers(numbers) => {
            write_numbers(out, numbers, &numbers.shape, &mut 0, level, flush)?
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

/// The nested lists of `numbers` (dims `shape`, from element `at`), as `write_value` writes them.
fn write_numbers(
    out: &mut String,
    numbers: &Numbers,
    shape: &[usize],
    at: &mut usize,
    level: usize,
    flush: &mut dyn FnMut(&mut String) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let Some((&n, rest)) = shape.split_first() else {
        match &numbers.values {
            NumberValues::Float(v) => write_float_token(out, v[*at]),
            NumberValues::Int(v) => {
                let _ = write!(out, "{}", v[*at]);
            }
            NumberValues::Bool(v) => out.push_str(if v[*at] { "true" } else { "false" }),
        }
        *at += 1;
        return Ok(());
    };
    if n == 0 {
        out.push_str("[]");
        return Ok(());
    }
    out.push('[');
    for i in 0..n {
        if i > 0 {
            out.push(',');
        }
        indent(out, level + 1);
        write_numbers(out, numbers, rest, at, level + 1, flush)?;
        if rest.is_empty() {
            continue;
        }
        flush(out)?;
    }
    indent(out, level);
    out.push(']');
    flush(out)
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

/// A list of equally shaped [`PyJson::Numbers`] of one kind becomes one of a higher rank.
fn densify(items: Vec<PyJson>) -> PyJson {
    let Some(PyJson::Numbers(first)) = items.first() else {
        return PyJson::List(items);
    };
    let same = |item: &PyJson| match item {
        PyJson::Numbers(n) => {
            n.shape == first.shape
                && std::mem::discriminant(&n.values) == std::mem::discriminant(&first.values)
        }
        _ => false,
    };
    if !items.iter().all(same) {
        return PyJson::List(items);
    }
    let mut shape = vec![items.len()];
    shape.extend_from_slice(&first.shape);
    let total = items.len() * first.values.len();
    let mut values = match &first.values {
        NumberValues::Float(_) => NumberValues::Float(Vec::with_capacity(total)),
        NumberValues::Int(_) => NumberValues::Int(Vec::with_capacity(total)),
        NumberValues::Bool(_) => NumberValues::Bool(Vec::with_capacity(total)),
    };
    for item in items {
        if let PyJson::Numbers(n) = item {
            match (&mut values, n.values) {
                (NumberValues::Float(all), NumberValues::Float(v)) => all.extend(v),
                (NumberValues::Int(all), NumberValues::Int(v)) => all.extend(v),
                (NumberValues::Bool(all), NumberValues::Bool(v)) => all.extend(v),
                _ => {}
            }
        }
    }
    PyJson::Numbers(Numbers { shape, values })
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
        let rest = &self.bytes[self.at..];
        self.at += rest
            .iter()
            .position(|b| !matches!(b, b' ' | b'\n' | b'\r' | b'\t'))
            .unwrap_or(rest.len());
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
        // A list of plain numbers is read straight into its flat form.
        if let Some(numbers) = self.number_list()? {
            return Ok(numbers);
        }
        loop {
            self.skip_space();
            items.push(self.value()?);
            self.skip_space();
            if self.eat(",") {
                continue;
            }
            if self.eat("]") {
                return Ok(densify(items));
            }
            return Err(self.error("expected `,` or `]` in an array"));
        }
    }

    /// After `[`: a list of numbers of one kind, read flat; `None` (nothing consumed) when the
    /// list holds anything else.
    fn number_list(&mut self) -> Result<Option<PyJson>, JsonError> {
        let start = self.at;
        let mut floats = Vec::new();
        let mut ints = Vec::new();
        loop {
            self.skip_space();
            let number = match self.peek() {
                // Once the list is known to hold floats, the rest are read as floats (an int
                // token among them, which `tolist()` never writes, compares equal anyway).
                Some(b'0'..=b'9' | b'-')
                    if !floats.is_empty() && self.bytes.get(self.at + 1) != Some(&b'I') =>
                {
                    match lexical_core::parse_partial::<f64>(&self.bytes[self.at..]) {
                        Ok((value, length)) => {
                            self.at += length;
                            PyJson::Float(value)
                        }
                        Err(_) => return Err(self.error("invalid number")),
                    }
                }
                Some(b'0'..=b'9') => self.number()?,
                Some(b'-') if self.bytes.get(self.at + 1) != Some(&b'I') => self.number()?,
                Some(b'-' | b'N' | b'I') => self.value()?,
                _ => break,
            };
            match number {
                PyJson::Float(f) if ints.is_empty() => floats.push(f),
                PyJson::Int(i) if floats.is_empty() => ints.push(i),
                _ => break,
            }
            self.skip_space();
            if self.eat(",") {
                continue;
            }
            if self.eat("]") {
                let values = if floats.is_empty() {
                    NumberValues::Int(ints)
                } else {
                    NumberValues::Float(floats)
                };
                return Ok(Some(PyJson::Numbers(Numbers {
                    shape: vec![values.len()],
                    values,
                })));
            }
            break;
        }
        self.at = start;
        Ok(None)
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
        let rest = &self.bytes[self.at..];
        let (value, length) =
            lexical_core::parse_partial::<f64>(rest).map_err(|_| self.error("invalid number"))?;
        let text = &rest[..length];
        self.at += length;
        // Python reads `1` as an int and `1.0` or `1e3` as a float.
        if text.iter().all(|b| b.is_ascii_digit() || *b == b'-')
            && let Ok(int) = lexical_core::parse::<i64>(text)
        {
            return Ok(PyJson::Int(int));
        }
        // Integers beyond i64 are read as floats, as precise as they can be.
        Ok(PyJson::Float(value))
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
        let back = back.expand_numbers();
        assert!(
            matches!(back.get("d"), Some(List(items)) if matches!(items[0], Float(f) if f.is_nan()))
        );
    }

    #[test]
    fn flat_numbers_write_read_and_compare_as_their_nested_lists() {
        use super::{NumberValues, Numbers as Flat};
        let flat = Numbers(Flat {
            shape: vec![2, 3],
            values: NumberValues::Float(vec![1.0, 2.5, -0.0, 4.0, f64::INFINITY, 6.0]),
        });
        let nested = flat.clone().expand_numbers();
        assert_eq!(flat.to_python_string(), nested.to_python_string());
        assert_eq!(flat, nested);
        let parsed = PyJson::parse(&nested.to_python_string()).unwrap();
        assert!(
            matches!(&parsed, Numbers(n) if n.shape == [2, 3]),
            "{parsed:?}"
        );
        assert_eq!(parsed, flat);
        let ints = PyJson::parse("[[1, 2], [3, 4]]").unwrap();
        assert!(matches!(
            &ints,
            Numbers(Flat {
                values: NumberValues::Int(_),
                ..
            })
        ));
        // Ragged or mixed lists stay lists.
        assert!(matches!(PyJson::parse("[[1, 2], [3]]").unwrap(), List(_)));
        assert!(matches!(
            PyJson::parse("[[1, 2], [3.5, 4.5]]").unwrap(),
            List(_)
        ));
        let empty = Numbers(Flat {
            shape: vec![2, 0],
            values: NumberValues::Int(vec![]),
        });
        assert_eq!(empty.to_python_string(), "[\n  [],\n  []\n]");
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
