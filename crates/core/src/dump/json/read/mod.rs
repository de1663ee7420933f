//! Reading JSON as Python's `json` module reads it, from text or from a file a chunk at a time.

mod error;
mod items;
mod number;
mod parser;
mod string;
mod window;

use std::io;
use std::path::Path;

pub use error::{JsonError, JsonReadError};
use number::LOOKAHEAD;
use parser::Parser;

use super::PyJson;

/// Bytes read from a file at a time: large files are never held in memory whole.
const CHUNK: usize = 1 << 20;

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
    fn a_high_surrogate_not_followed_by_a_low_one_keeps_the_next_escape() {
        // Python: json.loads('"\\ud800\\u0041"') == '\ud800A'; a lone surrogate is U+FFFD here.
        let text = r#"["\ud800\u0041", "\ud83d\ude00", "\ud800\ud800x"]"#;
        assert_eq!(
            PyJson::parse(text).unwrap(),
            PyJson::List(vec![
                PyJson::Str("\u{FFFD}A".into()),
                PyJson::Str("😀".into()),
                PyJson::Str("\u{FFFD}\u{FFFD}x".into()),
            ])
        );
    }

    #[test]
    fn a_key_given_twice_keeps_its_place_and_takes_the_last_value() {
        // Python: json.loads('{"a": 1, "b": 2, "a": 3}') == {"a": 3, "b": 2}.
        assert_eq!(
            PyJson::parse(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap(),
            PyJson::Object(vec![
                ("a".to_owned(), PyJson::Int(3)),
                ("b".to_owned(), PyJson::Int(2))
            ])
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
