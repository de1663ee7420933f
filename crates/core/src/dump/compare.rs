//! Comparing a dump with a reference dump: the original `TensorDumper`'s walk and messages.
//!
//! Numbers are compared with an absolute tolerance (`|current - reference| > eps` fails; NaN
//! never fails, as in the original); missing and extra keys, length mismatches and other
//! differences are reported with the original's wording. Inside a tensor only the most
//! significant mismatches are shown.
//!
//! Deliberate deviations from the original, which crashes or misreports there: strings are
//! compared for equality; a list or object facing something else is a plain "Mismatch"; and
//! mismatches hidden by the per-tensor limit still fail the comparison (the original reports
//! "consistent" when the limit is 0) and are counted in a line of their own; and a value
//! whose text is longer than [`SHOWN_CHARS`] (a whole tensor facing one of another length) is
//! cut there, with its length said, where the original prints it whole (hundreds of KB on one
//! line).

use super::json::{PyJson, abs_difference, key_positions};
use crate::python;

/// The most characters of a value a mismatch shows.
pub const SHOWN_CHARS: usize = 200;

/// `value` as the original prints it, cut after [`SHOWN_CHARS`] characters with how long it
/// was (a list's element count).
fn shown(value: &PyJson) -> String {
    let text = python_repr(value);
    if text.chars().count() <= SHOWN_CHARS {
        return text;
    }
    let cut: String = text.chars().take(SHOWN_CHARS).collect();
    let length = match value {
        PyJson::List(items) => format!("a list of {} elements, ", items.len()),
        _ => String::new(),
    };
    format!(
        "{cut}... ({length}{} characters in all)",
        text.chars().count()
    )
}

/// How [`compare`] judges.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompareOptions {
    /// Largest absolute difference that still counts as equal.
    pub eps: f64,
    /// Mismatches shown per tensor, most significant first.
    pub errors_per_tensor: usize,
    /// Keys of the reference missing from the current data are not errors.
    pub allow_missing_in_current: bool,
    /// Keys of the current data missing from the reference are not errors.
    pub allow_missing_in_reference: bool,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            eps: 1e-6,
            errors_per_tensor: 1,
            allow_missing_in_current: false,
            allow_missing_in_reference: false,
        }
    }
}

/// One difference found.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// The original's text for it: two-space indented, several lines for values.
    pub text: String,
    /// How significant it is: `|difference|` for numbers, infinite for structure.
    pub weight: f64,
}

/// The outcome of a comparison.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Comparison {
    /// Mismatches to show, in the order the original shows them.
    pub shown: Vec<Mismatch>,
    /// All mismatches found, shown or not.
    pub total: usize,
}

impl Comparison {
    /// Whether nothing differed.
    pub fn is_consistent(&self) -> bool {
        self.total == 0
    }
}

/// A step of a path: an object key or a list index.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

struct Walk<'a> {
    options: CompareOptions,
    is_tensor: &'a dyn Fn(&str) -> bool,
    total: usize,
}

fn structure_path(steps: &[Step]) -> String {
    if steps.is_empty() {
        return ". (i.e. root)".to_owned();
    }
    let parts: Vec<String> = steps
        .iter()
        .map(|s| match s {
            Step::Key(k) => k.clone(),
            Step::Index(i) => i.to_string(),
        })
        .collect();
    parts.join(".")
}

/// `tensor[1,2]` inside a tensor rooted at `root` steps from the start.
fn display_path(steps: &[Step], tensor_root: Option<usize>) -> String {
    match tensor_root {
        Some(root) if steps.len() > root => {
            let indices: Vec<String> = steps[root..]
                .iter()
                .map(|s| match s {
                    Step::Index(i) => i.to_string(),
                    Step::Key(k) => k.clone(),
                })
                .collect();
            format!("{}[{}]", structure_path(&steps[..root]), indices.join(","))
        }
        _ => structure_path(steps),
    }
}

/// Compares `current` against `reference`. `is_tensor` tells, for a structure path (`a.b.0`),
/// whether the current data holds a tensor there.
pub fn compare(
    reference: &PyJson,
    current: &PyJson,
    is_tensor: &dyn Fn(&str) -> bool,
    options: CompareOptions,
) -> Comparison {
    let mut walk = Walk {
        options,
        is_tensor,
        total: 0,
    };
    let mut shown = Vec::new();
    walk.node(reference, current, &mut Vec::new(), None, &mut shown);
    Comparison {
        shown,
        total: walk.total,
    }
}

