//! Values written the way Python's `repr` writes them, so reports, messages and dumps read the
//! same as the original tools': floats (`0.16802375966852362`, `1e-05`, `1.0`, `inf`, `nan`)
//! and strings (`'a'`, `"it's"`).

/// `repr(value)` in Python: the shortest digits that round-trip, in fixed notation for
/// exponents -4 to 15 and scientific (`1e-05`, `1.5e+16`) otherwise.
pub fn repr(value: f64) -> String {
    let mut out = String::new();
    write_repr(&mut out, value);
    out
}

/// [`repr`], appended to `out` without allocating (dumps write millions of these).
pub fn write_repr(out: &mut String, value: f64) {
    if value.is_nan() {
        out.push_str("nan");
        return;
    }
    if value.is_infinite() {
        out.push_str(if value > 0.0 { "inf" } else { "-inf" });
        return;
    }
    // ryu gives the shortest round-trip digits. Its fixed notation is Python's, except that
    // Python switches to an exponent one decade earlier (`1e-05`, where ryu writes
    // `0.00001`); everything else is laid out again below.
    let mut buffer = ryu::Buffer::new();
    let formatted = buffer.format_finite(value);
    let unsigned = formatted.strip_prefix('-').unwrap_or(formatted);
    if !formatted.contains('e') && !unsigned.starts_with("0.0000") {
        out.push_str(formatted);
        return;
    }
    let text = formatted.as_bytes();
    let (negative, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let (mantissa, exponent) = match text.iter().position(|&b| b == b'e') {
        Some(e) => (&text[..e], parse_exponent(&text[e + 1..])),
        None => (text, 0),
    };
    // Significant digits and the decimal exponent of the first one.
    let mut digits = [0u8; 32];
    let mut count = 0;
    let mut point = None;
    let mut leading_zeros = 0i32;
    for &b in mantissa {
        match b {
            b'.' => point = Some(count as i32 + leading_zeros),
            b'0' if count == 0 => leading_zeros += 1,
            digit => {
                if count < digits.len() {
                    digits[count] = digit;
                    count += 1;
                }
            }
        }
    }
    let integer_digits = point.unwrap_or(count as i32 + leading_zeros);
    while count > 1 && digits[count - 1] == b'0' {
        count -= 1;
    }
    if count == 0 {
        out.push_str(if negative { "-0.0" } else { "0.0" });
        return;
    }
    let decimal_exponent = exponent + integer_digits - leading_zeros - 1;
    let digits = &digits[..count];
    // Laid out in a stack buffer (at most 1 + 17 + 19 + 2 bytes), then appended at once.
    let mut text = [0u8; 48];
    let mut len = 0;
    let mut put = |bytes: &[u8]| {
        text[len..len + bytes.len()].copy_from_slice(bytes);
        len += bytes.len();
    };
    if negative {
        put(b"-");
    }
    if (-4..16).contains(&decimal_exponent) {
        if decimal_exponent < 0 {
            put(b"0.");
            put(&b"0000"[..(-decimal_exponent - 1) as usize]);
            put(digits);
        } else {
            let whole = decimal_exponent as usize + 1;
            if whole >= digits.len() {
                put(digits);
                put(&b"0000000000000000"[..whole - digits.len()]);
                put(b".0");
            } else {
                put(&digits[..whole]);
                put(b".");
                put(&digits[whole..]);
            }
        }
    } else {
        put(&digits[..1]);
        if digits.len() > 1 {
            put(b".");
            put(&digits[1..]);
        }
        put(if decimal_exponent < 0 { b"e-" } else { b"e+" });
        let magnitude = decimal_exponent.unsigned_abs();
        let mut exponent = [b'0'; 3];
        exponent[0] += (magnitude / 100) as u8;
        exponent[1] += (magnitude / 10 % 10) as u8;
        exponent[2] += (magnitude % 10) as u8;
        put(if magnitude >= 100 {
            &exponent[..]
        } else {
            &exponent[1..]
        });
    }
    // Only ASCII digits, signs, points and `e` were put in.
    out.push_str(std::str::from_utf8(&text[..len]).unwrap_or_default());
}

fn parse_exponent(text: &[u8]) -> i32 {
    let (sign, digits) = match text.split_first() {
        Some((b'-', rest)) => (-1, rest),
        Some((b'+', rest)) => (1, rest),
        _ => (1, text),
    };
    sign * digits
        .iter()
        .fold(0i32, |acc, b| acc * 10 + i32::from(b - b'0'))
}

/// `repr(text)` in Python: single quotes unless the text holds one and no double quote.
pub fn str_repr(text: &str) -> String {
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::from(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::{repr, str_repr};

    #[test]
    fn strings_match_python_repr() {
        assert_eq!(str_repr("a"), "'a'");
        assert_eq!(str_repr("it's"), "\"it's\"");
        assert_eq!(str_repr("both ' and \""), "'both \\' and \"'");
        assert_eq!(str_repr("a\\b\n"), "'a\\\\b\\n'");
    }

    #[test]
    fn matches_python_repr() {
        for (value, python) in [
            (0.16802375966852362, "0.16802375966852362"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e-5, "1e-05"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (123456.0, "123456.0"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.2345e16, "1.2345e+16"),
            (1e100, "1e+100"),
            (-2.5e-300, "-2.5e-300"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (3.0058188438415527, "3.0058188438415527"),
            (f64::NAN, "nan"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (100.0, "100.0"),
            (0.001, "0.001"),
            (0.10000000149011612, "0.10000000149011612"),
            (-123.5, "-123.5"),
            (9999999999999998.0, "9999999999999998.0"),
            (1.5e-4, "0.00015"),
            (12345678.9, "12345678.9"),
        ] {
            assert_eq!(repr(value), python, "{value:e}");
        }
        // Against Rust's own shortest digits, over many magnitudes.
        let mut x = 1.234567e-300f64;
        while x < 1e300 {
            let ours = repr(x);
            assert_eq!(ours.parse::<f64>().unwrap(), x, "{ours} round-trips");
            x *= 7.3;
        }
    }
}
