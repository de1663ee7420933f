//! Quantities as people read them, in the op table, the report and the diff.

/// Bytes in binary units: `512 B`, `4.00 KiB`, `3.10 GiB`.
///
/// ```
/// use burn_profiled_core::units::bytes_text;
///
/// assert_eq!(bytes_text(512), "512 B");
/// assert_eq!(bytes_text(3_328_599_654), "3.10 GiB");
/// ```
pub fn bytes_text(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.2} {}", UNITS[unit])
}

/// A rate with an SI prefix, one decimal: `rate_text(2.5e11, "FLOP/s")` is `250.0 GFLOP/s`.
pub fn rate_text(per_s: f64, unit: &str) -> String {
    let (value, prefix) = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(scale, _)| per_s >= *scale)
        .map_or((per_s, ""), |(scale, prefix)| (per_s / scale, prefix));
    format!("{value:.1} {prefix}{unit}")
}

#[cfg(test)]
mod tests {
    use super::{bytes_text, rate_text};

    #[test]
    fn rates_are_shown_with_an_si_prefix_and_one_decimal() {
        assert_eq!(rate_text(2.5e11, "FLOP/s"), "250.0 GFLOP/s");
        assert_eq!(rate_text(4.8e12, "B/s"), "4.8 TB/s");
        assert_eq!(rate_text(12.0, ""), "12.0 ");
    }

    #[test]
    fn bytes_are_shown_in_binary_units_with_two_decimals() {
        assert_eq!(bytes_text(512), "512 B");
        assert_eq!(bytes_text(4 << 10), "4.00 KiB");
        assert_eq!(bytes_text(4_194_304), "4.00 MiB");
        assert_eq!(bytes_text(3_328_599_654), "3.10 GiB");
    }
}
