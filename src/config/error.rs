//! Configuration errors: each one names the file, the YAML line and the field path, with
//! upstream's `field.Error` wording (`Required value`, `Invalid value: "x": ...`).

use std::fmt;
use std::sync::Arc;
use thiserror::Error;

/// What is wrong, worded as upstream's `k8s.io/apimachinery/pkg/util/validation/field` errors.
#[derive(Debug, Clone)]
pub enum ErrorKind {
    /// A required field is missing or empty.
    Required(Option<String>),
    /// A value breaks a rule.
    Invalid {
        /// The value as written.
        value: String,
        /// The rule it breaks.
        detail: String,
    },
    /// A value that must be unique is repeated.
    Duplicate(String),
    /// A value is not one of the supported ones.
    NotSupported {
        /// The value as written.
        value: String,
        /// What is supported.
        supported: Vec<&'static str>,
        /// Why, when there is more to say than the list.
        detail: Option<String>,
    },
    /// A list is longer than allowed.
    TooMany {
        /// Its length.
        actual: usize,
        /// The most allowed.
        max: usize,
    },
    /// A field may not be set here.
    Forbidden(String),
    /// The YAML does not decode into the schema (unknown field, wrong type, syntax).
    Decode(String),
    /// The file cannot be read. (Held in an `Arc` so that the kind stays `Clone`; two kinds
    /// compare equal when their texts do.)
    Read(Arc<std::io::Error>),
}

/// Kinds compare by variant and rendered text: an `io::Error` has no equality of its own.
impl PartialEq for ErrorKind {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl Eq for ErrorKind {}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Required(None) => f.write_str("Required value"),
            ErrorKind::Required(Some(d)) => write!(f, "Required value: {d}"),
            ErrorKind::Invalid { value, detail } => write!(f, "Invalid value: {value:?}: {detail}"),
            ErrorKind::Duplicate(v) => write!(f, "Duplicate value: {v:?}"),
            ErrorKind::NotSupported {
                value,
                supported,
                detail,
            } => {
                write!(f, "Unsupported value: {value:?}: supported values: ")?;
                for (i, s) in supported.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{s:?}")?;
                }
                if let Some(d) = detail {
                    write!(f, " ({d})")?;
                }
                Ok(())
            }
            ErrorKind::TooMany { actual, max } => {
                write!(f, "Too many: {actual}: must have at most {max} items")
            }
            ErrorKind::Forbidden(d) => write!(f, "Forbidden: {d}"),
            ErrorKind::Decode(d) => f.write_str(d),
            ErrorKind::Read(d) => write!(f, "cannot read file: {d}"),
        }
    }
}

/// One configuration error, located.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub struct ConfigError {
    /// The file, as given.
    pub file: Arc<str>,
    /// 1-based line, or 0 when unknown.
    pub line: u32,
    /// The field path (`authorizers[0].name`), or "" for the whole file.
    pub path: String,
    /// What is wrong.
    pub kind: ErrorKind,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        f.write_str(": ")?;
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        write!(f, "{}", self.kind)
    }
}

/// A configuration warning, located: the file is valid, but something in it is likely not
/// what its author meant. `FILE:LINE: path: warning: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigWarning {
    /// The file, as given.
    pub file: Arc<str>,
    /// 1-based line.
    pub line: u32,
    /// The field path.
    pub path: String,
    /// What is likely wrong.
    pub message: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: warning: {}",
            self.file, self.line, self.path, self.message
        )
    }
}

/// A non-empty list of configuration errors, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub struct ConfigErrors {
    first: Box<ConfigError>,
    rest: Vec<ConfigError>,
}

impl ConfigErrors {
    /// Wraps a list; `None` when it is empty.
    pub(crate) fn from_vec(mut errors: Vec<ConfigError>) -> Option<Self> {
        if errors.is_empty() {
            return None;
        }
        errors.sort_by_key(|e| e.line);
        let first = Box::new(errors.remove(0));
        Some(Self {
            first,
            rest: errors,
        })
    }

    /// One error.
    pub fn one(error: ConfigError) -> Self {
        Self {
            first: Box::new(error),
            rest: Vec::new(),
        }
    }

    /// Every error, in line order.
    pub fn iter(&self) -> impl Iterator<Item = &ConfigError> {
        std::iter::once(&*self.first).chain(self.rest.iter())
    }

    /// How many errors there are (at least one).
    pub fn len(&self) -> usize {
        1 + self.rest.len()
    }

    /// Always false: the list is never empty. Present for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        false
    }
}

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}
