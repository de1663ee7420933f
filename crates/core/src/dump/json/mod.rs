//! JSON as Python's `json` module writes and reads it, so dumps from a PyTorch reference and
//! from Burn compare against each other both ways.
//!
//! Writing follows `json.dump(obj, f, indent=2)`: two-space indent, `": "` after keys, ASCII
//! only (`\uXXXX` escapes), floats as Python's `repr` (`0.1`, `1e-05`, `1.0`), the tokens `NaN`,
//! `Infinity` and `-Infinity` for non-finite floats, and no trailing newline. Reading accepts
//! the same, keeps key order and tells integers (`1`) from floats (`1.0`).

mod read;
mod write;

use std::collections::HashMap;
use std::path::Path;

pub use read::{JsonError, JsonReadError};

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
#[derive(Debug, Clone)]
pub enum NumberValues {
    /// Floats.
    Float(Vec<f64>),
    /// Integers.
    Int(Vec<i64>),
    /// Booleans.
    Bool(Vec<bool>),
    /// Integers from 0 to 255, a byte each: a `uint8` blob's elements (an image's pixels) in
    /// their own type, where [`NumberValues::Int`] would take eight bytes a pixel. The same
    /// JSON as `Int`, and equal to it.
    U8(Vec<u8>),
}

impl PartialEq for NumberValues {
    fn eq(&self, other: &NumberValues) -> bool {
        use NumberValues::*;
        match (self, other) {
            (Float(a), Float(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Bool(a), Bool(b)) => a == b,
            (U8(a), U8(b)) => a == b,
            (Int(_), U8(_)) | (U8(_), Int(_)) => {
                self.len() == other.len()
                    && (0..self.len()).all(|i| self.int_at(i) == other.int_at(i))
            }
            _ => false,
        }
    }
}

impl NumberValues {
    /// How many numbers.
    pub fn len(&self) -> usize {
        match self {
            NumberValues::Float(v) => v.len(),
            NumberValues::Int(v) => v.len(),
            NumberValues::Bool(v) => v.len(),
            NumberValues::U8(v) => v.len(),
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
            NumberValues::U8(v) => PyJson::Int(i64::from(v[i])),
        }
    }

    /// The `i`th number as `f64` (bools as 0 and 1).
    pub fn f64_at(&self, i: usize) -> f64 {
        match self {
            NumberValues::Float(v) => v[i],
            NumberValues::Int(v) => v[i] as f64,
            NumberValues::Bool(v) => f64::from(u8::from(v[i])),
            NumberValues::U8(v) => f64::from(v[i]),
        }
    }

    /// The `i`th number as an exact integer, when the numbers are ints or bools.
    pub fn int_at(&self, i: usize) -> Option<i64> {
        match self {
            NumberValues::Float(_) => None,
            NumberValues::Int(v) => Some(v[i]),
            NumberValues::Bool(v) => Some(i64::from(v[i])),
            NumberValues::U8(v) => Some(i64::from(v[i])),
        }
    }

    /// `abs(current[i] - self[i])` as Python computes it: see [`abs_difference`].
    pub fn abs_difference_at(&self, current: &NumberValues, i: usize) -> f64 {
        match (self.int_at(i), current.int_at(i)) {
            (Some(r), Some(c)) => exact_abs_difference(r, c),
            _ => (current.f64_at(i) - self.f64_at(i)).abs(),
        }
    }
}

/// `abs(current - reference)` of two numbers as Python computes it: exactly when both are ints
/// or bools (ints beyond 2^53 differ even where their `f64`s are equal), else in `f64`. `None`
/// when either is not a number.
pub fn abs_difference(reference: &PyJson, current: &PyJson) -> Option<f64> {
    match (reference.as_int(), current.as_int()) {
        (Some(r), Some(c)) => Some(exact_abs_difference(r, c)),
        _ => Some((current.as_number()? - reference.as_number()?).abs()),
    }
}

/// `abs(c - r)` with no rounding before the subtraction.
fn exact_abs_difference(r: i64, c: i64) -> f64 {
    (i128::from(c) - i128::from(r)).unsigned_abs() as f64
}

impl Numbers {
    /// The nested index (`[row, column, ...]`) of the `i`th number.
    pub fn index_of(&self, i: usize) -> Vec<usize> {
        let mut index = vec![0; self.shape.len()];
        let mut rest = i;
        for (slot, dim) in index.iter_mut().zip(&self.shape).rev() {
            *slot = rest % dim;
            rest /= dim;
        }
        index
    }

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

/// Where each key of an object's `entries` is, for the other side of a comparison to look
/// its keys up in once each (a search of the entries per key was quadratic: 150k keys a side
/// took minutes). Keys are unique: the reader keeps a repeated key's last value in its first
/// place, as Python's `json` does; of keys repeated anyway the first is found, as a search
/// would.
pub fn key_positions(entries: &[(String, PyJson)]) -> HashMap<&str, usize> {
    let mut positions = HashMap::with_capacity(entries.len());
    for (at, (key, _)) in entries.iter().enumerate() {
        positions.entry(key.as_str()).or_insert(at);
    }
    positions
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

    /// The value as an exact integer, when it is an int or a bool.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            PyJson::Bool(b) => Some(i64::from(*b)),
            PyJson::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The value as Python's `json.dumps(value, indent=2)` writes it.
    pub fn to_python_string(&self) -> String {
        let mut out = String::new();
        write::write_value(&mut out, self, 0, &mut |_| Ok(())).unwrap_or(());
        out
    }

    /// Writes the value as Python's `json.dump(value, f, indent=2)` does, streaming: large
    /// dumps are never held in memory as one string.
    pub fn write_python(&self, writer: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut out = String::with_capacity(1 << 16);
        write::write_value(&mut out, self, 0, &mut |out: &mut String| {
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
        read::parse(text)
    }

    /// Reads the JSON file at `path` (as [`PyJson::parse`] reads text), a chunk at a time:
    /// memory holds the parsed value, not the file's text.
    pub fn read_file(path: &Path) -> Result<PyJson, JsonReadError> {
        read::read_file(path)
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
    fn ensure_ascii_escapes_del_like_python() {
        // json.dumps("~\x7f\x80") == '"~\\u007f\\u0080"'
        assert_eq!(
            Str("~\u{7f}\u{80}".into()).to_python_string(),
            "\"~\\u007f\\u0080\""
        );
    }

    #[test]
    fn flat_numbers_write_read_and_compare_as_their_nested_lists() {
        use super::{NumberValues, Numbers as Flat};
        let flat = Numbers(Flat {
            shape: vec![2, 3],
            values: NumberValues::Float(vec![1.0, 2.5, -0.0, 4.0, f64::INFINITY, 6.0]),
        });
        if let Numbers(flat) = &flat {
            assert_eq!(flat.index_of(0), [0, 0]);
            assert_eq!(flat.index_of(4), [1, 1]);
            assert_eq!(flat.index_of(5), [1, 2]);
        }
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
}
