//! A serde `Deserializer` that drives a type's own `Deserialize` impl without any input and
//! records what it asks for: struct names and field names (from `deserialize_struct`), options,
//! sequences, maps and scalars. The chain file's schema types (`warrant::config::schema`) are
//! walked this way, so the JSON Schema and the configuration reference follow the code and a
//! field added there without a description fails the reference test.
//!
//! `serde_saphyr::Spanned<T>` (every located value of the schema) is transparent: its
//! `Deserialize` asks for a newtype, then for `deserialize_any`, and reads `T` from the `value`
//! entry of a map whose first key is saphyr's private marker; the tracer answers that protocol.

use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

/// serde_saphyr's marker key for the located representation of `Spanned<T>` (private there; a
/// change shows up as a trace error in the reference test).
const SPANNED_MARKER: &str = "__serde_saphyr_private_spanned";

/// The shape of one value.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Shape {
    /// Not traced yet (a placeholder).
    #[default]
    Unknown,
    /// `true` / `false`.
    Bool,
    /// A non-negative integer.
    Unsigned,
    /// An integer.
    Integer,
    /// A number.
    Number,
    /// A string.
    String,
    /// An optional value.
    Option(Box<Shape>),
    /// A list.
    Seq(Box<Shape>),
    /// A map with string keys.
    Map(Box<Shape>),
    /// A struct, by its Rust name (its fields are in the [`Registry`]).
    Struct(&'static str),
}

impl Shape {
    /// The shape without its outer `Option`.
    pub fn required_form(&self) -> &Shape {
        match self {
            Shape::Option(inner) => inner.required_form(),
            other => other,
        }
    }
}

/// One field of a struct.
#[derive(Debug, Clone)]
pub struct Field {
    /// The name as written in the file.
    pub name: &'static str,
    /// Its shape.
    pub shape: Shape,
    /// Whether decoding fails without it.
    pub required: bool,
}

/// Every struct met, by Rust name, with its fields in declaration order.
#[derive(Debug, Default)]
pub struct Registry {
    /// Struct name -> fields.
    pub structs: BTreeMap<&'static str, Vec<Field>>,
    /// Struct names in the order they were first met (depth first from the root).
    pub order: Vec<&'static str>,
}

/// A tracing failure (a shape the tracer does not know how to drive).
#[derive(Debug)]
pub struct TraceError(String);

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TraceError {}

impl de::Error for TraceError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        TraceError(msg.to_string())
    }
}

type Out = Rc<RefCell<Shape>>;

#[derive(Clone)]
struct Ctx {
    registry: Rc<RefCell<Registry>>,
    /// `(struct, field)` left out of the input, to learn whether it is required.
    omit: Option<(&'static str, &'static str)>,
}

/// Traces `T` and every type it contains.
pub fn trace<T: de::DeserializeOwned>() -> Result<Registry, TraceError> {
    let ctx = Ctx {
        registry: Rc::new(RefCell::new(Registry::default())),
        omit: None,
    };
    let out: Out = Rc::new(RefCell::new(Shape::Unknown));
    T::deserialize(Tracer {
        ctx: ctx.clone(),
        out,
    })?;
    let mut registry = ctx.registry.take();
    // A field is required when decoding without it fails.
    let names: Vec<&'static str> = registry.order.clone();
    for name in names {
        let fields: Vec<&'static str> = registry.structs[name].iter().map(|f| f.name).collect();
        for field in fields {
            let probe = Ctx {
                registry: Rc::new(RefCell::new(Registry::default())),
                omit: Some((name, field)),
            };
            let result = T::deserialize(Tracer {
                ctx: probe,
                out: Rc::new(RefCell::new(Shape::Unknown)),
            });
            let required = match result {
                Ok(_) => false,
                Err(e) if e.0.contains("missing field") => true,
                Err(e) => return Err(e),
            };
            if let Some(f) = registry
                .structs
                .get_mut(name)
                .and_then(|fs| fs.iter_mut().find(|f| f.name == field))
            {
                f.required = required;
            }
        }
    }
    Ok(registry)
}

struct Tracer {
    ctx: Ctx,
    out: Out,
}

impl Tracer {
    fn set(&self, shape: Shape) {
        *self.out.borrow_mut() = shape;
    }
}

macro_rules! scalar {
    ($($method:ident => $shape:expr, $visit:ident($($value:expr)?);)*) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
            self.set($shape);
            visitor.$visit($($value)?)
        })*
    };
}

impl<'de> de::Deserializer<'de> for Tracer {
    type Error = TraceError;

