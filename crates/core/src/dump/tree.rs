//! The dumper's stored structures (`tensor_struct`, `grad_struct`): nodes, tensor records, and
//! inserting at a dotted path with the original's rules and messages.
//!
//! Deviation from the original: a failed insert leaves the structure as it was (the original
//! leaves the intermediate `{}` nodes it created behind).

use std::any::Any;

use super::blob::Array;
use super::error::DumpError;
use super::json::PyJson;
use super::options::DumpType;

/// A node of a stored structure.
#[doc(hidden)]
pub enum Node {
    Map(Vec<(String, Node)>),
    List(Vec<Node>),
    /// A non-tensor leaf: null, bool, number or string.
    Leaf(PyJson),
    Record(Record),
}

/// A tensor leaf with its dump type and permutation (the original's `_TensorWithFormat`).
#[doc(hidden)]
pub struct Record {
    pub content: Content,
    pub dump_type: DumpType,
    pub permute: Option<Vec<usize>>,
}

/// What a record holds.
#[doc(hidden)]
pub enum Content {
    /// The tensor's values (a snapshot taken when it was added).
    Data(Array),
    /// A tensor added for its gradient, before the gradients are set: what the edition needs
    /// to find its gradient (its primitive, or a gradient tap's sink), type-erased.
    Pending(Box<dyn Any + Send>),
}

impl Node {
    fn python_kind(&self) -> &'static str {
        match self {
            Node::Map(_) => "dict",
            Node::List(_) => "list",
            Node::Record(_) => "_TensorWithFormat",
            Node::Leaf(PyJson::Null) => "NoneType",
            Node::Leaf(PyJson::Bool(_)) => "bool",
            Node::Leaf(PyJson::Int(_)) => "int",
            Node::Leaf(PyJson::Float(_)) => "float",
            Node::Leaf(PyJson::Str(_)) => "str",
            Node::Leaf(_) => "object",
        }
    }

    /// Visits every record that holds data, with its dotted path (`path` is this node's),
    /// depth first in insertion order.
    pub fn for_each_data(&self, path: &str, visit: &mut dyn FnMut(&str, &Array)) {
        match self {
            Node::Map(entries) => entries
                .iter()
                .for_each(|(key, child)| child.for_each_data(&format!("{path}.{key}"), visit)),
            Node::List(items) => items
                .iter()
                .enumerate()
                .for_each(|(i, child)| child.for_each_data(&format!("{path}.{i}"), visit)),
            Node::Record(Record {
                content: Content::Data(data),
                ..
            }) => visit(path, data),
            Node::Record(_) | Node::Leaf(_) => {}
        }
    }

    /// Visits every record, depth first in insertion order.
    pub fn for_each_record(&mut self, visit: &mut dyn FnMut(&mut Node)) {
        match self {
            Node::Map(entries) => entries
                .iter_mut()
                .for_each(|(_, child)| child.for_each_record(visit)),
            Node::List(items) => items
                .iter_mut()
                .for_each(|child| child.for_each_record(visit)),
            Node::Record(_) => visit(self),
            Node::Leaf(_) => {}
        }
    }
}

/// Rejects a name that could take a file out of the dump directory: `..`, `.`, or one holding
/// `/`, `\` or NUL (absolute paths included).
#[doc(hidden)]
pub fn check_name(name: &str, context: impl FnOnce() -> String) -> Result<(), DumpError> {
    if name == ".." || name == "." || name.contains(['/', '\\', '\0']) {
        return Err(DumpError::InvalidName {
            name: name.to_owned(),
            context: context(),
        });
    }
    Ok(())
}

/// Where a walk ended: an existing node or a map to be created.
enum Slot<'a> {
    Existing(&'a Node),
    New,
}

