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
//! Exit status: 0 when consistent, 1 on any mismatch or missing data, 2 on unusable input.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use burn_profiled::dump::blob::{self, Array};
use burn_profiled::dump::compare::{
    self, CompareOptions, Comparison, Mismatch, failure_message, looks_like_tensor, python_repr,
};
use burn_profiled::dump::json::PyJson;
use clap::Parser;

/// Compares two TensorDumper dump directories: every numbered dump, its `tensors.json` and
/// `grads.json`, and the `.bin`, `.npy` and `.png` blobs they name.
#[derive(Debug, Parser)]
#[command(
    name = "burn-dump-diff",
    version,
    after_help = "Exit status: 0 consistent, 1 any mismatch or missing data, 2 unusable input."
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

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(report) => {
            print!("{}", report.text);
            ExitCode::from(if report.consistent { 0 } else { 1 })
        }
        Err(Unusable(message)) => {
            eprintln!("burn-dump-diff: {message}");
            ExitCode::from(2)
        }
    }
}

/// What the tool prints, and whether the directories agree.
struct Report {
    text: String,
    consistent: bool,
}

/// The kinds of data file a dump holds, by the original's `type` name.
const KINDS: [&str; 2] = ["tensors", "grads"];

/// One row of the per-tensor summary.
struct TensorSummary {
    dump: usize,
    kind: &'static str,
    path: String,
    max_abs_error: f64,
    max_rel_error: f64,
    over_eps: usize,
    elements: usize,
    worst_index: Vec<usize>,
}

/// What the whole comparison found.
#[derive(Default)]
struct Findings {
    /// Report paragraphs, in order.
    blocks: Vec<String>,
    summaries: Vec<TensorSummary>,
    dumps_compared: usize,
    files_compared: usize,
    files_failed: usize,
    mismatches: usize,
    /// Missing or extra dumps and files that the allow flags do not excuse.
    missing: usize,
}

