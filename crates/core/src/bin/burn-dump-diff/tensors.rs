//! The tensors of the compared data: where they are, and the error statistics of each pair.

use std::collections::HashSet;

use burn_profiled_core::dump::compare::looks_like_tensor;
use burn_profiled_core::dump::json::{PyJson, abs_difference, key_positions};

use crate::blobs::Substituted;
use crate::report::TensorSummary;
use crate::structure_path;

/// The structure paths of every tensor in `value`, outermost only: the blobs, and nested lists
/// of numbers with no blob inside.
pub(crate) fn collect_tensor_paths(
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
pub(crate) struct TensorStats {
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
                    let abs_error = r.values.abs_difference_at(&c.values, i);
                    self.element(abs_error, r.values.f64_at(i), eps, || {
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
                if let (Some(abs_error), Some(r)) = (abs_difference(r, c), r.as_number()) {
                    self.element(abs_error, r, eps, || index.clone());
                }
            }
        }
    }

    /// One element pair, `abs(current - reference)` and `reference`; `index` gives its index
    /// when it is the worst so far.
    fn element(&mut self, abs_error: f64, r: f64, eps: f64, index: impl FnOnce() -> Vec<usize>) {
        self.elements += 1;
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

    pub(crate) fn into_summary(
        self,
        dump: usize,
        kind: &'static str,
        path: String,
    ) -> TensorSummary {
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
pub(crate) fn summarise_tensors(
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
            let c_keys = key_positions(c);
            for (key, r_value) in r {
                if let Some((_, c_value)) = c_keys.get(key.as_str()).map(|&at| &c[at]) {
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
