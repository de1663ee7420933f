//! `burn-dump-diff`: dump directories built by hand (JSON through `PyJson`, blobs through the
//! blob writers), compared by the binary; exit codes, the exact report and the error messages.

use std::path::{Path, PathBuf};
use std::process::Command;

use burn_profiled_core::dump::blob::{Array, ImageFormat, write_bin, write_npy, write_png};
use burn_profiled_core::dump::json::PyJson;

mod support;

/// A reference and a current dump directory in one temporary directory.
struct Dirs {
    _root: tempfile::TempDir,
    reference: PathBuf,
    current: PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().unwrap();
    let reference = root.path().join("reference");
    let current = root.path().join("current");
    Dirs {
        reference,
        current,
        _root: root,
    }
}

/// Writes `{dir}/{index}/{kind}.json` as the original writes it.
fn write_json(dir: &Path, index: usize, kind: &str, json: &str) {
    let dump = dir.join(index.to_string());
    std::fs::create_dir_all(&dump).unwrap();
    let value = PyJson::parse(json).unwrap();
    std::fs::write(dump.join(format!("{kind}.json")), value.to_python_string()).unwrap();
}

/// The path of blob `name` of `{kind}.json` in dump `index`.
fn blob(dir: &Path, index: usize, kind: &str, name: &str) -> PathBuf {
    dir.join(index.to_string())
        .join(format!("[{kind}.json]{name}"))
}

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

/// The diff stops (exit code 2, nothing on stdout) at the reference's missing blob `file` of
/// the tensor `name`.
fn assert_blob_missing(dirs: &Dirs, name: &str, file: &str) {
    let out = diff(dirs, &[]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        format!(
            "burn-dump-diff: {}: the blob file of {name} is missing\n",
            blob(&dirs.reference, 0, "tensors", file).display()
        )
    );
}

