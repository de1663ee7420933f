//! `f64` in `numerics.jsonl`: a JSON number when finite (the shortest text that reads back
//! to the same bits), else the string `"NaN"`, `"Infinity"` or `"-Infinity"` (JSON has no
//! token for them; Python's `float()` reads these strings).

use serde::{Deserialize, Deserializer, Serializer};

pub(super) fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    match *value {
        x if x.is_finite() => serializer.serialize_f64(x),
        x if x.is_nan() => serializer.serialize_str("NaN"),
        x if x > 0.0 => serializer.serialize_str("Infinity"),
        _ => serializer.serialize_str("-Infinity"),
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Float {
    Number(f64),
    Text(String),
}

pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    match Float::deserialize(deserializer)? {
        Float::Number(x) => Ok(x),
        Float::Text(text) => match text.as_str() {
            "NaN" => Ok(f64::NAN),
            "Infinity" => Ok(f64::INFINITY),
            "-Infinity" => Ok(f64::NEG_INFINITY),
            _ => Err(serde::de::Error::custom(format!(
                "`{text}` is not a number (a JSON number, \"NaN\", \"Infinity\" or \"-Infinity\")"
            ))),
        },
    }
}

/// The same for `Option<f64>`: `null` for `None`.
pub(super) mod option {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(in crate::numerics) fn serialize<S: Serializer>(
        value: &Option<f64>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(x) => super::serialize(x, serializer),
            None => serializer.serialize_none(),
        }
    }

    pub(in crate::numerics) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<f64>, D::Error> {
        #[derive(Deserialize)]
        struct Wrapped(#[serde(with = "super")] f64);
        Ok(Option::<Wrapped>::deserialize(deserializer)?.map(|Wrapped(x)| x))
    }
}
