//! [`Mode`]: whether an authorizer (or a single policy rule) decides or only records what it
//! would have decided. Shadow mode is how a policy is rolled out: it runs on real traffic, its
//! would-be answers are counted and audited, and the rest of the chain answers meanwhile.

use serde::Serialize;

/// `Enforce` decides; `Observe` evaluates and records the would-be answer, then stands aside
/// (an authorizer answers NoOpinion, a rule is skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
pub enum Mode {
    /// Its answers are answers (the default).
    #[default]
    Enforce,
    /// Shadow mode: evaluated, recorded as `wouldHave`, never the answer.
    Observe,
}

impl Mode {
    /// Every mode, in the order `Unsupported value` lists them.
    pub const ALL: [Mode; 2] = [Mode::Enforce, Mode::Observe];

    /// The spelling in files, metric labels and audit records.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Enforce => "Enforce",
            Mode::Observe => "Observe",
        }
    }

    /// Parses the file spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// Whether this is shadow mode.
    pub(crate) fn is_observe(self) -> bool {
        self == Mode::Observe
    }
}
