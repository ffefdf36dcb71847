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
}
