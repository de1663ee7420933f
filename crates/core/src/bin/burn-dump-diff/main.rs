//! `burn-dump-diff REFERENCE_DIR CURRENT_DIR`: compares two TensorDumper dump directories (from
//! Burn or from the original Python tool) the way `compare_to_dumped_data` does, blobs
//! included, and summarises the differences per tensor.
//!
//! Every numbered dump (`0/`, `1/`, ...) of either side is compared, `tensors.json` and
//! `grads.json` each. String leaves naming a `.bin`, `.npy` or `.png` blob of the dump
//! (`[tensors.json]{name}`) are replaced by the blob's values (PNGs by their pixels) before the
//! walk; where both sides have a blob, dtypes and shapes must agree, and blobs of different
//! shapes are reported without comparing their values. Other files (`.pkl`) are not read: their
//! names are compared as strings. Tensors are the blobs and, elsewhere, nested lists of
//! numbers.
//!
//! Exit status: 0 when consistent, 1 on any mismatch or missing data, 2 on unusable input or
//! a standard output that cannot be written. The promise: on exit 2 a message on standard
//! error names the file or option at fault and nothing is printed; no input makes the tool
//! panic or hang.

mod blobs;
mod diff;
mod report;
mod tensors;

use std::path::PathBuf;
use std::process::ExitCode;

use burn_profiled_core::dump::blob;
use clap::Parser;

/// Compares two TensorDumper dump directories: every numbered dump, its `tensors.json` and
/// `grads.json`, and the `.bin`, `.npy` and `.png` blobs they name.
#[derive(Debug, Parser)]
#[command(
    name = "burn-dump-diff",
    version,
    after_help = "Exit status: 0 consistent; 1 any mismatch or missing data; 2 unusable \
input (a directory, JSON file or blob that cannot be read, a symlink, an option out of range) \
or a standard output that cannot be written. On exit 2 a message names the file or option at \
fault, and nothing is printed. No input makes it panic or hang; a closed pipe (| head) ends \
the output quietly."
)]
struct Args {
    /// The reference dump directory (holding `0/`, `1/`, ...).
    reference_dir: PathBuf,
    /// The dump directory to check against the reference.
    current_dir: PathBuf,
    /// Largest absolute difference between numbers that still counts as equal.
    #[arg(long, default_value_t = 1e-6, value_parser = parse_eps)]
    eps: f64,
    /// Mismatches shown per tensor, most significant first.
    #[arg(long, default_value_t = 1)]
    errors_per_tensor: usize,
    /// Data (keys, files, dumps) of the reference missing from the current directory is not an
    /// error.
    #[arg(long)]
    allow_missing_current: bool,
    /// Data (keys, files, dumps) of the current directory missing from the reference is not an
    /// error.
    #[arg(long)]
    allow_missing_reference: bool,
}

fn parse_eps(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(eps) if eps >= 0.0 => Ok(eps),
        Ok(_) => Err("eps must be a non-negative number".to_owned()),
        Err(error) => Err(error.to_string()),
    }
}

/// Input that cannot be compared: a missing directory, an unreadable or corrupt file. The
/// message names the file and the reason.
#[derive(Debug)]
struct Unusable(String);

impl From<blob::BlobError> for Unusable {
    fn from(error: blob::BlobError) -> Self {
        Unusable(error.to_string())
    }
}

/// What is at `path`, without following a symlink: `None` when nothing is there. A symlink
/// is unusable input: it may lead out of the dump directory.
fn entry_type(path: &std::path::Path) -> Result<Option<std::fs::FileType>, Unusable> {
    match std::fs::symlink_metadata(path) {
        Ok(metadata) if metadata.file_type().is_symlink() => Err(Unusable(format!(
            "{} is a symlink; not followed",
            path.display()
        ))),
        Ok(metadata) => Ok(Some(metadata.file_type())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(Unusable(format!("cannot read {}: {error}", path.display()))),
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    match diff::run(&args) {
        Ok(report) => {
            match burn_profiled_core::cli_output::print_or_exit("burn-dump-diff", &report.text) {
                Ok(()) => ExitCode::from(if report.consistent { 0 } else { 1 }),
                Err(code) => code,
            }
        }
        Err(Unusable(message)) => {
            eprintln!("burn-dump-diff: {message}");
            ExitCode::from(2)
        }
    }
}

/// A structure path as the comparison prints it: `a.b.0`, the root as `. (i.e. root)`.
fn structure_path(steps: &[String]) -> String {
    if steps.is_empty() {
        ". (i.e. root)".to_owned()
    } else {
        steps.join(".")
    }
}