impl Walk<'_> {
    fn push(&mut self, out: &mut Vec<Mismatch>, text: String, weight: f64) {
        self.total += 1;
        out.push(Mismatch { text, weight });
    }

    fn node(
        &mut self,
        reference: &PyJson,
        current: &PyJson,
        steps: &mut Vec<Step>,
        tensor_root: Option<usize>,
        out: &mut Vec<Mismatch>,
    ) {
        if tensor_root.is_none() && !steps.is_empty() && (self.is_tensor)(&structure_path(steps)) {
            let mut inside = Vec::new();
            let before = self.total;
            self.node(reference, current, steps, Some(steps.len()), &mut inside);
            inside.sort_by(|a, b| b.weight.total_cmp(&a.weight));
            let hidden = inside.len().saturating_sub(self.options.errors_per_tensor);
            inside.truncate(self.options.errors_per_tensor);
            out.extend(inside);
            if hidden > 0 {
                out.push(Mismatch {
                    text: format!(
                        "  ({hidden} more mismatches not shown in the tensor at path: {})",
                        structure_path(steps)
                    ),
                    weight: 0.0,
                });
            }
            debug_assert!(self.total >= before);
            return;
        }
        let path = || display_path(steps, tensor_root);
        match (reference, current) {
            // Flat number arrays of one shape: element by element, with no tree to walk.
            (PyJson::Numbers(r), PyJson::Numbers(c)) if r.shape == c.shape => {
                for i in 0..r.values.len() {
                    let difference = r.values.abs_difference_at(&c.values, i);
                    if difference > self.options.eps {
                        let depth = steps.len();
                        steps.extend(r.index_of(i).into_iter().map(Step::Index));
                        self.numbers(&r.values.get(i), &c.values.get(i), steps, tensor_root, out);
                        steps.truncate(depth);
                    }
                }
            }
            // Other pairings with a flat array: as the nested lists it stands for.
            (PyJson::Numbers(r), c) => self.node(&r.to_lists(), c, steps, tensor_root, out),
            (r, PyJson::Numbers(c)) => self.node(r, &c.to_lists(), steps, tensor_root, out),
            (PyJson::Object(r), PyJson::Object(c)) => {
                let parent = structure_path(steps);
                let (r_keys, c_keys) = (key_positions(r), key_positions(c));
                for (key, r_value) in r {
                    match c_keys.get(key.as_str()).map(|&at| &c[at]) {
                        None if self.options.allow_missing_in_current => {}
                        None => self.push(out, format!("  Missing key '{key}' at path: {parent} in current data but present in reference"), f64::INFINITY),
                        Some((_, c_value)) => {
                            steps.push(Step::Key(key.clone()));
                            self.node(r_value, c_value, steps, tensor_root, out);
                            steps.pop();
                        }
                    }
                }
                if !self.options.allow_missing_in_reference {
                    for (key, _) in c.iter().filter(|(k, _)| !r_keys.contains_key(k.as_str())) {
                        self.push(out, format!("  Extra key '{key}' at path: {parent} in current data but not present in reference"), f64::INFINITY);
                    }
                }
            }
            (PyJson::List(r), PyJson::List(c)) if r.len() != c.len() => {
                let text = format!(
                    "  Length mismatch at path: {}\n    Dumped data: {}\n    Struct to compare: {}",
                    path(),
                    shown(reference),
                    shown(current)
                );
                self.push(out, text, f64::INFINITY);
            }
            (PyJson::List(r), PyJson::List(c)) => {
                for (i, (r_item, c_item)) in r.iter().zip(c).enumerate() {
                    steps.push(Step::Index(i));
                    self.node(r_item, c_item, steps, tensor_root, out);
                    steps.pop();
                }
            }
            (r, c) if r.as_number().is_some() && c.as_number().is_some() => {
                self.numbers(r, c, steps, tensor_root, out)
            }
            (r, c) if r != c => {
                let text = format!(
                    "  Mismatch at path: {}\n    Dumped data: {}\n    Struct to compare: {}",
                    path(),
                    shown(r),
                    shown(c)
                );
                self.push(out, text, 0.0);
            }
            _ => {}
        }
    }
}

impl Walk<'_> {
    /// Two numbers (ints, floats or bools): a mismatch when they differ by more than `eps`.
    fn numbers(
        &mut self,
        r: &PyJson,
        c: &PyJson,
        steps: &[Step],
        tensor_root: Option<usize>,
        out: &mut Vec<Mismatch>,
    ) {
        let difference = abs_difference(r, c).unwrap_or(0.0);
        if difference > self.options.eps {
            let text = format!(
                "  Numerical mismatch at path: {}\n    Dumped data: {}\n    Struct to compare: {}\n    Difference (current - dumped): {}",
                display_path(steps, tensor_root),
                python_repr(r),
                python_repr(c),
                python_difference(r, c)
            );
            self.push(out, text, difference);
        }
    }
}