fn diff(dirs: &Dirs, flags: &[&str]) -> Outcome {
    let output = Command::new(env!("CARGO_BIN_EXE_burn-dump-diff"))
        .arg(&dirs.reference)
        .arg(&dirs.current)
        .args(flags)
        .output()
        .unwrap();
    Outcome {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

const X_REFERENCE: &str = r#"{"x": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "y": 1}"#;

#[test]
fn a_mismatching_case_prints_the_originals_messages_a_summary_and_a_verdict() {
    let d = dirs();
    write_json(&d.reference, 0, "tensors", X_REFERENCE);
    write_json(
        &d.current,
        0,
        "tensors",
        r#"{"x": [[1.0, 2.0, 3.0], [4.5, 5.0, 16.0]]}"#,
    );
    write_json(&d.current, 1, "tensors", "{}");
    let out = diff(&d, &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "Comparison of data with previously dumped data failed for [tensors] data for dump 0.
NOTE: The following errors were found for the dumped [tensors] data for dump 0.
      Up to 1 most significant errors are shown per tensor.
  Numerical mismatch at path: x[1,2]
    Dumped data: 6.0
    Struct to compare: 16.0
    Difference (current - dumped): 10.0
  (1 more mismatches not shown in the tensor at path: x)
  Missing key 'y' at path: . (i.e. root) in current data but present in reference

Extra dump 1 in current data but not present in reference

Tensors with mismatches (|current - reference| > 1e-06):
dump  data     tensor  max abs error  max rel error       over eps / total  worst index
0     tensors  x       10.0           1.6666666666666667  2 / 6             [1,2]

Verdict: INCONSISTENT (3 mismatches in 1 of 1 file compared, 1 missing or extra, eps 1e-06).
"
    );
    assert_eq!(out.stderr, "");
    // More errors per tensor, most significant first.
    let out = diff(&d, &["--errors-per-tensor", "2"]);
    assert!(out.stdout.contains(
        "  Numerical mismatch at path: x[1,2]\n    Dumped data: 6.0\n    Struct to compare: 16.0\n    Difference (current - dumped): 10.0\n  Numerical mismatch at path: x[1,0]\n"
    ));
}

/// Rows of ints next to rows of floats (hand-written data, not `tolist()`) are still one tensor,
/// with its worst element indexed from the tensor's root.
#[test]
fn a_tensor_of_int_and_float_rows_is_summarised_as_one_tensor() {
    let d = dirs();
    write_json(&d.reference, 0, "tensors", r#"{"m": [[1, 2], [3.5, 4.5]]}"#);
    write_json(&d.current, 0, "tensors", r#"{"m": [[1, 2], [3.5, 9.5]]}"#);
    let out = diff(&d, &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("  Numerical mismatch at path: m[1,1]\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "0     tensors  m       5.0            1.1111111111111112  1 / 4             [1,1]"
        ),
        "{}",
        out.stdout
    );
}

/// Ints beyond 2^53 are compared exactly, as Python does, in the messages and in the summary.
#[test]
fn ints_beyond_2_pow_53_differ_by_exactly_one() {
    let d = dirs();
    write_json(
        &d.reference,
        0,
        "tensors",
        r#"{"i": [9007199254740993, 1]}"#,
    );
    write_json(&d.current, 0, "tensors", r#"{"i": [9007199254740992, 1]}"#);
    let out = diff(&d, &[]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "  Numerical mismatch at path: i[0]\n    Dumped data: 9007199254740993\n    Struct to compare: 9007199254740992\n    Difference (current - dumped): -1\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "0     tensors  i       1.0            1.1102230246251565e-16  1 / 2             [0]"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn identical_directories_are_consistent() {
    let d = dirs();
    for dir in [&d.reference, &d.current] {
        write_json(dir, 0, "tensors", X_REFERENCE);
        write_json(
            dir,
            1,
            "tensors",
            r#"{"s": "text", "n": null, "b": [true]}"#,
        );
        write_json(dir, 1, "grads", r#"{"g": [0.5]}"#);
    }
    let out = diff(&d, &[]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        out.stdout,
        "Verdict: consistent (3 files in 2 dumps compared, eps 1e-06).\n"
    );
}

#[test]
fn eps_is_an_absolute_tolerance() {
    let d = dirs();
    write_json(&d.reference, 0, "tensors", r#"{"x": [1.0, 2.0]}"#);
    write_json(&d.current, 0, "tensors", r#"{"x": [1.001, 2.0]}"#);
    assert_eq!(diff(&d, &[]).code, 1);
    assert_eq!(diff(&d, &["--eps", "1e-4"]).code, 1);
    assert_eq!(diff(&d, &["--eps", "0.01"]).code, 0);
    assert_eq!(
        diff(&d, &["--eps", "-1"]).code,
        2,
        "a negative eps is refused"
    );
}

#[test]
fn allow_flags_excuse_missing_and_extra_dumps_files_and_keys() {
    let d = dirs();
    write_json(&d.reference, 0, "tensors", r#"{"a": 1, "gone": 2}"#);
    write_json(&d.reference, 1, "tensors", "{}");
    write_json(&d.current, 0, "tensors", r#"{"a": 1}"#);
    let out = diff(&d, &[]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout
            .contains("\n\nMissing dump 1 in current data but present in reference\n\n")
    );
    let out = diff(&d, &["--allow-missing-current"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(out.stdout.contains(
        "Missing dump 1 in current data but present in reference (allowed by --allow-missing-current)"
    ));

    let d = dirs();
    write_json(&d.reference, 0, "tensors", r#"{"a": 1}"#);
    write_json(&d.current, 0, "tensors", r#"{"a": 1, "new": [1, 2]}"#);
    write_json(&d.current, 0, "grads", r#"{"g": null}"#);
    let out = diff(&d, &[]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains(
        "  Extra key 'new' at path: . (i.e. root) in current data but not present in reference"
    ));
    assert!(
        out.stdout
            .contains("Extra [grads] data for dump 0 in current data but not present in reference")
    );
    let out = diff(&d, &["--allow-missing-reference"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    // The flags are one-sided.
    assert_eq!(diff(&d, &["--allow-missing-current"]).code, 1);
}

#[test]
fn bin_blobs_are_compared_by_shape_dtype_and_value() {
    let d = dirs();
    let square = Array::from_values(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let flat = Array::from_values(&[4], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    for (dir, array) in [(&d.reference, &square), (&d.current, &flat)] {
        write_json(dir, 0, "tensors", r#"{"w": "w.bin", "v": "v.bin"}"#);
        write_bin(&blob(dir, 0, "tensors", "w.bin"), array).unwrap();
    }
    let wide = Array::from_values(&[2], &[1.0f64, 2.0]).unwrap();
    let narrow = Array::from_values(&[2], &[1.0f32, 2.5]).unwrap();
    write_bin(&blob(&d.reference, 0, "tensors", "v.bin"), &wide).unwrap();
    write_bin(&blob(&d.current, 0, "tensors", "v.bin"), &narrow).unwrap();
    let out = diff(&d, &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stdout.contains(
            "\n  Shape mismatch at path: w\n    Dumped data: [2, 2]\n    Struct to compare: [4]\n"
        ),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains(
        "\n  Dtype mismatch at path: v\n    Dumped data: torch.float64\n    Struct to compare: torch.float32\n"
    ));
    assert!(out.stdout.contains(
        "  Numerical mismatch at path: v[1]\n    Dumped data: 2.0\n    Struct to compare: 2.5\n"
    ));
    assert!(out.stdout.contains("3 mismatches"), "{}", out.stdout);
}

#[test]
fn a_blob_compares_with_json_numbers_and_with_an_equal_blob() {
    let d = dirs();
    let array = Array::from_values(&[2, 2], &[1.5f32, 2.0, 3.0, 4.0]).unwrap();
    write_json(
        &d.reference,
        0,
        "tensors",
        r#"{"t": [[1.5, 2.0], [3.0, 4.0]], "u": "u.bin"}"#,
    );
    write_bin(&blob(&d.reference, 0, "tensors", "u.bin"), &array).unwrap();
    write_json(&d.current, 0, "tensors", r#"{"t": "t.bin", "u": "u.bin"}"#);
    write_bin(&blob(&d.current, 0, "tensors", "t.bin"), &array).unwrap();
    write_bin(&blob(&d.current, 0, "tensors", "u.bin"), &array).unwrap();
    let out = diff(&d, &[]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

#[test]
fn npy_blobs_are_compared_by_value() {
    let d = dirs();
    for (dir, values) in [(&d.reference, [1i64, 2, 3, 4]), (&d.current, [1, 9, 3, 4])] {
        write_json(dir, 0, "tensors", r#"{"m": {"w": "m.w.npy"}}"#);
        let array = Array::from_values(&[2, 2], &values).unwrap();
        write_npy(&blob(dir, 0, "tensors", "m.w.npy"), &array).unwrap();
    }
    let out = diff(&d, &[]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains(
            "  Numerical mismatch at path: m.w[0,1]\n    Dumped data: 2\n    Struct to compare: 9\n    Difference (current - dumped): 7\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("0     tensors  m.w     7.0"),
        "{}",
        out.stdout
    );
}

#[test]
fn png_blobs_are_compared_by_pixel_value() {
    let d = dirs();
    let write = |dir: &Path, values: [i64; 4]| {
        write_json(dir, 0, "grads", r#"{"img": ["img.0.png"]}"#);
        write_json(dir, 0, "tensors", "{}");
        let image = Array::from_values(&[2, 2], &values).unwrap();
        write_png(
            &blob(dir, 0, "grads", "img.0.png"),
            &image,
            ImageFormat::Intensity,
        )
        .unwrap();
    };
    write(&d.reference, [0, 1, 2, 3]);
    // Different values, same normalised pixels.
    write(&d.current, [10, 11, 12, 13]);
    assert_eq!(diff(&d, &[]).code, 0);
    write(&d.current, [0, 3, 2, 1]);
    let out = diff(&d, &[]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains(
            "failed for [grads] data for dump 0.\nNOTE: The following errors were found for the dumped [grads] data for dump 0.\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("  Numerical mismatch at path: img.0[0,1]\n    Dumped data: 85\n    Struct to compare: 255\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn corrupt_json_is_unusable_input_naming_the_file() {
    let d = dirs();
    write_json(&d.reference, 0, "tensors", X_REFERENCE);
    std::fs::create_dir_all(d.current.join("0")).unwrap();
    let file = d.current.join("0").join("tensors.json");
    std::fs::write(&file, "{\n  \"a\": [1,\n  2 3]\n}").unwrap();
    let out = diff(&d, &[]);
    assert_eq!(out.code, 2);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        format!(
            "burn-dump-diff: cannot read {}: expected `,` or `]` in an array at line 3, column 5\n",
            file.display()
        )
    );
}

#[test]
fn a_corrupt_blob_is_unusable_input_naming_the_file() {
    let d = dirs();
    for dir in [&d.reference, &d.current] {
        write_json(dir, 0, "tensors", r#"{"w": "w.bin"}"#);
        let array = Array::from_values(&[2], &[1.0f32, 2.0]).unwrap();
        write_bin(&blob(dir, 0, "tensors", "w.bin"), &array).unwrap();
    }
    let broken = blob(&d.current, 0, "tensors", "w.bin");
    std::fs::write(&broken, [0u8; 5]).unwrap();
    let out = diff(&d, &[]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.starts_with("burn-dump-diff: ")
            && out.stderr.contains(&broken.display().to_string())
            && out
                .stderr
                .contains("5 bytes, but shape [2] of torch.float32 needs 8"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_empty_blob_declaring_absurd_dimensions_is_unusable_input() {
    let d = dirs();
    for dir in [&d.reference, &d.current] {
        write_json(dir, 0, "tensors", r#"{"e": "e.bin"}"#);
        let path = blob(dir, 0, "tensors", "e.bin");
        std::fs::write(&path, b"").unwrap();
        let meta = r#"{"file_data_shape": [1000000000000, 0], "file_data_dtype": "torch.float32"}"#;
        std::fs::write(dir.join("0").join("[tensors.json]e.bin.meta.json"), meta).unwrap();
    }
    let out = diff(&d, &[]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("too large to compare"),
        "{}",
        out.stderr
    );
    // A sensible empty blob compares.
    for dir in [&d.reference, &d.current] {
        let meta = r#"{"file_data_shape": [3, 0], "file_data_dtype": "torch.float32"}"#;
        std::fs::write(dir.join("0").join("[tensors.json]e.bin.meta.json"), meta).unwrap();
    }
    assert_eq!(diff(&d, &[]).code, 0);
}

/// A name that is the blob file name of its path (`{dotted path}.{ext}`) whose file is
/// missing on both sides is unusable input, never two equal strings.
#[test]
fn blob_files_missing_on_both_sides_are_unusable_input() {
    let d = dirs();
    for dir in [&d.reference, &d.current] {
        write_json(
            dir,
            0,
            "tensors",
            r#"{"g": {"w": "g.w.bin"}, "img": ["img.0.png"], "n": "n.npy", "s": "other.bin"}"#,
        );
    }
    assert_blob_missing(&d, "g.w", "g.w.bin");
    for dir in [&d.reference, &d.current] {
        let array = Array::from_values(&[2], &[1.0f32, 2.0]).unwrap();
        write_bin(&blob(dir, 0, "tensors", "g.w.bin"), &array).unwrap();
        let image = Array::from_values(&[1, 2], &[0u8, 1]).unwrap();
        write_png(
            &blob(dir, 0, "tensors", "img.0.png"),
            &image,
            ImageFormat::Intensity,
        )
        .unwrap();
    }
    assert_blob_missing(&d, "n", "n.npy");
    for dir in [&d.reference, &d.current] {
        let array = Array::from_values(&[1], &[3i64]).unwrap();
        write_npy(&blob(dir, 0, "tensors", "n.npy"), &array).unwrap();
    }
    // "other.bin" is not the blob name of `s`: a string like any other.
    let out = diff(&d, &[]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

/// Blobs, sidecars, data files and numbered dumps are never read through a symlink.
#[test]
fn symlinks_in_dump_directories_are_not_followed() {
    let d = dirs();
    let outside = d.reference.parent().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let array = Array::from_values(&[2], &[1.0f32, 2.0]).unwrap();
    write_bin(&outside.join("w.bin"), &array).unwrap();
    std::fs::write(outside.join("tensors.json"), "{}").unwrap();
    for dir in [&d.reference, &d.current] {
        write_json(dir, 0, "tensors", r#"{"w": "w.bin"}"#);
        write_bin(&blob(dir, 0, "tensors", "w.bin"), &array).unwrap();
    }
    assert_eq!(diff(&d, &[]).code, 0);
    let unusable = |link: &Path| {
        let out = diff(&d, &[]);
        assert_eq!(out.code, 2, "{}", out.stdout);
        assert_eq!(
            out.stderr,
            format!(
                "burn-dump-diff: {} is a symlink; not followed\n",
                link.display()
            )
        );
    };
    let replace_by_link = |target: &Path, link: &Path| {
        std::fs::remove_file(link).unwrap();
        std::os::unix::fs::symlink(target, link).unwrap();
    };
    let bin = blob(&d.current, 0, "tensors", "w.bin");
    let meta = d.current.join("0").join("[tensors.json]w.bin.meta.json");
    replace_by_link(&outside.join("w.bin.meta.json"), &meta);
    unusable(&meta);
    replace_by_link(&outside.join("w.bin"), &bin);
    unusable(&bin);
    let json = d.current.join("0").join("tensors.json");
    replace_by_link(&outside.join("tensors.json"), &json);
    unusable(&json);
    let numbered = d.current.join("1");
    std::os::unix::fs::symlink(&outside, &numbered).unwrap();
    unusable(&numbered);
}

#[test]
fn missing_or_empty_directories_are_unusable_input() {
    let d = dirs();
    write_json(&d.reference, 0, "tensors", "{}");
    let out = diff(&d, &[]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.starts_with(&format!(
            "burn-dump-diff: cannot read directory {}: ",
            d.current.display()
        )),
        "{}",
        out.stderr
    );
    std::fs::create_dir_all(d.current.join("not-a-dump")).unwrap();
    let out = diff(&d, &[]);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr,
        format!(
            "burn-dump-diff: {} holds no numbered dumps (sub-directories 0/, 1/, ...)\n",
            d.current.display()
        )
    );
}

#[test]
fn bad_arguments_exit_with_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_burn-dump-diff"))
        .arg("only-one-dir")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

mod garbage {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Whatever the files hold, the tool answers with 0, 1 or 2, never a panic.
        #[test]
        fn random_files_never_panic_the_tool(
            json in "[\\[\\]{}\",:0-9a-z .eE+-]{0,60}",
            blob_bytes in proptest::collection::vec(any::<u8>(), 0..64),
            meta in "[\\[\\]{}\",:0-9a-z ._-]{0,60}",
            valid_json in any::<bool>(),
        ) {
            // Valid JSON naming the blob reaches the blob reader; random text the JSON reader.
            let json = if valid_json {
                r#"{"a": "a.bin", "b": [1.0, 2.5]}"#.to_owned()
            } else {
                json
            };
            let d = dirs();
            write_json(&d.reference, 0, "tensors", r#"{"a": "a.bin", "b": [1.0, 2.0]}"#);
            write_bin(
                &blob(&d.reference, 0, "tensors", "a.bin"),
                &Array::from_values(&[2], &[1.0f32, 2.0]).unwrap(),
            )
            .unwrap();
            let current = d.current.join("0");
            std::fs::create_dir_all(&current).unwrap();
            std::fs::write(current.join("tensors.json"), &json).unwrap();
            std::fs::write(current.join("[tensors.json]a.bin"), &blob_bytes).unwrap();
            std::fs::write(current.join("[tensors.json]a.bin.meta.json"), &meta).unwrap();
            let out = diff(&d, &[]);
            prop_assert!([0, 1, 2].contains(&out.code), "{} {}", out.code, out.stderr);
            prop_assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        }
    }
}

/// `burn-dump-diff A B | head -1`: a reader that has what it wants closes the pipe, and the
/// tool stops quietly with the status of its verdict, where `print!` panicked.
#[test]
fn a_closed_pipe_ends_the_report_quietly() {
    let d = dirs();
    for dir in [&d.reference, &d.current] {
        write_json(dir, 0, "tensors", X_REFERENCE);
    }
    let output = support::output_into_a_closed_pipe(
        Command::new(env!("CARGO_BIN_EXE_burn-dump-diff"))
            .arg(&d.reference)
            .arg(&d.current),
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "",
        "nothing on stderr, no panic"
    );
    assert_eq!(output.status.code(), Some(0), "the verdict's status");
}

/// `>/dev/full`: the report was lost and the exit status still said consistent. A failure to
/// write standard output other than a closed pipe is exit 2.
#[cfg(target_os = "linux")]
#[test]
fn a_full_standard_output_exits_2() {
    let d = dirs();
    for dir in [&d.reference, &d.current] {
        write_json(dir, 0, "tensors", X_REFERENCE);
    }
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_burn-dump-diff"))
        .arg(&d.reference)
        .arg(&d.current)
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "burn-dump-diff: cannot write to standard output: No space left on device (os error 28)\n"
    );
}

/// A string leaf that no file can be named (300 characters ending in `.bin`, or a NUL in it)
/// was tried as a file: `File name too long`, exit 2. It names no blob of the dump, so it is
/// compared as the string it is.
#[test]
fn a_string_that_names_no_blob_is_compared_as_a_string() {
    let long = format!("{}.bin", "x".repeat(296));
    for name in [long.as_str(), "a\\u0000b.bin"] {
        let d = dirs();
        let json = |value: &str| format!(r#"{{"note": "{value}"}}"#);
        write_json(&d.reference, 0, "tensors", &json(name));
        write_json(&d.current, 0, "tensors", &json(name));
        let out = diff(&d, &[]);
        assert_eq!(out.code, 0, "equal strings: {}", out.stderr);
        write_json(&d.current, 0, "tensors", &json("other.bin"));
        let out = diff(&d, &[]);
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert!(
            out.stdout.contains("  Mismatch at path: note\n"),
            "{}",
            out.stdout
        );
    }
}

/// Key lookups were a search per key (150k keys a side: minutes). They are indexed now; this
/// holds the result on keys enough to show a quadratic path, in reverse order on one side
/// and one key changed (the time is the benchmark's, `benches/tools.rs`).
#[test]
fn tens_of_thousands_of_keys_are_paired_by_name() {
    let d = dirs();
    let keys = 20_000;
    let object = |reverse: bool, changed: Option<usize>| {
        let mut entries: Vec<String> = (0..keys)
            .map(|i| {
                let value = if Some(i) == changed { 1.5 } else { 0.5 };
                format!(r#""key_{i}": {{"v": {value}}}"#)
            })
            .collect();
        if reverse {
            entries.reverse();
        }
        format!("{{{}}}", entries.join(", "))
    };
    write_json(&d.reference, 0, "tensors", &object(false, None));
    write_json(&d.current, 0, "tensors", &object(true, None));
    assert_eq!(diff(&d, &[]).code, 0, "the same keys in another order");
    write_json(&d.current, 0, "tensors", &object(true, Some(12_345)));
    let out = diff(&d, &[]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout
            .contains("  Numerical mismatch at path: key_12345.v\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("(1 mismatch in 1 of 1 file compared"),
        "{}",
        out.stdout
    );
}

/// `--help` states the exit codes and the promise behind exit 2.
#[test]
fn the_help_states_the_exit_codes_and_the_promise() {
    let output = Command::new(env!("CARGO_BIN_EXE_burn-dump-diff"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&output.stdout);
    for promise in [
        "Exit status: 0 consistent",
        "2 unusable",
        "names the file",
        "panic or hang",
    ] {
        assert!(help.contains(promise), "says {promise:?}: {help}");
    }
}
