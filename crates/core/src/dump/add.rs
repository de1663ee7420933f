//! The add pipeline of the original, in its order: range prefix, exclude, converters, the dump
//! type for all, then tensor leaves become records whose dump type and permutation are
//! resolved by the innermost matching map key.

use std::collections::HashSet;

use super::convert::{self, Converters};
use super::error::DumpError;
use super::json::PyJson;
use super::options::{AddOptions, DumpType};
use super::tree::{Content, Node, Record, check_name};
use super::value::{Map, Value};

/// Which structure the data goes to: tensors are read at once, gradient inputs kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[doc(hidden)]
pub enum Kind {
    Tensors,
    Grads,
}

/// The full path of an add: the range names and `path` joined with `.`, every part checked.
#[doc(hidden)]
pub fn full_path(ranges: &[String], path: &str) -> Result<String, DumpError> {
    for part in path.split('.') {
        check_name(part, || format!("path `{path}`"))?;
    }
    Ok(if ranges.is_empty() {
        path.to_owned()
    } else {
        format!("{}.{path}", ranges.join("."))
    })
}

/// Steps 3 to 6 of the pipeline: `value` as a node of the stored structure.
pub(crate) fn prepare(
    value: Value,
    path: &str,
    options: &AddOptions,
    converters: &Converters,
    dump_type_for_all: Option<DumpType>,
    kind: Kind,
) -> Result<Node, DumpError> {
    let value = convert::exclude(value, &options.exclude);
    let value = converters.apply(value)?;
    let no_overrides = Default::default();
    let (dump_type, type_overrides) = match dump_type_for_all {
        Some(all) => (all, &no_overrides),
        None => (options.dump_type, &options.type_overrides),
    };
    let mut format = Format {
        type_overrides,
        permute_overrides: &options.permute_overrides,
        kind,
    };
    format.node(value, path, dump_type, options.permute_axes.clone())
}

struct Format<'a> {
    type_overrides: &'a std::collections::HashMap<String, DumpType>,
    permute_overrides: &'a std::collections::HashMap<String, Option<Vec<usize>>>,
    kind: Kind,
}

impl Format<'_> {
    fn node(
        &mut self,
        value: Value,
        path: &str,
        dump_type: DumpType,
        permute: Option<Vec<usize>>,
    ) -> Result<Node, DumpError> {
        Ok(match value {
            Value::Null => Node::Leaf(PyJson::Null),
            Value::Bool(b) => Node::Leaf(PyJson::Bool(b)),
            Value::Int(i) => Node::Leaf(PyJson::Int(i)),
            Value::Float(f) => Node::Leaf(PyJson::Float(f)),
            Value::Str(s) => Node::Leaf(PyJson::Str(s)),
            Value::List(items) => Node::List(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, item)| {
                        self.node(item, &format!("{path}.{i}"), dump_type, permute.clone())
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Value::Map(Map(entries)) => {
                let mut seen = HashSet::with_capacity(entries.len());
                let mut nodes = Vec::with_capacity(entries.len());
                for (key, item) in entries {
                    check_name(&key, || format!("a key at path `{path}`"))?;
                    if !seen.insert(key.clone()) {
                        return Err(DumpError::DuplicateMapKey {
                            path: path.to_owned(),
                            key,
                        });
                    }
                    let dump_type = self.type_overrides.get(&key).copied().unwrap_or(dump_type);
                    let permute = match self.permute_overrides.get(&key) {
                        Some(axes) => axes.clone(),
                        None => permute.clone(),
                    };
                    let child = self.node(item, &format!("{path}.{key}"), dump_type, permute)?;
                    nodes.push((key, child));
                }
                Node::Map(nodes)
            }
            Value::Tensor(leaf) => {
                let content = match self.kind {
                    Kind::Tensors => {
                        let data = leaf.0.into_array().map_err(|error| error.at(path))?;
                        Content::Data(data)
                    }
                    Kind::Grads => Content::Pending(leaf.0.into_primitive()),
                };
                Node::Record(Record {
                    content,
                    dump_type,
                    permute,
                })
            }
            // `Converters::apply` leaves none.
            Value::Opaque(opaque) => {
                return Err(DumpError::NoConverter(opaque.type_name.to_owned()));
            }
        })
    }
}