fn run(args: &Args) -> Result<Report, Unusable> {
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

impl Findings {
    /// Records a dump or file present on one side only.
    fn absent(&mut self, line: String, allowed: bool, flag: &str) {
        if allowed {
            self.blocks.push(format!("{line} (allowed by {flag})"));
        } else {
            self.missing += 1;
            self.blocks.push(line);
        }
    }

    fn into_report(mut self, eps: f64) -> Report {
        if !self.summaries.is_empty() {
            self.blocks.push(summary_table(&self.summaries, eps));
        }
        let consistent = self.mismatches == 0 && self.missing == 0;
        let eps = python_repr(&PyJson::Float(eps));
        let verdict = if consistent {
            format!(
                "Verdict: consistent ({} in {} compared, eps {eps}).",
                count(self.files_compared, "file", "files"),
                count(self.dumps_compared, "dump", "dumps"),
            )
        } else {
            format!(
                "Verdict: INCONSISTENT ({} in {} of {} compared, {} missing or extra, eps {eps}).",
                count(self.mismatches, "mismatch", "mismatches"),
                self.files_failed,
                count(self.files_compared, "file", "files"),
                self.missing,
            )
        };
        self.blocks.push(verdict);
        Report {
            text: self.blocks.join("\n\n") + "\n",
            consistent,
        }
    }
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
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
            && entry.path().is_dir()
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
    match (reference_file.exists(), current_file.exists()) {
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

/// A structure path as the comparison prints it: `a.b.0`, the root as `. (i.e. root)`.
fn structure_path(steps: &[String]) -> String {
    if steps.is_empty() {
        ". (i.e. root)".to_owned()
    } else {
        steps.join(".")
    }
}

/// What replacing blob names by blob values found.
#[derive(Default)]
struct Substituted {
    /// Dtype and shape mismatches between blobs at the same path.
    mismatches: Vec<Mismatch>,
    /// Structure paths of the current data's blobs: tensors, whatever their values look like.
    current_blobs: HashSet<String>,
    /// Structure paths of the nodes above the current data's blobs: never tensors themselves
    /// (a list of image names is a list of tensors, not one tensor).
    current_blob_ancestors: HashSet<String>,
}

impl Substituted {
    fn record_current_blob(&mut self, steps: &[String]) {
        self.current_blobs.insert(structure_path(steps));
        for end in 1..steps.len() {
            self.current_blob_ancestors
                .insert(structure_path(&steps[..end]));
        }
    }
}

/// The two dump directories whose blobs a `{kind}.json` pair names.
struct BlobDirs<'a> {
    reference: &'a Path,
    current: &'a Path,
    kind: &'static str,
}

impl BlobDirs<'_> {
    /// The blob a string leaf names, if it is one that exists in `dir`:
    /// `[{kind}.json]{name}` with a `.bin`, `.npy` or `.png` extension.
    fn load(&self, dir: &Path, value: Option<&PyJson>) -> Result<Option<Array>, Unusable> {
        let Some(PyJson::Str(name)) = value else {
            return Ok(None);
        };
        if name.contains(['/', '\\']) || name.starts_with('.') {
            return Ok(None);
        }
        let path = dir.join(format!("[{}.json]{name}", self.kind));
        let extension = name.rsplit_once('.').map_or("", |(_, ext)| ext);
        if !matches!(extension, "bin" | "npy" | "png") || !path.is_file() {
            return Ok(None);
        }
        let array = match extension {
            "bin" => blob::read_bin(&path)?,
            "npy" => blob::read_npy(&path)?,
            _ => blob::read_png(&path)?.0,
        };
        // Non-empty arrays need fewer lists than rank * elements; an empty one can declare
        // any number (`(10**12, 0)`), which would not fit in memory as JSON.
        let list_budget = array
            .len()
            .saturating_mul(array.shape.len())
            .saturating_add(1 << 20);
        if array
            .nested_list_count()
            .is_none_or(|lists| lists > list_budget)
        {
            return Err(Unusable(format!(
                "{}: the empty array of shape {:?} is too large to compare",
                path.display(),
                array.shape
            )));
        }
        Ok(Some(array))
    }

    /// Replaces, in both trees walked side by side, every string leaf naming a blob by the
    /// blob's values. Where both sides hold a blob, their dtypes and shapes must agree; a shape
    /// mismatch is reported and the values are left out of the comparison.
    fn substitute(
        &self,
        reference: Option<&mut PyJson>,
        current: Option<&mut PyJson>,
        steps: &mut Vec<String>,
        found: &mut Substituted,
    ) -> Result<(), Unusable> {
        let reference_blob = self.load(self.reference, reference.as_deref())?;
        let current_blob = self.load(self.current, current.as_deref())?;
        if reference_blob.is_some() || current_blob.is_some() {
            let path = structure_path(steps);
            let mut replace_with_values = true;
            if let (Some(r), Some(c)) = (&reference_blob, &current_blob) {
                if r.dtype != c.dtype {
                    found.mismatches.push(blob_mismatch(
                        "Dtype",
                        &path,
                        r.dtype.torch_name(),
                        c.dtype.torch_name(),
                    ));
                }
                if r.shape != c.shape {
                    found.mismatches.push(blob_mismatch(
                        "Shape",
                        &path,
                        &format!("{:?}", r.shape),
                        &format!("{:?}", c.shape),
                    ));
                    replace_with_values = false;
                }
            }
            if current_blob.is_some() {
                found.record_current_blob(steps);
            }
            for (side, blob) in [(reference, reference_blob), (current, current_blob)] {
                if let (Some(node), Some(blob)) = (side, blob) {
                    *node = if replace_with_values {
                        blob.to_py_json()
                    } else {
                        PyJson::Null
                    };
                }
            }
            return Ok(());
        }
        match (reference, current) {
            (Some(PyJson::Object(r)), Some(PyJson::Object(c))) => {
                for (key, r_value) in r.iter_mut() {
                    let c_value = c.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v);
                    steps.push(key.clone());
                    self.substitute(Some(r_value), c_value, steps, found)?;
                    steps.pop();
                }
                for (key, c_value) in c.iter_mut() {
                    if !r.iter().any(|(k, _)| k == key) {
                        steps.push(key.clone());
                        self.substitute(None, Some(c_value), steps, found)?;
                        steps.pop();
                    }
                }
            }
            (Some(PyJson::List(r)), Some(PyJson::List(c))) => {
                let length = r.len().max(c.len());
                let (mut r_items, mut c_items) = (r.iter_mut(), c.iter_mut());
                for i in 0..length {
                    steps.push(i.to_string());
                    self.substitute(r_items.next(), c_items.next(), steps, found)?;
                    steps.pop();
                }
            }
            (reference, current) => {
                // Different kinds of node: substitute within each side on its own.
                self.substitute_one_side(true, reference, steps, found)?;
                self.substitute_one_side(false, current, steps, found)?;
            }
        }
        Ok(())
    }

    /// Replaces the blob names under `node`, one side only (the other side has nothing to
    /// pair with).
    fn substitute_one_side(
        &self,
        is_reference: bool,
        node: Option<&mut PyJson>,
        steps: &mut Vec<String>,
        found: &mut Substituted,
    ) -> Result<(), Unusable> {
        let children: Vec<(String, &mut PyJson)> = match node {
            Some(PyJson::Object(entries)) => {
                entries.iter_mut().map(|(k, v)| (k.clone(), v)).collect()
            }
            Some(PyJson::List(items)) => items
                .iter_mut()
                .enumerate()
                .map(|(i, v)| (i.to_string(), v))
                .collect(),
            Some(leaf) => {
                let dir = if is_reference {
                    self.reference
                } else {
                    self.current
                };
                if let Some(blob) = self.load(dir, Some(leaf))? {
                    *leaf = blob.to_py_json();
                    if !is_reference {
                        found.record_current_blob(steps);
                    }
                }
                return Ok(());
            }
            None => return Ok(()),
        };
        for (step, child) in children {
            steps.push(step);
            self.substitute_one_side(is_reference, Some(child), steps, found)?;
            steps.pop();
        }
        Ok(())
    }
}

