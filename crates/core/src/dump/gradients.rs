//! Gradients for the records added with `add_grad_data`, for every edition: each pending record
//! becomes its gradient's values, `null` when the backward did not reach it, or the string
//! `` "`.requires_grad == False`" `` when autodiff does not track it (int and bool tensors
//! included), as in the original. An edition says what each pending record's gradient is; the
//! walk over the tree and the replacement are here.

use std::any::Any;

use super::blob::Array;
use super::json::PyJson;
use super::{Content, DumpError, Node, Record};

/// What an untracked tensor's gradient is dumped as (the original's literal string).
pub const REQUIRES_GRAD_FALSE: &str = "`.requires_grad == False`";

/// One pending record's gradient.
#[derive(Debug)]
pub enum Gradient {
    /// Its values.
    Values(Array),
    /// The backward did not reach it (`null`).
    Unreached,
    /// Autodiff does not track it (the original's string).
    Untracked,
}

/// What an edition says of one pending record: its gradient now, or a read to make once every
/// other record resolved (a gradient tap's, whose read uses up its sink).
pub enum Resolution {
    /// Resolved.
    Now(Gradient),
    /// Resolved after every `Now`, in the order met.
    Later(Box<dyn FnOnce() -> Result<Gradient, DumpError>>),
}

/// Replaces every pending gradient record of `root` by what `gradient_of` says of its pending
/// value (`path` names it in errors). Nothing changes when it fails.
pub fn resolve(
    root: &mut [(String, Node)],
    mut gradient_of: impl FnMut(&(dyn Any + Send), &str) -> Result<Resolution, DumpError>,
) -> Result<(), DumpError> {
    let mut resolutions = Vec::new();
    for (key, node) in root.iter() {
        collect(node, key, &mut gradient_of, &mut resolutions)?;
    }
    let mut later = Vec::new();
    let mut gradients: Vec<Option<Gradient>> = Vec::with_capacity(resolutions.len());
    for resolution in resolutions {
        match resolution {
            Resolution::Now(gradient) => gradients.push(Some(gradient)),
            Resolution::Later(read) => {
                later.push((gradients.len(), read));
                gradients.push(None);
            }
        }
    }
    for (at, read) in later {
        gradients[at] = Some(read()?);
    }
    let mut gradients = gradients.into_iter().flatten();
    for (_, node) in root.iter_mut() {
        node.for_each_record(&mut |node| {
            if let Node::Record(Record {
                content: Content::Pending(_),
                dump_type,
                permute,
            }) = node
            {
                *node = match gradients.next() {
                    Some(Gradient::Values(data)) => Node::Record(Record {
                        content: Content::Data(data),
                        dump_type: *dump_type,
                        permute: permute.take(),
                    }),
                    Some(Gradient::Untracked) => {
                        Node::Leaf(PyJson::Str(REQUIRES_GRAD_FALSE.to_owned()))
                    }
                    Some(Gradient::Unreached) | None => Node::Leaf(PyJson::Null),
                };
            }
        });
    }
    Ok(())
}

fn collect(
    node: &Node,
    path: &str,
    gradient_of: &mut impl FnMut(&(dyn Any + Send), &str) -> Result<Resolution, DumpError>,
    out: &mut Vec<Resolution>,
) -> Result<(), DumpError> {
    match node {
        Node::Map(entries) => {
            for (key, child) in entries {
                collect(child, &format!("{path}.{key}"), gradient_of, out)?;
            }
        }
        Node::List(items) => {
            for (i, child) in items.iter().enumerate() {
                collect(child, &format!("{path}.{i}"), gradient_of, out)?;
            }
        }
        Node::Record(Record {
            content: Content::Pending(pending),
            ..
        }) => out.push(gradient_of(pending.as_ref(), path)?),
        Node::Record(_) | Node::Leaf(_) => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dump::DumpType;
    use crate::dump::blob::Dtype;

    fn pending(tag: u8) -> Node {
        Node::Record(Record {
            content: Content::Pending(Box::new(tag)),
            dump_type: DumpType::Json,
            permute: None,
        })
    }

    fn scalar(value: f32) -> Array {
        Array::new(Dtype::F32, vec![1], value.to_le_bytes().to_vec()).expect("one f32")
    }

    /// Each pending record becomes what the edition said of it, in the tree's order, reads
    /// deferred to the end run after every other record, and a failure changes nothing.
    #[test]
    fn pending_records_become_their_gradients_and_a_failure_changes_nothing() {
        let mut root = vec![
            (
                "a".to_owned(),
                Node::Map(vec![("w".to_owned(), pending(0))]),
            ),
            (
                "b".to_owned(),
                Node::List(vec![pending(1), pending(2), pending(3)]),
            ),
        ];
        let order = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let seen = order.clone();
        resolve(&mut root, |value, path| {
            let tag = *value.downcast_ref::<u8>().expect("a tag");
            seen.borrow_mut().push(path.to_owned());
            Ok(match tag {
                0 => Resolution::Later({
                    let seen = seen.clone();
                    Box::new(move || {
                        seen.borrow_mut().push("later".to_owned());
                        Ok(Gradient::Values(scalar(2.0)))
                    })
                }),
                1 => Resolution::Now(Gradient::Unreached),
                2 => Resolution::Now(Gradient::Untracked),
                _ => Resolution::Now(Gradient::Values(scalar(1.0))),
            })
        })
        .expect("resolved");
        assert_eq!(*order.borrow(), ["a.w", "b.0", "b.1", "b.2", "later"]);
        let leaf = |node: &Node| match node {
            Node::Leaf(leaf) => Some(leaf.clone()),
            _ => None,
        };
        let Node::Map(a) = &root[0].1 else {
            panic!("a map")
        };
        assert!(matches!(
            &a[0].1,
            Node::Record(Record {
                content: Content::Data(_),
                ..
            })
        ));
        let Node::List(b) = &root[1].1 else {
            panic!("a list")
        };
        assert_eq!(leaf(&b[0]), Some(PyJson::Null));
        assert_eq!(
            leaf(&b[1]),
            Some(PyJson::Str(REQUIRES_GRAD_FALSE.to_owned()))
        );
        assert!(matches!(
            &b[2],
            Node::Record(Record {
                content: Content::Data(_),
                ..
            })
        ));

        let mut untouched = vec![("c".to_owned(), pending(0))];
        let error = resolve(&mut untouched, |_, path| {
            Err(DumpError::Gradients(format!("no gradient at `{path}`")))
        })
        .expect_err("fails");
        assert_eq!(error.to_string(), "no gradient at `c`");
        assert!(matches!(
            &untouched[0].1,
            Node::Record(Record {
                content: Content::Pending(_),
                ..
            })
        ));
    }
}
