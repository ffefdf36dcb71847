//! SubjectAccessReview JSON files (`authorization.k8s.io/v1` or `v1beta1`), one review per file
//! or per line, as `warrant check -f` reads them. The status, when the file has one, is the
//! recorded answer: `allowed` is Allow, `denied` Deny, neither NoOpinion.

use super::read_error::ReadError;
use super::record::{Item, Origin, Recorded, Source};
use crate::decision::Decision;
use crate::review;

/// Whether a JSON object looks like a SubjectAccessReview.
pub(crate) fn looks_like(v: &serde_json::Value) -> bool {
    v.get("kind").and_then(|k| k.as_str()) == Some("SubjectAccessReview")
}

/// One review document.
pub fn read(bytes: &[u8], origin: Origin) -> Result<Item, ReadError> {
    let review = review::decode(bytes)?;
    let value: serde_json::Value = serde_json::from_slice(bytes)?;
    let decision = value.get("status").filter(|s| s.is_object()).map(|s| {
        let set = |k: &str| s.get(k).and_then(|v| v.as_bool()) == Some(true);
        if set("allowed") {
            Decision::Allow
        } else if set("denied") {
            Decision::Deny
        } else {
            Decision::NoOpinion
        }
    });
    Ok(Item::Review(Box::new(Recorded {
        review,
        at: None,
        decision,
        decided_by: None,
        source: Source::SubjectAccessReview,
        origin,
        redacted: Vec::new(),
    })))
}
