//! How pod security admission runs: whether it enforces or only observes, and what it does when
//! it cannot judge (the constraint cache not listed, or failing).

use crate::config::Mode;

/// What happens when pod security admission cannot judge a pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnUnavailable {
    /// Refuse the pod, saying why (the default: never fail open by accident).
    #[default]
    Fail,
    /// Admit the pod, with a warning saying it was not judged.
    Ignore,
}

impl OnUnavailable {
    /// Parses `Fail` or `Ignore`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "Fail" => Some(Self::Fail),
            "Ignore" => Some(Self::Ignore),
            _ => None,
        }
    }
}

/// The settings of pod security admission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PodSecuritySettings {
    /// `Enforce` refuses and patches; `Observe` admits unchanged and records what it would have
    /// refused (a warning and an audit annotation).
    pub mode: Mode,
    /// What happens when the cache cannot answer.
    pub on_unavailable: OnUnavailable,
}
