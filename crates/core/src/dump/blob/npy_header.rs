//! The header of an `.npy` file: a Python dict literal naming the dtype, order and shape.

use super::Dtype;

/// A value of the NPY header's Python dict literal.
#[derive(Debug)]
enum HeaderValue {
    Str(String),
    Bool(bool),
    Tuple(Vec<usize>),
}

/// A reader of the NPY header: a Python dict literal of strings, booleans and int tuples.
struct HeaderParser<'a> {
    text: &'a [u8],
    at: usize,
}

impl HeaderParser<'_> {
    fn skip_space(&mut self) {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.text[self.at..].starts_with(token.as_bytes()) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.skip_space();
        let quote = match self.text.get(self.at) {
            Some(q @ (b'\'' | b'"')) => *q,
            _ => return Err(format!("expected a quoted string at byte {}", self.at)),
        };
        let start = self.at + 1;
        let length = self.text[start..]
            .iter()
            .position(|b| *b == quote)
            .ok_or("unterminated string")?;
        self.at = start + length + 1;
        String::from_utf8(self.text[start..start + length].to_vec())
            .map_err(|_| "a string is not UTF-8".to_owned())
    }

    fn integer(&mut self) -> Result<usize, String> {
        self.skip_space();
        let start = self.at;
        while self.text.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        let digits = std::str::from_utf8(&self.text[start..self.at]).unwrap_or("");
        let value = digits
            .parse::<usize>()
            .map_err(|_| format!("expected a dimension at byte {start}"))?;
        self.eat("L"); // Python 2 longs: `(2L, 3L)`.
        Ok(value)
    }

    fn value(&mut self) -> Result<HeaderValue, String> {
        self.skip_space();
        if self.eat("True") {
            return Ok(HeaderValue::Bool(true));
        }
        if self.eat("False") {
            return Ok(HeaderValue::Bool(false));
        }
        if self.eat("(") {
            let mut dims = Vec::new();
            loop {
                if self.eat(")") {
                    return Ok(HeaderValue::Tuple(dims));
                }
                dims.push(self.integer()?);
                if !self.eat(",") && !self.text[self.at..].starts_with(b")") {
                    return Err(format!(
                        "expected `,` or `)` in the shape at byte {}",
                        self.at
                    ));
                }
            }
        }
        if matches!(self.text.get(self.at), Some(b'\'' | b'"')) {
            return self.string().map(HeaderValue::Str);
        }
        Err(format!(
            "unsupported value at byte {} (structured dtypes are not supported)",
            self.at
        ))
    }

    fn dict(&mut self) -> Result<Vec<(String, HeaderValue)>, String> {
        if !self.eat("{") {
            return Err("the header is not a dict".to_owned());
        }
        let mut entries = Vec::new();
        loop {
            if self.eat("}") {
                break;
            }
            let key = self.string()?;
            if !self.eat(":") {
                return Err(format!("expected `:` after '{key}'"));
            }
            entries.push((key, self.value()?));
            if !self.eat(",") && !self.text[self.at..].starts_with(b"}") {
                return Err(format!("expected `,` or `}}` at byte {}", self.at));
            }
        }
        self.skip_space();
        if self.at != self.text.len() {
            return Err("characters after the header dict".to_owned());
        }
        Ok(entries)
    }
}

/// The dtype and shape of an NPY header.
pub(super) fn parse_npy_header(text: &[u8]) -> Result<(Dtype, Vec<usize>), String> {
    let entries = HeaderParser { text, at: 0 }.dict()?;
    let find = |key: &str| entries.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let dtype = match find("descr") {
        Some(HeaderValue::Str(descr)) => Dtype::from_numpy_descr(descr).ok_or_else(|| {
            format!(
                "unsupported descr '{descr}' (supported: little-endian bool, integers and \
                 f2/f4/f8)"
            )
        })?,
        _ => return Err("'descr' is missing or not a string".to_owned()),
    };
    match find("fortran_order") {
        Some(HeaderValue::Bool(false)) => {}
        Some(HeaderValue::Bool(true)) => {
            return Err(
                "Fortran-order arrays are not supported; save a C-order array \
                 (numpy.ascontiguousarray)"
                    .to_owned(),
            );
        }
        _ => return Err("'fortran_order' is missing or not True/False".to_owned()),
    }
    match find("shape") {
        Some(HeaderValue::Tuple(shape)) => Ok((dtype, shape.clone())),
        _ => Err("'shape' is missing or not a tuple of integers".to_owned()),
    }
}
