//! A stored structure as the main JSON file plus a list of blob files: permutations applied,
//! JSON tensors as nested lists, other dump types as `"{path}.{ext}"` names, image stacks
//! split into one file per image (`.i.j.k`). Everything is checked here, before any file is
//! written.

use std::borrow::Cow;
use std::collections::HashSet;

use burn::tensor::{DType, TensorData};

use super::error::DumpError;
use super::json::{NumberValues, Numbers, PyJson};
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
    pub data: Cow<'a, TensorData>,
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
                permute(data, axes).ok_or_else(|| DumpError::InvalidPermutation {
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
    data: Cow<'a, TensorData>,
    path: &str,
    location: &str,
    dump_type: DumpType,
    file_for: &dyn Fn(&str) -> String,
    out: &mut Formatted<'a>,
) -> Result<PyJson, DumpError> {
    let Some(ext) = dump_type.extension() else {
        return tensor_json(&data, path);
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

/// Checks that `data`'s bytes are exactly what its shape and dtype need (a `TensorData` built
/// by hand may not be); the reason when not.
pub(crate) fn check_data(data: &TensorData) -> Result<(), String> {
    let shape = data.shape.to_vec();
    let needed = super::blob::element_count(&shape).and_then(|n| n.checked_mul(data.dtype.size()));
    match needed {
        Some(needed) if needed == data.as_bytes().len() => Ok(()),
        Some(needed) => Err(format!(
            "{} bytes, but shape {shape:?} of {:?} needs {needed}",
            data.as_bytes().len(),
            data.dtype
        )),
        None => Err(format!(
            "shape {shape:?} of {:?} has more bytes than memory can hold",
            data.dtype
        )),
    }
}

/// Splits an image stack over its leading dims into nested lists of single images.
fn split<'a>(
    data: Cow<'a, TensorData>,
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
    let bytes = data.as_bytes();
    // The data was checked (`check_data`): `count` chunks of equal size, whatever the
    // product of the other dims would be when one of them is 0.
    let chunk = bytes.len().checked_div(count).unwrap_or(0);
    let mut items = Vec::with_capacity(count);
    for i in 0..count {
        let part = TensorData::from_bytes_vec(
            bytes[i * chunk..(i + 1) * chunk].to_vec(),
            inner.clone(),
            data.dtype,
        );
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

/// `data` with its axes permuted (`result.shape[i] = shape[axes[i]]`); `None` when `axes` is
/// not a permutation of the axes.
pub(crate) fn permute(data: &TensorData, axes: &[usize]) -> Option<TensorData> {
    let shape = data.shape.to_vec();
    let rank = shape.len();
    let mut seen = vec![false; rank];
    if axes.len() != rank
        || axes
            .iter()
            .any(|&a| a >= rank || std::mem::replace(&mut seen[a], true))
    {
        return None;
    }
    let size = data.dtype.size();
    let new_shape: Vec<usize> = axes.iter().map(|&a| shape[a]).collect();
    let bytes = data.as_bytes();
    // The data was checked (`check_data`), so no product of dims below overflows unless
    // there are no elements.
    if bytes.is_empty() {
        return Some(TensorData::from_bytes_vec(
            Vec::new(),
            new_shape,
            data.dtype,
        ));
    }
    let mut strides = vec![size; rank];
    for i in (0..rank.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    let new_strides: Vec<usize> = axes.iter().map(|&a| strides[a]).collect();
    let total = bytes.len() / size;
    let mut out = Vec::with_capacity(total * size);
    let mut index = vec![0usize; rank];
    for _ in 0..total {
        let offset: usize = index.iter().zip(&new_strides).map(|(i, s)| i * s).sum();
        out.extend_from_slice(&bytes[offset..offset + size]);
        for d in (0..rank).rev() {
            index[d] += 1;
            if index[d] < new_shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Some(TensorData::from_bytes_vec(out, new_shape, data.dtype))
}

/// A tensor as `tensor.tolist()` writes it: nested lists of plain numbers (floats widened to
/// double, ints as ints, bools as `true`/`false`); a 0-d tensor is a bare number.
pub(crate) fn tensor_json(data: &TensorData, path: &str) -> Result<PyJson, DumpError> {
    let values = match data.dtype {
        DType::F64 | DType::F32 | DType::Flex32 | DType::F16 | DType::BF16 => {
            NumberValues::Float(data.iter::<f64>().collect())
        }
        DType::I64 | DType::I32 | DType::I16 | DType::I8 | DType::U32 | DType::U16 | DType::U8 => {
            NumberValues::Int(data.iter::<i64>().collect())
        }
        // u64 beyond i64 is written as a float, as Python would print a huge int: keep the
        // per-element form there.
        DType::U64 => {
            let items: Vec<PyJson> = data
                .iter::<u64>()
                .map(|v| i64::try_from(v).map_or(PyJson::Float(v as f64), PyJson::Int))
                .collect();
            return Ok(nest(&mut items.into_iter(), &data.shape.to_vec()));
        }
        DType::Bool(_) => NumberValues::Bool(data.iter::<bool>().collect()),
        DType::QFloat(_) => {
            return Err(DumpError::UnsupportedDtype {
                path: path.to_owned(),
                dtype: format!("{:?}", data.dtype),
            });
        }
    };
    let shape = data.shape.to_vec();
    // A 0-d tensor is a bare number; anything else the flat form of its nested lists.
    Ok(if shape.is_empty() {
        if values.is_empty() {
            PyJson::Null
        } else {
            values.get(0)
        }
    } else {
        PyJson::Numbers(Numbers { shape, values })
    })
}

fn nest(items: &mut impl Iterator<Item = PyJson>, shape: &[usize]) -> PyJson {
    match shape.split_first() {
        None => items.next().unwrap_or(PyJson::Null),
        Some((&n, rest)) => PyJson::List((0..n).map(|_| nest(items, rest)).collect()),
    }
}