/// `current - reference` as Python prints it: an int for ints and bools, else a float.
fn python_difference(reference: &PyJson, current: &PyJson) -> String {
    let as_int = |v: &PyJson| match v {
        PyJson::Bool(b) => Some(i64::from(*b)),
        PyJson::Int(i) => Some(*i),
        _ => None,
    };
    match (as_int(reference), as_int(current)) {
        (Some(r), Some(c)) => c
            .checked_sub(r)
            .map_or_else(|| python::repr(c as f64 - r as f64), |d| d.to_string()),
        _ => {
            python::repr(current.as_number().unwrap_or(0.0) - reference.as_number().unwrap_or(0.0))
        }
    }
}

/// A value as Python's `str()` prints it (`[1.0, 2.0]`, `{'a': None}`, `True`, `nan`).
pub fn python_repr(value: &PyJson) -> String {
    match value {
        PyJson::Null => "None".to_owned(),
        PyJson::Bool(true) => "True".to_owned(),
        PyJson::Bool(false) => "False".to_owned(),
        PyJson::Int(i) => i.to_string(),
        PyJson::Float(f) => python::repr(*f),
        PyJson::Str(s) => python::str_repr(s),
        PyJson::Numbers(numbers) => python_repr(&numbers.to_lists()),
        PyJson::List(items) => format!(
            "[{}]",
            items.iter().map(python_repr).collect::<Vec<_>>().join(", ")
        ),
        PyJson::Object(entries) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(k, v)| format!("{}: {}", python::str_repr(k), python_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The original's failure message for the `kind` (`tensors` or `grads`) data of dump `dump`.
pub fn failure_message(
    kind: &str,
    dump: usize,
    errors_per_tensor: usize,
    comparison: &Comparison,
) -> String {
    let mut message = format!(
        "Comparison of data with previously dumped data failed for [{kind}] data for dump {dump}.\nNOTE: The following errors were found for the dumped [{kind}] data for dump {dump}.\n      Up to {errors_per_tensor} most significant errors are shown per tensor."
    );
    for mismatch in &comparison.shown {
        message.push('\n');
        message.push_str(&mismatch.text);
    }
    message
}

/// Whether a JSON value looks like a dumped tensor: a non-empty, rectangular nested list of
/// numbers (what `tensor.tolist()` writes). Used where the data's own types are not known.
pub fn looks_like_tensor(value: &PyJson) -> bool {
    fn shape(value: &PyJson) -> Option<Vec<usize>> {
        match value {
            PyJson::List(items) if !items.is_empty() => {
                let first = shape(&items[0])?;
                items[1..]
                    .iter()
                    .all(|item| shape(item).as_ref() == Some(&first))
                    .then(|| {
                        let mut dims = vec![items.len()];
                        dims.extend(first);
                        dims
                    })
            }
            PyJson::Numbers(numbers) => Some(numbers.shape.clone()),
            v if v.as_number().is_some() => Some(Vec::new()),
            _ => None,
        }
    }
    match value {
        PyJson::Numbers(numbers) => !numbers.values.is_empty(),
        PyJson::List(_) => shape(value).is_some(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> PyJson {
        PyJson::parse(text).unwrap()
    }

    #[test]
    fn the_documented_message() {
        let reference = parse(
            r#"{"t1": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "other": {"t2": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "t3": [1.0], "num": 1.5, "flag": true}}"#,
        );
        let current = parse(
            r#"{"t1": [[1.0, 2.0, 3.0], [0.0, 5.0, 16.0]], "other": {"t2": [[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]], "t4": [1.0], "num": 1.50001, "flag": false}}"#,
        );
        let is_tensor = |path: &str| ["t1", "other.t2", "other.t4"].contains(&path);
        let options = CompareOptions {
            errors_per_tensor: 2,
            ..CompareOptions::default()
        };
        let comparison = compare(&reference, &current, &is_tensor, options);
        assert_eq!(
            failure_message("tensors", 0, 2, &comparison),
            include_str!("../../tests/golden/compare_message.txt")
        );
        assert_eq!(comparison.total, 7);
    }

    #[test]
    fn nan_inf_strings_lengths_and_shapes() {
        let options = CompareOptions::default();
        let none = |_: &str| false;
        let same = compare(
            &parse("[NaN, Infinity, 1]"),
            &parse("[5.0, Infinity, 1.0]"),
            &none,
            options,
        );
        assert!(
            same.is_consistent(),
            "NaN never mismatches; inf equals inf; 1 equals 1.0"
        );
        let inf = compare(&parse("[1.0]"), &parse("[Infinity]"), &none, options);
        assert_eq!(inf.shown[0].weight, f64::INFINITY);
        let strings = compare(
            &parse(r#"{"s": "abc"}"#),
            &parse(r#"{"s": "abd"}"#),
            &none,
            options,
        );
        assert_eq!(
            strings.shown[0].text,
            "  Mismatch at path: s\n    Dumped data: 'abc'\n    Struct to compare: 'abd'"
        );
        let lengths = compare(&parse("[1, 2]"), &parse("[1]"), &none, options);
        assert_eq!(
            lengths.shown[0].text,
            "  Length mismatch at path: . (i.e. root)\n    Dumped data: [1, 2]\n    Struct to compare: [1]"
        );
        // A tensor facing one of another length is cut, with its length said.
        let long: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
        let long = parse(&format!("[{}]", long.join(", ")));
        let cut = compare(&long, &parse("[1]"), &none, options);
        let dumped = cut.shown[0].text.lines().nth(1).unwrap().to_owned();
        assert!(dumped.len() < 300, "{dumped}");
        assert!(
            dumped.starts_with("    Dumped data: [0, 1, 2, 3,")
                && dumped.ends_with("... (a list of 1000 elements, 4890 characters in all)"),
            "{dumped}"
        );
        let kinds = compare(
            &parse(r#"{"a": [1]}"#),
            &parse(r#"{"a": null}"#),
            &none,
            options,
        );
        assert_eq!(
            kinds.shown[0].text,
            "  Mismatch at path: a\n    Dumped data: [1]\n    Struct to compare: None"
        );
    }

    #[test]
    fn ints_beyond_2_pow_53_are_compared_exactly() {
        let options = CompareOptions::default();
        let none = |_: &str| false;
        // The flat array and the scalar paths: both f64s are 9007199254740992.0.
        for (reference, current) in [
            ("[9007199254740993]", "[9007199254740992]"),
            ("9007199254740993", "9007199254740992"),
            (
                r#"{"n": [9007199254740993, true]}"#,
                r#"{"n": [9007199254740992, true]}"#,
            ),
        ] {
            let comparison = compare(&parse(reference), &parse(current), &none, options);
            assert_eq!(comparison.total, 1, "{reference} vs {current}");
            assert_eq!(comparison.shown[0].weight, 1.0);
            assert!(
                comparison.shown[0]
                    .text
                    .ends_with("Difference (current - dumped): -1"),
                "{}",
                comparison.shown[0].text
            );
        }
        let extremes = compare(
            &parse("[-9223372036854775808]"),
            &parse("[9223372036854775807]"),
            &none,
            options,
        );
        assert_eq!(extremes.shown[0].weight, 18446744073709551615.0);
    }

    #[test]
    fn hidden_tensor_mismatches_still_fail_and_are_counted() {
        let options = CompareOptions {
            errors_per_tensor: 0,
            ..CompareOptions::default()
        };
        let comparison = compare(
            &parse(r#"{"t": [1.0, 2.0]}"#),
            &parse(r#"{"t": [0.0, 0.0]}"#),
            &|p| p == "t",
            options,
        );
        assert!(!comparison.is_consistent());
        assert_eq!(comparison.total, 2);
        assert_eq!(
            comparison.shown[0].text,
            "  (2 more mismatches not shown in the tensor at path: t)"
        );
    }

    #[test]
    fn tensors_are_recognised_by_their_shape() {
        assert!(looks_like_tensor(&parse("[[1, 2], [3, 4]]")));
        assert!(looks_like_tensor(&parse("[true, false]")));
        assert!(!looks_like_tensor(&parse("[[1, 2], [3]]")));
        assert!(!looks_like_tensor(&parse("[1, \"a\"]")));
        assert!(!looks_like_tensor(&parse("[]")));
        assert!(!looks_like_tensor(&parse("3.5")));
        // Rows of ints and rows of floats are read as separate flat rows.
        assert!(looks_like_tensor(&parse("[[1, 2], [3.5, 4.5]]")));
        assert!(looks_like_tensor(&parse("[[[1, 2]], [[3.5, 4.5]]]")));
        assert!(!looks_like_tensor(&parse("[[1, 2], [3.5]]")));
    }
}
