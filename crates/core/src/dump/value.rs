//! The data given to the dumper: a value tree ([`Value`], [`Map`]) and the [`ToDump`]
//! conversion into it.
//!
//! Anything that implements [`ToDump`] can be dumped: Burn tensors of any backend, rank and
//! kind (through their edition), numbers, `bool`, strings, `Option` (`None` is `null`), `Vec`, arrays, tuples (as
//! lists), [`Map`] and `BTreeMap<String, _>` (objects), [`PyJson`] and [`Value`] itself. A type
//! of another crate, which cannot implement [`ToDump`] here, is wrapped with [`Value::opaque`]
//! and turned into a tree by a converter registered for its type (see
//! [`TensorDumper::register_custom_converter`](super::TensorDumper::register_custom_converter)).
//!
//! ```
//! use burn_profiled_core::dump::{Map, ToDump, Value};
//!
//! let value = Map::new().with("n", 3).with("names", vec!["a", "b"]).with("none", None::<i32>);
//! assert!(matches!(value.to_dump(), Value::Map(_)));
//! ```

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt;

use super::blob::{Array, TensorDataOf};
use super::json::PyJson;

/// A value to dump: a tree of maps (insertion order), lists, scalars, strings, tensors and
/// opaque user values waiting for a converter.
pub enum Value {
    /// `null` (Python `None`).
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string. Like the original, a string counts as a sequence when inserted at a path.
    Str(String),
    /// A list (Python lists and tuples).
    List(Vec<Value>),
    /// A map with string keys, in insertion order.
    Map(Map),
    /// A Burn tensor.
    Tensor(TensorLeaf),
    /// A value of a user type, turned into a tree by a registered converter.
    Opaque(Opaque),
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("Null"),
            Value::Bool(b) => write!(f, "Bool({b})"),
            Value::Int(i) => write!(f, "Int({i})"),
            Value::Float(x) => write!(f, "Float({x})"),
            Value::Str(s) => write!(f, "Str({s:?})"),
            Value::List(items) => f.debug_tuple("List").field(items).finish(),
            Value::Map(map) => f.debug_tuple("Map").field(&map.0).finish(),
            Value::Tensor(_) => f.write_str("Tensor(..)"),
            Value::Opaque(opaque) => write!(f, "Opaque({})", opaque.type_name),
        }
    }
}

impl Value {
    /// Wraps a value of any type for a converter registered for that exact type.
    pub fn opaque<T: Any + Send>(value: T) -> Value {
        Value::Opaque(Opaque {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            value: Box::new(value),
        })
    }
}

/// A map with string keys that keeps insertion order: the dumper's dict.
#[derive(Debug, Default)]
pub struct Map(pub Vec<(String, Value)>);

impl Map {
    /// An empty map.
    pub fn new() -> Map {
        Map(Vec::new())
    }

    /// Adds `key: value` (builder style). A repeated key replaces the earlier value in place.
    pub fn with<Burn>(mut self, key: impl Into<String>, value: impl ToDump<Burn>) -> Map {
        self.insert(key, value);
        self
    }

    /// Adds `key: value`; a repeated key replaces the earlier value in place.
    pub fn insert<Burn>(&mut self, key: impl Into<String>, value: impl ToDump<Burn>) {
        let key = key.into();
        let value = value.to_dump();
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some((_, slot)) => *slot = value,
            None => self.0.push((key, value)),
        }
    }

    /// Whether the map has no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A tensor in a [`Value`]: a type-erased Burn tensor, read when the dumper takes it.
