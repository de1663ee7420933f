//! What can go wrong when adding, dumping and comparing.

use std::path::PathBuf;

/// An error of the tensor dumper. Messages keep the original `TensorDumper`'s wording where it
/// has one.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    /// Inserting at a path whose node is not a map.
    #[error(
        "Path `{path}` points to an existing element which is not a dictionary. Cannot insert there."
    )]
    NotADictionary {
        /// The dotted path (range prefix included).
        path: String,
    },
    /// A map key of the data already exists at the path.
    #[error(
        "Path `{path}` has an existing element with key `{key}`. Cannot insert element from `value` with the same key."
    )]
    DuplicateKey {
        /// The dotted path.
        path: String,
        /// The key present in both.
        key: String,
    },
    /// A tensor, list or string inserted where a non-empty map is.
    #[error(
        "Path part `{path}` points to an existing non-empty dictionary. Cannot insert tensors or sequences as this would overwrite the existing elements."
    )]
    NonEmptyDictionary {
        /// The dotted path.
        path: String,
    },
    /// A list walked with a part that is not a number.
    #[error("Path part {part} is not a number, but parent is a sequence")]
    NotANumber {
        /// The offending part.
        part: String,
    },
    /// A list walked with an index out of range.
    #[error("Path part {part} is out of bounds (parent is a sequence)")]
    OutOfBounds {
        /// The offending part.
        part: String,
    },
    /// Walking through a tensor (or another leaf).
    #[error("'{kind}' object is not subscriptable")]
    NotSubscriptable {
        /// What was in the way (`_TensorWithFormat` for a tensor, as in the original).
        kind: String,
    },
    /// Data of a type that cannot be inserted at a path on its own (a bare number, bool, null).
    #[error("Unsupported data type: {0}")]
    UnsupportedDataType(String),
    /// A key, path part or range name that could place a file outside the dump directory.
    #[error(
        "Invalid name {name:?} in {context}: names become parts of file names and must not be `..` or `.`, or contain `/`, `\\` or NUL"
    )]
    InvalidName {
        /// The name.
        name: String,
        /// Where it was found (`path`, `range name`, `key at path ...`).
        context: String,
    },
    /// A map with the same key twice.
    #[error("The map at path `{path}` has the key `{key}` more than once")]
    DuplicateMapKey {
        /// The dotted path of the map.
        path: String,
        /// The repeated key.
        key: String,
    },
    /// Two tensors whose blob files would have the same name (a map key with a dot in it and
    /// nested maps, or names that differ only in case), so one would overwrite the other.
    #[error(
        "Two tensors would be written to the same blob file `{file}` (file names are compared ignoring case): {first} and {second}"
    )]
    DuplicateBlobFile {
        /// The file name of the second tensor.
        file: String,
        /// Where the first tensor is (`tensors["p"]["a.b"]`).
        first: String,
        /// Where the second tensor is.
        second: String,
    },
    /// A user value with no converter registered for its type.
    #[error("No custom converter is registered for the type `{0}`")]
    NoConverter(String),
    /// Converters kept producing convertible values.
    #[error(
        "Custom converters did not reach a fixed point after {0} passes (a converter probably returns its own type)"
    )]
    ConverterLoop(usize),
    /// Reading a tensor's values failed.
    #[error("Could not read the data of a tensor at `{path}`: {message}")]
    TensorRead {
        /// The dotted path.
        path: String,
        /// The backend's error.
        message: String,
    },
    /// Tensor data whose bytes do not match its shape and dtype (a `TensorData` built by hand).
    #[error("Invalid tensor data at `{path}`: {reason}")]
    InvalidTensorData {
        /// The dotted path.
        path: String,
        /// What does not match.
        reason: String,
    },
    /// A tensor whose dtype cannot be dumped (quantized tensors).
    #[error("Cannot dump the tensor at `{path}`: unsupported dtype {dtype}")]
    UnsupportedDtype {
        /// The dotted path.
        path: String,
        /// The dtype.
        dtype: String,
    },
    /// `permute_axes` that is not a permutation of the tensor's axes.
    #[error("Invalid permute axes {axes:?} for the tensor at `{path}` with shape {shape:?}")]
    InvalidPermutation {
        /// The dotted path.
        path: String,
        /// The axes given.
        axes: Vec<usize>,
        /// The tensor's shape.
        shape: Vec<usize>,
    },
    /// Image data of the wrong rank (the original's assertion text).
    #[error(
        "Number of image dimensions does not match the dump type for file:\n{file}.\nImage data has {ndim} dimensions; dump type is {dump_type}."
    )]
    ImageRank {
        /// The file the image was to be written to.
        file: String,
        /// The image's rank.
        ndim: usize,
        /// `Type.IMAGE_RGB` etc.
        dump_type: String,
    },
    /// A colour image whose last dimension is not 3 (the original's assertion text).
    #[error(
        "Color image must have 3 channels, but image to be dumped to:\n{file}\nhas {channels} channels."
    )]
    ImageChannels {
        /// The file.
        file: String,
        /// The size of the last dimension.
        channels: usize,
    },
    /// Gradients were added but not computed before a dump.
    #[error(
        "Gradients were not computed. Call `set_gradients` before dumping if any gradients are included."
    )]
    GradientsNotComputedForDump,
    /// Gradients were added but not computed before a comparison.
    #[error(
        "Gradients were not computed. Call `set_gradients` before comparing to previously dumped data."
    )]
    GradientsNotComputedForCompare,
    /// `set_gradients` problems: no values, a value that is not a scalar, a tensor of
    /// another backend or kind among the gradient data.
    #[error("{0}")]
    Gradients(String),
    /// A comparison against non-JSON records (the original's text).
    #[error(
        "Cannot compare to dumped data with binary or image format.\nFound image or binary format at: {path}\nwith format: {ext}\nPlease use the JSON format when dumping the data for comparison."
    )]
    CompareNonJson {
        /// The dotted path of the first such record.
        path: String,
        /// Its extension (`bin`, `png`, `npy`).
        ext: String,
    },
    /// No reference file for a comparison (the original's text).
    #[error(
        "No previously dumped data found for [{kind}] data for dump {count}\nunder file path: {file}.\nDump the data first before comparing to previously dumped data."
    )]
    NoReference {
        /// `tensors` or `grads`.
        kind: String,
        /// The dump index.
        count: usize,
        /// The file looked for.
        file: PathBuf,
    },
    /// A reference file that cannot be read or parsed.
    #[error("Cannot read the reference file {file}: {message}")]
    BadReference {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The data differs from the reference: the original's full message.
    #[error("{0}")]
    Mismatch(String),
    /// Writing or reading a blob file failed (the message names the file).
    #[error(transparent)]
    Blob(#[from] super::blob::BlobError),
    /// A ragged batch whose sizes do not fit its data.
    #[error("Invalid ragged batch: {0}")]
    InvalidRaggedBatch(String),
    /// A dump or comparison at a count that cannot be incremented.
    #[error(
        "Cannot dump or compare at dump count {0}: the count after it would overflow (see `set_dump_count`)"
    )]
    DumpCountOverflow(usize),
    /// `pop_range` with no range pushed (the original's IndexError text).
    #[error("pop from empty list")]
    EmptyRangeStack,
    /// A file-system error.
    #[error("I/O error at {path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl DumpError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> DumpError {
        let path = path.into();
        move |source| DumpError::Io { path, source }
    }
}
