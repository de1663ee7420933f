//! Dump types and the options of an add call and of a comparison.

use std::collections::HashMap;

use super::compare::CompareOptions;

/// How a tensor leaf is written (the original's `TensorDumper.Type`). Only tensors have a dump
/// type; every other leaf goes straight into the main JSON file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DumpType {
    /// Nested lists of numbers in the main JSON file.
    Json,
    /// Raw little-endian C-order bytes in `<path>.bin`, plus `<path>.bin.meta.json`.
    Binary,
    /// A PNG of an `(H, W, 3)` image whose channels are R, G, B; min-max scaled.
    ImageRgb,
    /// A PNG of an `(H, W, 3)` image whose channels are B, G, R; min-max scaled.
    ImageBgr,
    /// A greyscale PNG of an `(H, W)` image; min-max scaled.
    ImageI,
    /// A `.npy` file (readable by `numpy.load`), in place of the original's PICKLE (`.pkl`).
    Npy,
}

impl DumpType {
    /// Whether this is one of the image types.
    pub fn is_image(self) -> bool {
        matches!(
            self,
            DumpType::ImageRgb | DumpType::ImageBgr | DumpType::ImageI
        )
    }

    /// The file extension, `None` for JSON.
    pub fn extension(self) -> Option<&'static str> {
        match self {
            DumpType::Json => None,
            DumpType::Binary => Some("bin"),
            DumpType::ImageRgb | DumpType::ImageBgr | DumpType::ImageI => Some("png"),
            DumpType::Npy => Some("npy"),
        }
    }

    /// The original's name (`Type.IMAGE_RGB`), as its messages print it.
    pub fn python_name(self) -> &'static str {
        match self {
            DumpType::Json => "Type.JSON",
            DumpType::Binary => "Type.BINARY",
            DumpType::ImageRgb => "Type.IMAGE_RGB",
            DumpType::ImageBgr => "Type.IMAGE_BGR",
            DumpType::ImageI => "Type.IMAGE_I",
            DumpType::Npy => "Type.PICKLE",
        }
    }

    /// The rank of one image (3 for colour, 2 for intensity); `None` for non-images.
    pub(crate) fn image_rank(self) -> Option<usize> {
        match self {
            DumpType::ImageRgb | DumpType::ImageBgr => Some(3),
            DumpType::ImageI => Some(2),
            _ => None,
        }
    }
}

/// The options of [`TensorDumper::add_tensor_data`](super::TensorDumper::add_tensor_data) and
/// [`add_grad_data`](super::TensorDumper::add_grad_data): the original's `dump_type`,
/// `dump_type_override`, `permute_axes`, `permute_axes_override` and `exclude`.
///
/// ```
/// use burn_profiled_core::dump::{AddOptions, DumpType};
///
/// let options = AddOptions::new(DumpType::Binary)
///     .type_override("img", DumpType::ImageRgb)
///     .permute_override("bin", Some(vec![1, 0]))
///     .exclude(["skip"]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct AddOptions {
    pub(crate) dump_type: DumpType,
    pub(crate) type_overrides: HashMap<String, DumpType>,
    pub(crate) permute_axes: Option<Vec<usize>>,
    pub(crate) permute_overrides: HashMap<String, Option<Vec<usize>>>,
    pub(crate) exclude: Vec<String>,
}

impl AddOptions {
    /// Tensors are written as `dump_type`, unpermuted, nothing overridden or excluded.
    pub fn new(dump_type: DumpType) -> AddOptions {
        AddOptions {
            dump_type,
            type_overrides: HashMap::new(),
            permute_axes: None,
            permute_overrides: HashMap::new(),
            exclude: Vec::new(),
        }
    }

    /// Tensors under a map key `key` (at any depth; the innermost matching key wins) are
    /// written as `dump_type`.
    pub fn type_override(mut self, key: impl Into<String>, dump_type: DumpType) -> AddOptions {
        self.type_overrides.insert(key.into(), dump_type);
        self
    }

    /// Tensors are permuted by `axes` before writing (and before comparing).
    pub fn permute_axes(mut self, axes: impl Into<Vec<usize>>) -> AddOptions {
        self.permute_axes = Some(axes.into());
        self
    }

    /// Tensors under a map key `key` are permuted by `axes` (`None`: not permuted).
    pub fn permute_override(
        mut self,
        key: impl Into<String>,
        axes: Option<Vec<usize>>,
    ) -> AddOptions {
        self.permute_overrides.insert(key.into(), axes);
        self
    }

    /// Map entries with these keys are dropped, at any depth of nested maps (not inside
    /// lists), before converters run.
    pub fn exclude<S: Into<String>>(mut self, keys: impl IntoIterator<Item = S>) -> AddOptions {
        self.exclude.extend(keys.into_iter().map(Into::into));
        self
    }
}

/// The parameters of a comparison with a previously written dump (the original's
/// `compare_to_dumped_data` arguments, `compare_if_empty` aside).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompareSettings {
    /// Largest absolute difference that still counts as equal (default `1e-6`).
    pub eps_numerical_data: f64,
    /// Mismatches shown per tensor, most significant first (default 1).
    pub num_errors_per_tensor_to_show: usize,
    /// Reference keys missing from the current data are not errors.
    pub allow_missing_data_in_current: bool,
    /// Current keys missing from the reference are not errors.
    pub allow_missing_data_in_previous: bool,
    /// On a mismatch, print the message to stderr as a warning and return `Ok(false)`
    /// instead of an error.
    pub as_warning: bool,
}

impl Default for CompareSettings {
    fn default() -> Self {
        CompareSettings {
            eps_numerical_data: 1e-6,
            num_errors_per_tensor_to_show: 1,
            allow_missing_data_in_current: false,
            allow_missing_data_in_previous: false,
            as_warning: false,
        }
    }
}

impl CompareSettings {
    pub(crate) fn compare_options(&self) -> CompareOptions {
        CompareOptions {
            eps: self.eps_numerical_data,
            errors_per_tensor: self.num_errors_per_tensor_to_show,
            allow_missing_in_current: self.allow_missing_data_in_current,
            allow_missing_in_reference: self.allow_missing_data_in_previous,
        }
    }
}
