//! Blob names in the JSON replaced by the blobs' values, with their dtypes and shapes checked.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use burn_profiled_core::dump::blob::{self, Array};
use burn_profiled_core::dump::compare::Mismatch;
use burn_profiled_core::dump::json::{PyJson, key_positions};

use crate::{Unusable, entry_type, structure_path};

/// The longest file name the file systems a dump lives on take (`NAME_MAX`), in bytes.
const MAX_FILE_NAME_BYTES: usize = 255;

/// What replacing blob names by blob values found.
#[derive(Default)]
pub(crate) struct Substituted {
    /// Dtype and shape mismatches between blobs at the same path.
    pub(crate) mismatches: Vec<Mismatch>,
    /// Structure paths of the current data's blobs: tensors, whatever their values look like.
    pub(crate) current_blobs: HashSet<String>,
    /// Structure paths of the nodes above the current data's blobs: never tensors themselves
    /// (a list of image names is a list of tensors, not one tensor).
    pub(crate) current_blob_ancestors: HashSet<String>,
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
pub(crate) struct BlobDirs<'a> {
    pub(crate) reference: &'a Path,
    pub(crate) current: &'a Path,
    pub(crate) kind: &'static str,
}

impl BlobDirs<'_> {
    /// The blob a string leaf at `steps` names, if it is one that exists in `dir`:
    /// `[{kind}.json]{name}` with a `.bin`, `.npy` or `.png` extension. The name a dump gives
    /// the blob at `steps` (`{dotted path}.{ext}`) must name a regular file. Symlinks are not
    /// followed.
    fn load(
        &self,
        dir: &Path,
        value: Option<&PyJson>,
        steps: &[String],
    ) -> Result<Option<Array>, Unusable> {
        let Some(PyJson::Str(name)) = value else {
            return Ok(None);
        };
        if name.contains(['/', '\\']) || name.starts_with('.') {
            return Ok(None);
        }
        let path = dir.join(format!("[{}.json]{name}", self.kind));
        let extension = name.rsplit_once('.').map_or("", |(_, ext)| ext);
        if !matches!(extension, "bin" | "npy" | "png") {
            return Ok(None);
        }
        // A string that no file can be named (a NUL in it, or longer than a file name may
        // be) names no blob: it is compared as the string it is, not tried as a file.
        let file_name_bytes = path.file_name().map_or(0, |file| file.len());
        if name.contains('\0') || file_name_bytes > MAX_FILE_NAME_BYTES {
            return Ok(None);
        }
        let is_blob_name = !steps.is_empty() && name == &format!("{}.{extension}", steps.join("."));
        match entry_type(&path)? {
            Some(kind) if kind.is_file() => {}
            None if is_blob_name => {
                return Err(Unusable(format!(
                    "{}: the blob file of {} is missing",
                    path.display(),
                    structure_path(steps)
                )));
            }
            Some(_) if is_blob_name => {
                return Err(Unusable(format!(
                    "{} is not a regular file",
                    path.display()
                )));
            }
            _ => return Ok(None),
        }
        if extension != "npy" {
            // The sidecar, which the reader would otherwise open.
            entry_type(&blob::meta_path(&path))?;
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
    pub(crate) fn substitute(
        &self,
        reference: Option<&mut PyJson>,
        current: Option<&mut PyJson>,
        steps: &mut Vec<String>,
        found: &mut Substituted,
    ) -> Result<(), Unusable> {
        let reference_blob = self.load(self.reference, reference.as_deref(), steps)?;
        let current_blob = self.load(self.current, current.as_deref(), steps)?;
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
                        blob.into_py_json()
                    } else {
                        PyJson::Null
                    };
                }
            }
            return Ok(());
        }
        match (reference, current) {
            (Some(PyJson::Object(r)), Some(PyJson::Object(c))) => {
                let c_keys: HashMap<String, usize> = key_positions(c)
                    .into_iter()
                    .map(|(key, at)| (key.to_owned(), at))
                    .collect();
                let mut paired = vec![false; c.len()];
                for (key, r_value) in r.iter_mut() {
                    let c_value = c_keys.get(key).map(|&at| {
                        paired[at] = true;
                        &mut c[at].1
                    });
                    steps.push(key.clone());
                    self.substitute(Some(r_value), c_value, steps, found)?;
                    steps.pop();
                }
                for ((key, c_value), paired) in c.iter_mut().zip(paired) {
                    if !paired {
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
                if let Some(blob) = self.load(dir, Some(leaf), steps)? {
                    *leaf = blob.into_py_json();
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
