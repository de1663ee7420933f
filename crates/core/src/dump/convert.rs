//! Custom converters for user types, keyed by exact type, applied until nothing changes.

use std::any::{Any, TypeId};
use std::collections::HashMap;

use super::error::DumpError;
use super::value::{Map, Opaque, ToDump, Value};

/// Passes after which a converter chain counts as a loop (the original loops forever).
const MAX_PASSES: usize = 1000;

type Converter = Box<dyn Fn(Box<dyn Any + Send>) -> Result<Value, DumpError> + Send>;

/// The registry: type → converter.
#[derive(Default)]
#[doc(hidden)]
pub struct Converters(HashMap<TypeId, Converter>);

impl Converters {
    /// Registers, or replaces, the converter for values of type `T` (wrapped by
    /// [`Value::opaque`]).
    pub fn register<T, V, F, Burn>(&mut self, convert: F)
    where
        T: Any + Send,
        V: ToDump<Burn>,
        F: Fn(T) -> V + Send + 'static,
    {
        self.register_fallible(move |value: T| Ok(convert(value).to_dump()));
    }

    /// [`Self::register`] for a converter that can fail.
    pub fn register_fallible<T, F>(&mut self, convert: F)
    where
        T: Any + Send,
        F: Fn(T) -> Result<Value, DumpError> + Send + 'static,
    {
        let converter: Converter = Box::new(move |value| match value.downcast::<T>() {
            Ok(value) => convert(*value),
            // Unreachable: the registry is keyed by the type id of `T`.
            Err(value) => Ok(Value::Opaque(Opaque {
                type_id: TypeId::of::<T>(),
                type_name: std::any::type_name::<T>(),
                value,
            })),
        });
        self.0.insert(TypeId::of::<T>(), converter);
    }

    /// Converts every opaque value with a registered converter, pass after pass, until a pass
    /// converts nothing. An opaque value left over is an error.
    pub fn apply(&self, mut value: Value) -> Result<Value, DumpError> {
        for _ in 0..MAX_PASSES {
            let mut converted = false;
            value = self.pass(value, &mut converted)?;
            if !converted {
                return match find_opaque(&value) {
                    Some(name) => Err(DumpError::NoConverter(name.to_owned())),
                    None => Ok(value),
                };
            }
        }
        Err(DumpError::ConverterLoop(MAX_PASSES))
    }

    fn pass(&self, value: Value, converted: &mut bool) -> Result<Value, DumpError> {
        Ok(match value {
            Value::Map(Map(entries)) => Value::Map(Map(entries
                .into_iter()
                .map(|(k, v)| Ok((k, self.pass(v, converted)?)))
                .collect::<Result<_, DumpError>>()?)),
            Value::List(items) => Value::List(
                items
                    .into_iter()
                    .map(|v| self.pass(v, converted))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Opaque(opaque) => match self.0.get(&opaque.type_id) {
                Some(convert) => {
                    *converted = true;
                    convert(opaque.value)?
                }
                None => Value::Opaque(opaque),
            },
            other => other,
        })
    }
}

fn find_opaque(value: &Value) -> Option<&'static str> {
    match value {
        Value::Opaque(opaque) => Some(opaque.type_name),
        Value::Map(Map(entries)) => entries.iter().find_map(|(_, v)| find_opaque(v)),
        Value::List(items) => items.iter().find_map(find_opaque),
        _ => None,
    }
}

/// Drops map entries whose key is in `exclude`, at any depth of nested maps; lists are not
/// entered (as in the original).
pub(crate) fn exclude(value: Value, exclude: &[String]) -> Value {
    match value {
        Value::Map(Map(entries)) => Value::Map(Map(entries
            .into_iter()
            .filter(|(k, _)| !exclude.contains(k))
            .map(|(k, v)| (k, self::exclude(v, exclude)))
            .collect())),
        other => other,
    }
}