pub struct TensorLeaf(#[doc(hidden)] pub Box<dyn ErasedTensor>);

/// A user value waiting for a converter.
pub struct Opaque {
    pub(crate) type_id: TypeId,
    pub(crate) type_name: &'static str,
    pub(crate) value: Box<dyn Any + Send>,
}

/// A Burn tensor with its backend, rank and kind erased: what each edition's tensors are in a
/// [`Value`].
#[doc(hidden)]
pub trait ErasedTensor: Send {
    /// Reads the values (the dumper's snapshot).
    fn into_array(self: Box<Self>) -> Result<Array, TensorLeafError>;
    /// What the edition needs to find its gradient (its primitive), type-erased.
    fn into_primitive(self: Box<Self>) -> Box<dyn Any + Send>;
}

/// Why a tensor's values could not be taken.
#[doc(hidden)]
#[derive(Debug)]
pub enum TensorLeafError {
    /// The backend could not read them.
    Read(String),
    /// Its dtype has no dumped form (quantized), as `Debug` prints it.
    UnsupportedDtype(String),
    /// Its bytes do not match its shape and dtype (tensor data built by hand).
    Invalid(String),
}

/// An edition's tensor data (`D`, of the Burn `E`) as the dumper keeps it, or why it cannot
/// be: quantized, or bytes that do not match its shape and dtype.
pub fn leaf_array<E, D: TensorDataOf<E>>(data: &D) -> Result<Array, TensorLeafError> {
    if let Some(dtype) = data.quantized() {
        return Err(TensorLeafError::UnsupportedDtype(dtype));
    }
    data.check().map_err(TensorLeafError::Invalid)?;
    (data.to_array()).map_err(|error| TensorLeafError::Invalid(error.to_string()))
}

impl TensorLeafError {
    /// The backend's error reading a tensor (its `Debug`).
    pub fn read(error: impl fmt::Debug) -> Self {
        TensorLeafError::Read(format!("{error:?}"))
    }

    /// The dumper's error for the tensor at `path`.
    pub fn at(self, path: &str) -> super::DumpError {
        let path = path.to_owned();
        match self {
            TensorLeafError::Read(message) => super::DumpError::TensorRead { path, message },
            TensorLeafError::UnsupportedDtype(dtype) => {
                super::DumpError::UnsupportedDtype { path, dtype }
            }
            TensorLeafError::Invalid(reason) => {
                super::DumpError::InvalidTensorData { path, reason }
            }
        }
    }
}

/// Values already read: dumped as they are; not usable as gradient inputs.
impl ErasedTensor for Array {
    fn into_array(self: Box<Self>) -> Result<Array, TensorLeafError> {
        Ok(*self)
    }

    fn into_primitive(self: Box<Self>) -> Box<dyn Any + Send> {
        self
    }
}

impl ToDump for Array {
    fn to_dump(self) -> Value {
        Value::Tensor(TensorLeaf(Box::new(self)))
    }
}

/// Conversion into the dumper's value tree.
///
/// Implement it for your own types to dump them directly (or register a converter for types
/// of other crates). `Burn` is a marker an edition implements it for its Burn's tensors with
/// (the compiler infers it); your own implementations leave it out.
pub trait ToDump<Burn = ()> {
    /// The value tree for `self`.
    fn to_dump(self) -> Value;
}

impl ToDump for Value {
    fn to_dump(self) -> Value {
        self
    }
}

impl ToDump for PyJson {
    fn to_dump(self) -> Value {
        match self {
            PyJson::Null => Value::Null,
            PyJson::Bool(b) => Value::Bool(b),
            PyJson::Int(i) => Value::Int(i),
            PyJson::Float(f) => Value::Float(f),
            PyJson::Str(s) => Value::Str(s),
            PyJson::List(items) => Value::List(items.into_iter().map(ToDump::to_dump).collect()),
            PyJson::Numbers(numbers) => numbers.to_lists().to_dump(),
            PyJson::Object(entries) => Value::Map(Map(entries
                .into_iter()
                .map(|(k, v)| (k, v.to_dump()))
                .collect())),
        }
    }
}

impl ToDump for Map {
    fn to_dump(self) -> Value {
        Value::Map(self)
    }
}

impl<Burn, T: ToDump<Burn>> ToDump<Burn> for BTreeMap<String, T> {
    fn to_dump(self) -> Value {
        Value::Map(Map(self
            .into_iter()
            .map(|(k, v)| (k, v.to_dump()))
            .collect()))
    }
}

impl<Burn, T: ToDump<Burn>> ToDump<Burn> for Vec<T> {
    fn to_dump(self) -> Value {
        Value::List(self.into_iter().map(ToDump::to_dump).collect())
    }
}

impl<Burn, T: ToDump<Burn>, const N: usize> ToDump<Burn> for [T; N] {
    fn to_dump(self) -> Value {
        Value::List(self.into_iter().map(ToDump::to_dump).collect())
    }
}

impl<Burn, T: ToDump<Burn>> ToDump<Burn> for Option<T> {
    fn to_dump(self) -> Value {
        self.map_or(Value::Null, ToDump::to_dump)
    }
}

impl ToDump for bool {
    fn to_dump(self) -> Value {
        Value::Bool(self)
    }
}

impl ToDump for String {
    fn to_dump(self) -> Value {
        Value::Str(self)
    }
}

impl ToDump for &str {
    fn to_dump(self) -> Value {
        Value::Str(self.to_owned())
    }
}

impl ToDump for () {
    fn to_dump(self) -> Value {
        Value::Null
    }
}

macro_rules! to_dump_int {
    ($($t:ty),*) => {$(
        impl ToDump for $t {
            fn to_dump(self) -> Value {
                // Integers beyond i64 (u64/u128/i128 only) become floats, as Python's JSON
                // reader would see them.
                i64::try_from(self).map_or(Value::Float(self as f64), Value::Int)
            }
        }
    )*};
}
to_dump_int!(
    i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, i128, u128
);

impl ToDump for f32 {
    fn to_dump(self) -> Value {
        Value::Float(f64::from(self))
    }
}

impl ToDump for f64 {
    fn to_dump(self) -> Value {
        Value::Float(self)
    }
}

macro_rules! to_dump_tuple {
    ($($name:ident $burn:ident),+) => {
        impl<$($name: ToDump<$burn>, $burn),+> ToDump<($($burn,)+)> for ($($name,)+) {
            #[allow(non_snake_case)]
            fn to_dump(self) -> Value {
                let ($($name,)+) = self;
                Value::List(vec![$($name.to_dump()),+])
            }
        }
    };
}
to_dump_tuple!(A MA);
to_dump_tuple!(A MA, B MB);
to_dump_tuple!(A MA, B MB, C MC);
to_dump_tuple!(A MA, B MB, C MC, D MD);
