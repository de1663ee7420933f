//! The items of a list being read, kept flat while they are numbers.

use crate::dump::json::{NumberValues, Numbers, PyJson};

/// The items of a list being read: flat while they are numbers of one kind, or flat lists of
/// one shape and kind (rows), else one node each.
pub(super) enum Items {
    Floats(Vec<f64>),
    Ints(Vec<i64>),
    Rows(Numbers),
    Nodes(Vec<PyJson>),
}

impl Items {
    pub(super) fn push(&mut self, value: PyJson) {
        match (&mut *self, value) {
            (Items::Nodes(nodes), value) if nodes.is_empty() => {
                *self = match value {
                    PyJson::Float(f) => Items::Floats(vec![f]),
                    PyJson::Int(i) => Items::Ints(vec![i]),
                    PyJson::Numbers(mut row) => {
                        row.shape.insert(0, 1);
                        Items::Rows(row)
                    }
                    other => Items::Nodes(vec![other]),
                }
            }
            (Items::Nodes(nodes), value) => nodes.push(value),
            (Items::Floats(floats), PyJson::Float(f)) => floats.push(f),
            (Items::Ints(ints), PyJson::Int(i)) => ints.push(i),
            (Items::Rows(rows), PyJson::Numbers(row)) if rows.shape[1..] == row.shape[..] => {
                match (&mut rows.values, row.values) {
                    (NumberValues::Float(all), NumberValues::Float(v)) => all.extend(v),
                    (NumberValues::Int(all), NumberValues::Int(v)) => all.extend(v),
                    (NumberValues::Bool(all), NumberValues::Bool(v)) => all.extend(v),
                    (_, values) => {
                        let row = Numbers {
                            shape: row.shape,
                            values,
                        };
                        return self.push_node(PyJson::Numbers(row));
                    }
                }
                rows.shape[0] += 1;
            }
            (_, value) => self.push_node(value),
        }
    }

    /// Pushes `value` as a node, turning the flat items read so far into nodes.
    fn push_node(&mut self, value: PyJson) {
        let mut nodes = match std::mem::replace(self, Items::Nodes(Vec::new())) {
            Items::Floats(floats) => floats.into_iter().map(PyJson::Float).collect(),
            Items::Ints(ints) => ints.into_iter().map(PyJson::Int).collect(),
            Items::Rows(rows) => split_rows(rows),
            Items::Nodes(nodes) => nodes,
        };
        nodes.push(value);
        *self = Items::Nodes(nodes);
    }

    pub(super) fn finish(self) -> PyJson {
        let flat = |values: NumberValues| {
            PyJson::Numbers(Numbers {
                shape: vec![values.len()],
                values,
            })
        };
        match self {
            Items::Floats(floats) => flat(NumberValues::Float(floats)),
            Items::Ints(ints) => flat(NumberValues::Int(ints)),
            Items::Rows(rows) => PyJson::Numbers(rows),
            Items::Nodes(nodes) => PyJson::List(nodes),
        }
    }
}

/// The rows of `rows` (shape `[n, ...]`), one [`PyJson::Numbers`] each.
fn split_rows(rows: Numbers) -> Vec<PyJson> {
    let shape = rows.shape[1..].to_vec();
    let count = rows.shape[0];
    let len = shape.iter().product::<usize>();
    let row = |values: NumberValues| {
        PyJson::Numbers(Numbers {
            shape: shape.clone(),
            values,
        })
    };
    let parts = |i: usize| i * len..(i + 1) * len;
    match rows.values {
        NumberValues::Float(v) => (0..count)
            .map(|i| row(NumberValues::Float(v[parts(i)].to_vec())))
            .collect(),
        NumberValues::Int(v) => (0..count)
            .map(|i| row(NumberValues::Int(v[parts(i)].to_vec())))
            .collect(),
        NumberValues::Bool(v) => (0..count)
            .map(|i| row(NumberValues::Bool(v[parts(i)].to_vec())))
            .collect(),
        NumberValues::U8(v) => (0..count)
            .map(|i| row(NumberValues::U8(v[parts(i)].to_vec())))
            .collect(),
    }
}
