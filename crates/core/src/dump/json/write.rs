//! Writing [`PyJson`] as Python's `json.dump(indent=2)` does.

use std::fmt::Write as _;

use super::{NumberValues, Numbers, PyJson};
use crate::python;

fn indent(out: &mut String, level: usize) {
    out.push('\n');
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// Appends `value` to `out`; `flush` may drain `out` between items.
pub(super) fn write_value(
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
            NumberValues::U8(v) => {
                let _ = write!(out, "{}", v[*at]);
            }
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
fn write_float_token(out: &mut String, value: f64) {
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
            // Python's `ensure_ascii` escapes everything outside ' '..='~', DEL included.
            c if (c as u32) < 0x20 || (c as u32) >= 0x7f => {
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
