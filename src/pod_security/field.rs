//! Field errors as OpenShift prints them.
//!
//! The admission plugin reports every problem as a `field.Error` of
//! `k8s.io/apimachinery/pkg/util/validation/field` (the version OpenShift vendors): a path, a
//! type (`Invalid value`, `Required value`, `Forbidden`), the offending value and a detail. A
//! path prints its first element as is, every later name after a dot and every index or key in
//! brackets (`path.go`, `String`); so the root `provider restricted-v2: ` followed by
//! `containers[0].runAsUser` reads `provider restricted-v2: .containers[0].runAsUser`. The value
//! prints as Go's `%v` for numbers and booleans, `%q` for strings, the string `"null"` for a nil
//! pointer and `%#v` for anything else (`errors.go`, `ErrorBody`); [`BadValue`] carries the
//! few shapes the constraint strategies report. A list of errors becomes one message by
//! dropping repeated texts and, when more than one is left, joining them with `", "` inside
//! brackets (`ToAggregate` and `k8s.io/apimachinery/pkg/util/errors`, `aggregate.Error`).

use std::fmt::{self, Write as _};

/// A field path: a root name followed by names, indexes and keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath(String);

impl FieldPath {
    /// A path starting at `root`, printed as is.
    pub fn root(root: impl Into<String>) -> Self {
        Self(root.into())
    }

    /// The path of a child named `name` (printed after a dot).
    #[must_use]
    pub fn child(&self, name: &str) -> Self {
        let mut text = String::with_capacity(self.0.len() + name.len() + 1);
        text.push_str(&self.0);
        if !name.is_empty() {
            text.push('.');
            text.push_str(name);
        }
        Self(text)
    }

    /// The path of the element `index` of a list (printed in brackets).
    #[must_use]
    pub fn index(&self, index: usize) -> Self {
        let mut text = self.0.clone();
        let _ = write!(text, "[{index}]");
        Self(text)
    }

    /// The path of the entry `key` of a map (printed in brackets).
    #[must_use]
    pub fn key(&self, key: &str) -> Self {
        Self(format!("{}[{key}]", self.0))
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What kind of problem a [`FieldError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// `Invalid value`: the value is not allowed.
    Invalid,
    /// `Required value`: the value must be set.
    Required,
    /// `Forbidden`: the field may not be used.
    Forbidden,
}

impl ErrorKind {
    fn text(self) -> &'static str {
        match self {
            Self::Invalid => "Invalid value",
            Self::Required => "Required value",
            Self::Forbidden => "Forbidden",
        }
    }
}

/// The offending value of an `Invalid value` error, in the shapes the strategies report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadValue {
    /// A nil pointer: Go prints the string `"null"`, quoted.
    Null,
    /// A number.
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// A string, quoted.
    Str(String),
    /// A list of ids (`[]int64`), `None` for a nil list.
    Ids(Option<Vec<i64>>),
    /// A list of capabilities (`[]core.Capability`), `None` for a nil list.
    Capabilities(Option<Vec<String>>),
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("\"null\""),
            Self::Int(value) => write!(f, "{value}"),
            Self::Bool(value) => write!(f, "{value}"),
            Self::Str(value) => write_go_quoted(f, value),
            Self::Ids(None) => f.write_str("[]int64(nil)"),
            Self::Ids(Some(ids)) => {
                f.write_str("[]int64{")?;
                for (i, id) in ids.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{id}")?;
                }
                f.write_str("}")
            }
            Self::Capabilities(None) => f.write_str("[]core.Capability(nil)"),
            Self::Capabilities(Some(caps)) => {
                f.write_str("[]core.Capability{")?;
                for (i, cap) in caps.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_go_quoted(f, cap)?;
                }
                f.write_str("}")
            }
        }
    }
}

/// Go's `%q` for the strings a pod carries: JSON's escaping is the same for printable text.
fn write_go_quoted(f: &mut fmt::Formatter<'_>, value: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in value.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            '\r' => f.write_str("\\r")?,
            c if c.is_control() => write!(f, "\\x{:02x}", u32::from(c))?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

/// One problem with one field of a pod, as OpenShift words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// Where.
    pub path: FieldPath,
    /// What kind of problem.
    pub kind: ErrorKind,
    /// The offending value (only printed for `Invalid value`).
    pub value: Option<BadValue>,
    /// Why, in words.
    pub detail: String,
}

impl FieldError {
    /// `Invalid value: <value>: <detail>`.
    pub fn invalid(path: FieldPath, value: BadValue, detail: impl Into<String>) -> Self {
        Self {
            path,
            kind: ErrorKind::Invalid,
            value: Some(value),
            detail: detail.into(),
        }
    }

    /// `Required value[: <detail>]`.
    pub fn required(path: FieldPath, detail: impl Into<String>) -> Self {
        Self {
            path,
            kind: ErrorKind::Required,
            value: None,
            detail: detail.into(),
        }
    }

    /// `Forbidden[: <detail>]`.
    pub fn forbidden(path: FieldPath, detail: impl Into<String>) -> Self {
        Self {
            path,
            kind: ErrorKind::Forbidden,
            value: None,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.kind.text())?;
        if let (ErrorKind::Invalid, Some(value)) = (self.kind, &self.value) {
            write!(f, ": {value}")?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// Several errors as one message: repeated texts dropped, one alone as is, more in brackets
/// joined by `", "`; empty for none.
pub fn aggregate(errors: &[FieldError]) -> String {
    let mut seen: Vec<String> = Vec::with_capacity(errors.len());
    for error in errors {
        let text = error.to_string();
        if !seen.contains(&text) {
            seen.push(text);
        }
    }
    match seen.len() {
        0 => String::new(),
        1 => seen.swap_remove(0),
        _ => format!("[{}]", seen.join(", ")),
    }
}
