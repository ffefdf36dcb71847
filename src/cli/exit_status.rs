//! How a subcommand ended, and the process exit code it maps to.

/// How a subcommand ended; the process exit code is its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Success (`check`: Allow; `validate`: every file valid).
    Success,
    /// `validate`: at least one file invalid; `serve`: could not start.
    Failure,
    /// Usage or configuration error.
    Usage,
    /// `check`: Deny.
    Denied,
    /// `check`: NoOpinion.
    NoOpinion,
}

impl ExitStatus {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Usage => 2,
            ExitStatus::Denied => 3,
            ExitStatus::NoOpinion => 4,
        }
    }
}