fn blob_mismatch(what: &str, path: &str, reference: &str, current: &str) -> Mismatch {
    Mismatch {
        text: format!(
            "  {what} mismatch at path: {path}\n    Dumped data: {reference}\n    Struct to compare: {current}"
        ),
        weight: f64::INFINITY,
    }
}

/// The structure paths of every tensor in `value`, outermost only: the blobs, and nested lists
/// of numbers with no blob inside.
fn collect_tensor_paths(
    value: &PyJson,
    steps: &mut Vec<String>,
    blobs: &Substituted,
    out: &mut HashSet<String>,
) {
    if !steps.is_empty() {
        let path = structure_path(steps);
        if blobs.current_blobs.contains(&path) {
            // A 0-d blob is a bare number, shown without brackets.
            if matches!(value, PyJson::List(_) | PyJson::Numbers(_)) {
                out.insert(path);
            }
            return;
        }
        if !blobs.current_blob_ancestors.contains(&path) && looks_like_tensor(value) {
            out.insert(path);
            return;
        }
    }
    let mut visit = |step: String, child: &PyJson| {
        steps.push(step);
        collect_tensor_paths(child, steps, blobs, out);
        steps.pop();
    };
    match value {
        PyJson::Object(entries) => entries.iter().for_each(|(k, v)| visit(k.clone(), v)),
        PyJson::List(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, v)| visit(i.to_string(), v)),
        _ => {}
    }
}

/// Error statistics of one tensor.
#[derive(Default)]
struct TensorStats {
    max_abs_error: f64,
    max_rel_error: f64,
    over_eps: usize,
    elements: usize,
    worst: Option<(f64, Vec<usize>)>,
}

impl TensorStats {
    /// Walks a tensor pair element by element (where their shapes agree).
    fn add(&mut self, reference: &PyJson, current: &PyJson, index: &mut Vec<usize>, eps: f64) {
        match (reference, current) {
            (PyJson::Numbers(r), PyJson::Numbers(c)) if r.shape == c.shape => {
                for i in 0..r.values.len() {
                    self.element(r.values.f64_at(i), c.values.f64_at(i), eps, || {
                        [index.as_slice(), &r.index_of(i)].concat()
                    });
                }
            }
            (PyJson::Numbers(r), c) => self.add(&r.to_lists(), c, index, eps),
            (r, PyJson::Numbers(c)) => self.add(r, &c.to_lists(), index, eps),
            (PyJson::List(r), PyJson::List(c)) if r.len() == c.len() => {
                for (i, (r_item, c_item)) in r.iter().zip(c).enumerate() {
                    index.push(i);
                    self.add(r_item, c_item, index, eps);
                    index.pop();
                }
            }
            (r, c) => {
                if let (Some(r), Some(c)) = (r.as_number(), c.as_number()) {
                    self.element(r, c, eps, || index.clone());
                }
            }
        }
    }

