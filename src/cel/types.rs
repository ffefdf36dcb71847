//! The static types the checker reasons with: CEL's own, plus the declared object types of the
//! review (`kubernetes.SubjectAccessReviewSpec` and its parts). Names print as cel-go prints
//! them, so that messages read like kube-apiserver's.

use std::fmt;

/// A declared object type: a name and its fields. Field order is the declaration order.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ObjectType {
    /// The fully qualified name, as cel-go prints it.
    pub name: &'static str,
    /// The fields and their types.
    pub fields: &'static [(&'static str, FieldTy)],
}

/// The type of a declared field; a `const`-friendly subset of [`Ty`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FieldTy {
    /// `string`.
    String,
    /// `list(string)`.
    StringList,
    /// `map(string, list(string))`.
    StringListMap,
    /// An object.
    Object(&'static ObjectType),
    /// `list(object)`.
    ObjectList(&'static ObjectType),
}

impl ObjectType {
    /// The type of field `name`, if declared.
    pub fn field(&self, name: &str) -> Option<Ty> {
        let (_, t) = self.fields.iter().find(|(n, _)| *n == name)?;
        Some(match t {
            FieldTy::String => Ty::String,
            FieldTy::StringList => Ty::list(Ty::String),
            FieldTy::StringListMap => Ty::map(Ty::String, Ty::list(Ty::String)),
            FieldTy::Object(o) => Ty::Object(o),
            FieldTy::ObjectList(o) => Ty::list(Ty::Object(o)),
        })
    }
}

/// A CEL type as the checker sees it. `Dyn` is "not known until run time" and is compatible
/// with everything, so that dynamic values never make a valid expression fail to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ty {
    /// Unknown until run time.
    Dyn,
    /// `null_type`.
    Null,
    /// `bool`.
    Bool,
    /// `int`.
    Int,
    /// `uint`.
    Uint,
    /// `double`.
    Double,
    /// `string`.
    String,
    /// `bytes`.
    Bytes,
    /// `google.protobuf.Timestamp`.
    Timestamp,
    /// `google.protobuf.Duration`.
    Duration,
    /// `list(T)`.
    List(Box<Ty>),
    /// `map(K, V)`.
    Map(Box<Ty>, Box<Ty>),
    /// `optional_type(T)`.
    Optional(Box<Ty>),
    /// A type value, as `type(x)` gives.
    Type,
    /// A declared object type.
    Object(&'static ObjectType),
}

impl Ty {
    /// `list(t)`.
    pub fn list(t: Ty) -> Ty {
        Ty::List(Box::new(t))
    }

    /// `map(k, v)`.
    pub fn map(k: Ty, v: Ty) -> Ty {
        Ty::Map(Box::new(k), Box::new(v))
    }

    /// `optional_type(t)`.
    pub fn optional(t: Ty) -> Ty {
        Ty::Optional(Box::new(t))
    }

    /// Whether the type is `dyn`.
    pub(crate) fn is_dyn(&self) -> bool {
        matches!(self, Ty::Dyn)
    }

    /// Whether a value of type `other` can stand where `self` is expected (or the reverse):
    /// equal types, or either side dynamic, recursively.
    pub(crate) fn compatible(&self, other: &Ty) -> bool {
        match (self, other) {
            (Ty::Dyn, _) | (_, Ty::Dyn) => true,
            (Ty::List(a), Ty::List(b)) | (Ty::Optional(a), Ty::Optional(b)) => a.compatible(b),
            (Ty::Map(ka, va), Ty::Map(kb, vb)) => ka.compatible(kb) && va.compatible(vb),
            (Ty::Object(a), Ty::Object(b)) => a.name == b.name,
            (a, b) => a == b,
        }
    }

    /// The more precise of two compatible types (`dyn` yields to anything).
    pub fn join(&self, other: &Ty) -> Ty {
        match (self, other) {
            (Ty::Dyn, t) | (t, Ty::Dyn) => t.clone(),
            (Ty::List(a), Ty::List(b)) => Ty::list(a.join(b)),
            (Ty::Optional(a), Ty::Optional(b)) => Ty::optional(a.join(b)),
            (Ty::Map(ka, va), Ty::Map(kb, vb)) => Ty::map(ka.join(kb), va.join(vb)),
            (a, _) => a.clone(),
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Dyn => f.write_str("dyn"),
            Ty::Null => f.write_str("null_type"),
            Ty::Bool => f.write_str("bool"),
            Ty::Int => f.write_str("int"),
            Ty::Uint => f.write_str("uint"),
            Ty::Double => f.write_str("double"),
            Ty::String => f.write_str("string"),
            Ty::Bytes => f.write_str("bytes"),
            Ty::Timestamp => f.write_str("google.protobuf.Timestamp"),
            Ty::Duration => f.write_str("google.protobuf.Duration"),
            Ty::List(t) => write!(f, "list({t})"),
            Ty::Map(k, v) => write!(f, "map({k}, {v})"),
            Ty::Optional(t) => write!(f, "optional_type({t})"),
            Ty::Type => f.write_str("type"),
            Ty::Object(o) => f.write_str(o.name),
        }
    }
}
