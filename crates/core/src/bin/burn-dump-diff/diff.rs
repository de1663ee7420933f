//! The comparison of two dump directories, dump by dump and data file by data file.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use burn_profiled_core::dump::compare::{self, CompareOptions, Comparison, failure_message};
use burn_profiled_core::dump::json::PyJson;

use crate::blobs::{BlobDirs, Substituted};
use crate::report::{Findings, Report};
use crate::tensors::{collect_tensor_paths, summarise_tensors};
use crate::{Args, Unusable, entry_type};

/// The kinds of data file a dump holds, by the original's `type` name.
const KINDS: [&str; 2] = ["tensors", "grads"];

pub(crate) fn run(args: &Args) -> Result<Report, Unusable> {
    let reference = numbered_dumps(&args.reference_dir)?;
    let current = numbered_dumps(&args.current_dir)?;
    let options = CompareOptions {
        eps: args.eps,
        errors_per_tensor: args.errors_per_tensor,
        allow_missing_in_current: args.allow_missing_current,
        allow_missing_in_reference: args.allow_missing_reference,
    };
    let mut findings = Findings::default();
    let indices: BTreeSet<usize> = reference.keys().chain(current.keys()).copied().collect();
    for index in indices {
        match (reference.get(&index), current.get(&index)) {
            (Some(reference_dir), Some(current_dir)) => {
                findings.dumps_compared += 1;
                for kind in KINDS {
                    compare_file(
                        kind,
                        index,
                        reference_dir,
                        current_dir,
                        options,
                        &mut findings,
                    )?;
                }
            }
            (Some(_), None) => findings.absent(
                format!("Missing dump {index} in current data but present in reference"),
                args.allow_missing_current,
                "--allow-missing-current",
            ),
            (None, _) => findings.absent(
                format!("Extra dump {index} in current data but not present in reference"),
                args.allow_missing_reference,
                "--allow-missing-reference",
            ),
        }
    }
    Ok(findings.into_report(args.eps))
}

/// The numbered sub-directories (`0/`, `1/`, ...) of a dump directory.
fn numbered_dumps(dir: &Path) -> Result<BTreeMap<usize, PathBuf>, Unusable> {
    let entries = std::fs::read_dir(dir)
        .map_err(|error| Unusable(format!("cannot read directory {}: {error}", dir.display())))?;
    let mut dumps = BTreeMap::new();
    for entry in entries {
        let entry = entry.map_err(|error| {
            Unusable(format!("cannot read directory {}: {error}", dir.display()))
        })?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        // Dumps are named as `str(count)` names them: digits, no leading zeros.
        let is_count = !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_digit())
            && (name == "0" || !name.starts_with('0'));
        if !is_count {
            continue;
        }
        if let Ok(index) = name.parse::<usize>()
            && entry_type(&entry.path())?.is_some_and(|kind| kind.is_dir())
        {
            dumps.insert(index, entry.path());
        }
    }
    if dumps.is_empty() {
        return Err(Unusable(format!(
            "{} holds no numbered dumps (sub-directories 0/, 1/, ...)",
            dir.display()
        )));
    }
    Ok(dumps)
}

fn read_json(path: &Path) -> Result<PyJson, Unusable> {
    let cannot = |reason: String| Unusable(format!("cannot read {}: {reason}", path.display()));
    PyJson::read_file(path).map_err(|error| cannot(error.to_string()))
}

/// Compares `{kind}.json` of dump `index` and the blobs it names.
fn compare_file(
    kind: &'static str,
    index: usize,
    reference_dir: &Path,
    current_dir: &Path,
    options: CompareOptions,
    findings: &mut Findings,
) -> Result<(), Unusable> {
    let file_name = format!("{kind}.json");
    let (reference_file, current_file) =
        (reference_dir.join(&file_name), current_dir.join(&file_name));
    let present = |file: &Path| -> Result<bool, Unusable> {
        match entry_type(file)? {
            None => Ok(false),
            Some(kind) if kind.is_file() => Ok(true),
            Some(_) => Err(Unusable(format!(
                "{} is not a regular file",
                file.display()
            ))),
        }
    };
    match (present(&reference_file)?, present(&current_file)?) {
        (false, false) => return Ok(()),
        (true, false) => {
            findings.absent(
                format!("Missing [{kind}] data for dump {index} in current data but present in reference"),
                options.allow_missing_in_current,
                "--allow-missing-current",
            );
            return Ok(());
        }
        (false, true) => {
            findings.absent(
                format!("Extra [{kind}] data for dump {index} in current data but not present in reference"),
                options.allow_missing_in_reference,
                "--allow-missing-reference",
            );
            return Ok(());
        }
        (true, true) => {}
    }
    let mut reference = read_json(&reference_file)?;
    let mut current = read_json(&current_file)?;
    let blobs = BlobDirs {
        reference: reference_dir,
        current: current_dir,
        kind,
    };
    let mut substituted = Substituted::default();
    blobs.substitute(
        Some(&mut reference),
        Some(&mut current),
        &mut Vec::new(),
        &mut substituted,
    )?;
    let mut tensor_paths = HashSet::new();
    collect_tensor_paths(&current, &mut Vec::new(), &substituted, &mut tensor_paths);
    let is_tensor = |path: &str| tensor_paths.contains(path);
    let walked = compare::compare(&reference, &current, &is_tensor, options);
    let blob_mismatches = substituted.mismatches;
    let comparison = Comparison {
        total: walked.total + blob_mismatches.len(),
        shown: blob_mismatches.into_iter().chain(walked.shown).collect(),
    };
    findings.files_compared += 1;
    if comparison.is_consistent() {
        return Ok(());
    }
    findings.files_failed += 1;
    findings.mismatches += comparison.total;
    findings.blocks.push(failure_message(
        kind,
        index,
        options.errors_per_tensor,
        &comparison,
    ));
    let mut rows = Vec::new();
    summarise_tensors(
        &reference,
        &current,
        &mut Vec::new(),
        &tensor_paths,
        options.eps,
        &mut rows,
    );
    findings.summaries.extend(
        rows.into_iter()
            .map(|(path, stats)| stats.into_summary(index, kind, path)),
    );
    Ok(())
}