    scalar! {
        deserialize_bool => Shape::Bool, visit_bool(false);
        deserialize_u8 => Shape::Unsigned, visit_u64(0);
        deserialize_u16 => Shape::Unsigned, visit_u64(0);
        deserialize_u32 => Shape::Unsigned, visit_u64(0);
        deserialize_u64 => Shape::Unsigned, visit_u64(0);
        deserialize_i8 => Shape::Integer, visit_i64(0);
        deserialize_i16 => Shape::Integer, visit_i64(0);
        deserialize_i32 => Shape::Integer, visit_i64(0);
        deserialize_i64 => Shape::Integer, visit_i64(0);
        deserialize_f32 => Shape::Number, visit_f64(0.0);
        deserialize_f64 => Shape::Number, visit_f64(0.0);
        deserialize_char => Shape::String, visit_char('a');
        deserialize_str => Shape::String, visit_str("");
        deserialize_string => Shape::String, visit_str("");
        deserialize_identifier => Shape::String, visit_str("");
        deserialize_unit => Shape::Unknown, visit_unit();
        deserialize_ignored_any => Shape::Unknown, visit_unit();
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
        // Only `Spanned<T>` asks for "anything": answer with its located representation.
        visitor.visit_map(SpannedMap {
            tracer: Some(self),
            state: 0,
        })
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
        let inner: Out = Rc::new(RefCell::new(Shape::Unknown));
        let value = visitor.visit_some(Tracer {
            ctx: self.ctx.clone(),
            out: inner.clone(),
        })?;
        self.set(Shape::Option(Box::new(inner.take())));
        Ok(value)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
        let element: Out = Rc::new(RefCell::new(Shape::Unknown));
        let value = visitor.visit_seq(OneElement {
            tracer: Some(Tracer {
                ctx: self.ctx.clone(),
                out: element.clone(),
            }),
        })?;
        self.set(Shape::Seq(Box::new(element.take())));
        Ok(value)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, TraceError> {
        let element: Out = Rc::new(RefCell::new(Shape::Unknown));
        let value = visitor.visit_map(OneEntry {
            tracer: Some(Tracer {
                ctx: self.ctx.clone(),
                out: element.clone(),
            }),
            key_given: false,
        })?;
        self.set(Shape::Map(Box::new(element.take())));
        Ok(value)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        let first = {
            let mut r = self.ctx.registry.borrow_mut();
            if r.structs.contains_key(name) {
                false
            } else {
                r.structs.insert(name, Vec::new());
                r.order.push(name);
                true
            }
        };
        let seen: Rc<RefCell<Vec<Field>>> = Rc::default();
        let value = visitor.visit_map(StructFields {
            ctx: self.ctx.clone(),
            name,
            fields,
            next: 0,
            seen: seen.clone(),
        })?;
        if first {
            self.ctx
                .registry
                .borrow_mut()
                .structs
                .insert(name, seen.take());
        }
        self.set(Shape::Struct(name));
        Ok(value)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, _: V) -> Result<V::Value, TraceError> {
        Err(TraceError("bytes are not traced".into()))
    }
    fn deserialize_byte_buf<V: Visitor<'de>>(self, _: V) -> Result<V::Value, TraceError> {
        Err(TraceError("bytes are not traced".into()))
    }
    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, TraceError> {
        visitor.visit_unit()
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, TraceError> {
        Err(TraceError("tuples are not traced".into()))
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        _: V,
    ) -> Result<V::Value, TraceError> {
        Err(TraceError("tuple structs are not traced".into()))
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, TraceError> {
        Err(TraceError(format!("enum {name} is not traced")))
    }
}

/// The fields of one struct, each once, in declaration order.
struct StructFields {
    ctx: Ctx,
    name: &'static str,
    fields: &'static [&'static str],
    next: usize,
    seen: Rc<RefCell<Vec<Field>>>,
}

impl<'de> MapAccess<'de> for StructFields {
    type Error = TraceError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, TraceError> {
        while let Some(field) = self.fields.get(self.next) {
            self.next += 1;
            if self.ctx.omit == Some((self.name, field)) {
                continue;
            }
            return seed
                .deserialize(de::value::BorrowedStrDeserializer::new(field))
                .map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, TraceError> {
        let field = self.fields[self.next - 1];
        let out: Out = Rc::new(RefCell::new(Shape::Unknown));
        let value = seed.deserialize(Tracer {
            ctx: self.ctx.clone(),
            out: out.clone(),
        })?;
        self.seen.borrow_mut().push(Field {
            name: field,
            shape: out.take(),
            required: false,
        });
        Ok(value)
    }
}

/// A sequence of one element.
struct OneElement {
    tracer: Option<Tracer>,
}

impl<'de> SeqAccess<'de> for OneElement {
    type Error = TraceError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, TraceError> {
        match self.tracer.take() {
            Some(t) => seed.deserialize(t).map(Some),
            None => Ok(None),
        }
    }
}

/// A map of one entry, key `key`.
struct OneEntry {
    tracer: Option<Tracer>,
    key_given: bool,
}

impl<'de> MapAccess<'de> for OneEntry {
    type Error = TraceError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, TraceError> {
        if self.key_given {
            return Ok(None);
        }
        self.key_given = true;
        seed.deserialize(de::value::BorrowedStrDeserializer::new("key"))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, TraceError> {
        let t = self
            .tracer
            .take()
            .ok_or_else(|| TraceError("map value asked twice".into()))?;
        seed.deserialize(t)
    }
}

/// `Spanned<T>`'s located representation: the marker, `value` (traced as `T`, into the same
/// shape slot), `referenced` and `defined` (a dummy location).
struct SpannedMap {
    tracer: Option<Tracer>,
    state: u8,
}

impl<'de> MapAccess<'de> for SpannedMap {
    type Error = TraceError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, TraceError> {
        let key = match self.state {
            0 => SPANNED_MARKER,
            1 => "value",
            2 => "referenced",
            3 => "defined",
            _ => return Ok(None),
        };
        self.state += 1;
        seed.deserialize(de::value::BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, TraceError> {
        match self.state {
            1 => seed.deserialize(().into_deserializer()),
            2 => {
                let t = self
                    .tracer
                    .take()
                    .ok_or_else(|| TraceError("spanned value asked twice".into()))?;
                seed.deserialize(t)
            }
            _ => seed
                .deserialize(serde_json::json!({"line": 1, "column": 1}))
                .map_err(|e| TraceError(e.to_string())),
        }
    }
}