    /// One element pair; `index` gives its index when it is the worst so far.
    fn element(&mut self, r: f64, c: f64, eps: f64, index: impl FnOnce() -> Vec<usize>) {
        self.elements += 1;
        let abs_error = (c - r).abs();
        // NaN never counts, as in the comparison.
        self.max_abs_error = self.max_abs_error.max(abs_error);
        self.max_rel_error = self
            .max_rel_error
            .max(abs_error / r.abs().max(f64::MIN_POSITIVE));
        if abs_error > eps {
            self.over_eps += 1;
            if self
                .worst
                .as_ref()
                .is_none_or(|(worst, _)| abs_error > *worst)
            {
                self.worst = Some((abs_error, index()));
            }
        }
    }

    fn into_summary(self, dump: usize, kind: &'static str, path: String) -> TensorSummary {
        TensorSummary {
            dump,
            kind,
            path,
            max_abs_error: self.max_abs_error,
            max_rel_error: self.max_rel_error,
            over_eps: self.over_eps,
            elements: self.elements,
            worst_index: self.worst.map(|(_, index)| index).unwrap_or_default(),
        }
    }
}

/// Statistics of every tensor pair (at the current data's tensor paths) with elements beyond
/// `eps`.
fn summarise_tensors(
    reference: &PyJson,
    current: &PyJson,
    steps: &mut Vec<String>,
    tensor_paths: &HashSet<String>,
    eps: f64,
    out: &mut Vec<(String, TensorStats)>,
) {
    let path = structure_path(steps);
    if !steps.is_empty() && tensor_paths.contains(&path) {
        let mut stats = TensorStats::default();
        stats.add(reference, current, &mut Vec::new(), eps);
        if stats.over_eps > 0 {
            out.push((path, stats));
        }
        return;
    }
    match (reference, current) {
        (PyJson::Object(r), PyJson::Object(c)) => {
            for (key, r_value) in r {
                if let Some((_, c_value)) = c.iter().find(|(k, _)| k == key) {
                    steps.push(key.clone());
                    summarise_tensors(r_value, c_value, steps, tensor_paths, eps, out);
                    steps.pop();
                }
            }
        }
        (PyJson::List(r), PyJson::List(c)) if r.len() == c.len() => {
            for (i, (r_item, c_item)) in r.iter().zip(c).enumerate() {
                steps.push(i.to_string());
                summarise_tensors(r_item, c_item, steps, tensor_paths, eps, out);
                steps.pop();
            }
        }
        _ => {}
    }
}

/// The per-tensor summary, as an aligned table.
fn summary_table(summaries: &[TensorSummary], eps: f64) -> String {
    let float = |value: f64| python_repr(&PyJson::Float(value));
    let header = [
        "dump",
        "data",
        "tensor",
        "max abs error",
        "max rel error",
        "over eps / total",
        "worst index",
    ]
    .map(str::to_owned);
    let mut rows = vec![header.to_vec()];
    for s in summaries {
        let worst = s
            .worst_index
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>();
        rows.push(vec![
            s.dump.to_string(),
            s.kind.to_owned(),
            s.path.clone(),
            float(s.max_abs_error),
            float(s.max_rel_error),
            format!("{} / {}", s.over_eps, s.elements),
            format!("[{}]", worst.join(",")),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|column| {
            rows.iter()
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut table = format!(
        "Tensors with mismatches (|current - reference| > {}):",
        float(eps)
    );
    for row in &rows {
        table.push('\n');
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        table.push_str(cells.join("  ").trim_end());
    }
    table
}