/// Inserts `data` at the dotted `path` of the structure `root`, with the original's rules.
/// Nothing changes when it fails.
#[doc(hidden)]
pub fn insert_at_path(
    root: &mut Vec<(String, Node)>,
    path: &str,
    data: Node,
) -> Result<(), DumpError> {
    let parts: Vec<&str> = path.split('.').collect();
    check_insert(root, path, &parts, &data)?;
    // The checks passed: every step below exists or is created, and the target fits.
    let first = map_slot(root, parts[0]);
    let mut node = &mut root[first].1;
    for part in &parts[1..] {
        node = descend(node, part)?;
    }
    match (node, data) {
        (Node::Map(children), Node::Map(new)) => children.extend(new),
        (slot, data) => *slot = data,
    }
    Ok(())
}

/// The child `part` of `node`; a missing map entry is created as an empty map.
fn descend<'a>(node: &'a mut Node, part: &str) -> Result<&'a mut Node, DumpError> {
    match node {
        Node::Map(children) => {
            let index = map_slot(children, part);
            Ok(&mut children[index].1)
        }
        Node::List(items) => {
            let index: usize = part.parse().map_err(|_| DumpError::NotANumber {
                part: part.to_owned(),
            })?;
            items.get_mut(index).ok_or_else(|| DumpError::OutOfBounds {
                part: part.to_owned(),
            })
        }
        other => Err(DumpError::NotSubscriptable {
            kind: other.python_kind().to_owned(),
        }),
    }
}

/// The index of `key` in a map, created as an empty map when missing.
fn map_slot(entries: &mut Vec<(String, Node)>, key: &str) -> usize {
    match entries.iter().position(|(k, _)| k == key) {
        Some(index) => index,
        None => {
            entries.push((key.to_owned(), Node::Map(Vec::new())));
            entries.len() - 1
        }
    }
}

/// All the original's checks of an insert, without changing anything.
fn check_insert(
    root: &[(String, Node)],
    path: &str,
    parts: &[&str],
    data: &Node,
) -> Result<(), DumpError> {
    let mut slot = match root.iter().find(|(k, _)| k == parts[0]) {
        Some((_, node)) => Slot::Existing(node),
        None => Slot::New,
    };
    for part in &parts[1..] {
        slot = match slot {
            Slot::New => Slot::New,
            Slot::Existing(Node::Map(children)) => match children.iter().find(|(k, _)| k == part) {
                Some((_, node)) => Slot::Existing(node),
                None => Slot::New,
            },
            Slot::Existing(Node::List(items)) => {
                if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(DumpError::NotANumber {
                        part: (*part).to_owned(),
                    });
                }
                match part.parse::<usize>().ok().and_then(|i| items.get(i)) {
                    Some(node) => Slot::Existing(node),
                    None => {
                        return Err(DumpError::OutOfBounds {
                            part: (*part).to_owned(),
                        });
                    }
                }
            }
            Slot::Existing(other) => {
                return Err(DumpError::NotSubscriptable {
                    kind: other.python_kind().to_owned(),
                });
            }
        };
    }
    let existing: &[(String, Node)] = match slot {
        Slot::New => &[],
        Slot::Existing(Node::Map(children)) => children,
        Slot::Existing(_) => {
            return Err(DumpError::NotADictionary {
                path: path.to_owned(),
            });
        }
    };
    match data {
        Node::Map(new) => {
            if let Some((key, _)) = new
                .iter()
                .find(|(k, _)| existing.iter().any(|(e, _)| e == k))
            {
                return Err(DumpError::DuplicateKey {
                    path: path.to_owned(),
                    key: key.clone(),
                });
            }
        }
        Node::Record(_) | Node::List(_) | Node::Leaf(PyJson::Str(_)) => {
            if !existing.is_empty() {
                return Err(DumpError::NonEmptyDictionary {
                    path: path.to_owned(),
                });
            }
        }
        Node::Leaf(other) => {
            return Err(DumpError::UnsupportedDataType(format!(
                "<class '{}'>",
                Node::Leaf(other.clone()).python_kind()
            )));
        }
    }
    Ok(())
}
