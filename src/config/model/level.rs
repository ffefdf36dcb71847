//! [`Level`]: how much a protected target matters, the vocabulary the guard's settings and the
//! buffer's share.

use serde::Serialize;

/// How much a target matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Ordinary protected targets.
    Standard,
    /// Important targets (+20 risk).
    High,
    /// The most important targets (+40 risk).
    Critical,
}

impl Level {
    /// The spelling in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Standard => "standard",
            Level::High => "high",
            Level::Critical => "critical",
        }
    }

    /// Parses the file spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "standard" => Some(Level::Standard),
            "high" => Some(Level::High),
            "critical" => Some(Level::Critical),
            _ => None,
        }
    }

    /// The level a protection label's value reads as: a level's spelling in any ASCII case
    /// (`Critical`, `CRITICAL`); any other value reads as `standard` (the object is still
    /// protected, at the lowest level). The one rule for reading a label: the validation ring,
    /// the buffer's rescore and `warrant check` read through it, and the conditions
    /// kube-apiserver evaluates say the same in CEL ([`Level::cel_reads_as`]).
    pub fn of_label(value: &str) -> Self {
        Self::parse(&value.to_ascii_lowercase()).unwrap_or(Level::Standard)
    }

    /// A CEL expression, true when the string `value` (an expression) reads as this level by
    /// [`Level::of_label`]: compared in lower case (`lowerAscii()`, from the strings library
    /// kube-apiserver's CEL environments carry).
    pub fn cel_reads_as(self, value: &str) -> String {
        match self {
            Level::Standard => format!("!({value}.lowerAscii() in ['high', 'critical'])"),
            level => format!("{value}.lowerAscii() == '{}'", level.as_str()),
        }
    }
}
