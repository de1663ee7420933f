//! A stored structure as the main JSON file plus a list of blob files: permutations applied,
//! JSON tensors as nested lists, other dump types as `"{path}.{ext}"` names, image stacks
//! split into one file per image (`.i.j.k`). Everything is checked here, before any file is
//! written.

use std::borrow::Cow;
use std::collections::HashSet;

use super::blob::Array;
use super::error::DumpError;
use super::json::PyJson;
use super::options::DumpType;
use super::tree::{Content, Node, Record};

/// A file to write next to the main JSON file.
pub(crate) struct Blob<'a> {
    /// The dotted name with its extension (`group.bin.bin`); the file is `[{kind}.json]{name}`.
    pub name: String,
    /// Where the tensor is in the structure, unambiguously (`["group"]["a.b"]`), where the
    /// dotted name may stand for several places.
    pub location: String,
    /// The data: the stored tensor's, or its permuted or split copy.
    pub data: Cow<'a, Array>,
    /// Binary, an image type or Npy.
    pub dump_type: DumpType,
}

/// The formatted structure.
pub(crate) struct Formatted<'a> {
    pub json: PyJson,
    pub blobs: Vec<Blob<'a>>,
    /// The structure paths holding a tensor (for the comparison's per-tensor limit).
    pub tensor_paths: HashSet<String>,
    /// Whether image shapes are checked (dumping; a comparison refuses images anyway).
    check_images: bool,
}

/// Formats `root`. `split_images`: dumping (image stacks become one file per image), not
/// comparing. `file_for` gives the file an image check reports.
pub(crate) fn format<'a>(
    root: &'a [(String, Node)],
    split_images: bool,
    file_for: &dyn Fn(&str) -> String,
) -> Result<Formatted<'a>, DumpError> {
    let mut out = Formatted {
        json: PyJson::Null,
        blobs: Vec::new(),
        tensor_paths: HashSet::new(),
        check_images: split_images,
    };
    let mut entries = Vec::with_capacity(root.len());
    for (key, node) in root {
        entries.push((
            key.clone(),
            node_json(
                node,
                key,
                &key_location("", key),
                split_images,
                file_for,
                &mut out,
            )?,
        ));
    }
    out.json = PyJson::Object(entries);
    Ok(out)
}

/// `location` followed by the subscript of map key `key`.
fn key_location(location: &str, key: &str) -> String {
    format!("{location}[{key:?}]")
}

fn node_json<'a>(
    node: &'a Node,
    path: &str,
    location: &str,
    split_images: bool,
    file_for: &dyn Fn(&str) -> String,
    out: &mut Formatted<'a>,
) -> Result<PyJson, DumpError> {
    Ok(match node {
        Node::Leaf(leaf) => leaf.clone(),
        Node::Map(entries) => PyJson::Object(
            entries
                .iter()
                .map(|(key, child)| {
                    let child = node_json(
                        child,
                        &format!("{path}.{key}"),
                        &key_location(location, key),
                        split_images,
                        file_for,
                        out,
                    )?;
                    Ok((key.clone(), child))
                })
                .collect::<Result<_, DumpError>>()?,
        ),
        Node::List(items) => PyJson::List(
            items
                .iter()
                .enumerate()
                .map(|(i, child)| {
                    node_json(
                        child,
                        &format!("{path}.{i}"),
                        &format!("{location}[{i}]"),
                        split_images,
                        file_for,
                        out,
                    )
                })
                .collect::<Result<_, _>>()?,
        ),
        Node::Record(record) => record_json(record, path, location, split_images, file_for, out)?,
    })
}

fn record_json<'a>(
    record: &'a Record,
    path: &str,
    location: &str,
    split_images: bool,
    file_for: &dyn Fn(&str) -> String,
    out: &mut Formatted<'a>,
) -> Result<PyJson, DumpError> {
    let Content::Data(data) = &record.content else {
        // Gradient inputs before `set_gradients` are refused earlier; the original would
        // dump the tensor values.
        return Err(DumpError::GradientsNotComputedForDump);
    };
    let data = match &record.permute {
        Some(axes) => {
            Cow::Owned(
                data.permuted(axes)
                    .map_err(|_| DumpError::InvalidPermutation {
                        path: path.to_owned(),
                        axes: axes.clone(),
                        shape: data.shape.to_vec(),
                    })?,
            )
        }
        None => Cow::Borrowed(data),
    };
    if split_images
        && let Some(rank) = record.dump_type.image_rank()
        && data.shape.len() > rank
    {
        return split(data, path, location, rank, record.dump_type, file_for, out);
    }
    out.tensor_paths.insert(path.to_owned());
    blob_or_json(data, path, location, record.dump_type, file_for, out)
}

fn blob_or_json<'a>(
    data: Cow<'a, Array>,
    path: &str,
    location: &str,
    dump_type: DumpType,
    file_for: &dyn Fn(&str) -> String,
    out: &mut Formatted<'a>,
) -> Result<PyJson, DumpError> {
    let Some(ext) = dump_type.extension() else {
        return Ok(tensor_json(&data));
    };
    let name = format!("{path}.{ext}");
    if let Some(rank) = dump_type.image_rank()
        && out.check_images
    {
        let shape = data.shape.to_vec();
        if shape.len() != rank {
            return Err(DumpError::ImageRank {
                file: file_for(&name),
                ndim: shape.len(),
                dump_type: dump_type.python_name().to_owned(),
            });
        }
        if rank == 3 && shape[2] != 3 {
            return Err(DumpError::ImageChannels {
                file: file_for(&name),
                channels: shape[2],
            });
        }
    }
    out.blobs.push(Blob {
        name: name.clone(),
        location: location.to_owned(),
        data,
        dump_type,
    });
    Ok(PyJson::Str(name))
}

/// Splits an image stack over its leading dims into nested lists of single images.
fn split<'a>(
    data: Cow<'a, Array>,
    path: &str,
    location: &str,
    rank: usize,
    dump_type: DumpType,
    file_for: &dyn Fn(&str) -> String,
    out: &mut Formatted<'a>,
) -> Result<PyJson, DumpError> {
    let shape = data.shape.to_vec();
    if shape.len() == rank {
        return blob_or_json(data, path, location, dump_type, file_for, out);
    }
    let count = shape[0];
    let inner: Vec<usize> = shape[1..].to_vec();
    let bytes = &data.bytes;
    // An array's bytes are what its shape needs: `count` chunks of equal size, whatever the
    // product of the other dims would be when one of them is 0.
    let chunk = bytes.len().checked_div(count).unwrap_or(0);
    let mut items = Vec::with_capacity(count);
    for i in 0..count {
        let part = Array {
            dtype: data.dtype,
            shape: inner.clone(),
            bytes: bytes[i * chunk..(i + 1) * chunk].to_vec(),
        };
        items.push(split(
            Cow::Owned(part),
            &format!("{path}.{i}"),
            &format!("{location}[{i}]"),
            rank,
            dump_type,
            file_for,
            out,
        )?);
    }
    Ok(PyJson::List(items))
}

/// A tensor as `tensor.tolist()` writes it: nested lists of plain numbers (floats widened to
/// double, ints as ints, bools as `true`/`false`); a 0-d tensor is a bare number.
pub(crate) fn tensor_json(data: &Array) -> PyJson {
    data.to_py_json()
}
