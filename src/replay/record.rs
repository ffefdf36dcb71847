//! One recorded review, whatever log it came from: the review as the authorizer saw it, when it
//! was judged, what was answered then, and where it was read.

use crate::decision::Decision;
use crate::review::Review;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::fmt;
use std::sync::Arc;

/// Which kind of input a record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    /// warrant's own audit log (`--audit-log`): the decision is warrant's.
    Warrant,
    /// A kube-apiserver audit log (`audit.k8s.io/v1` events): the decision is the API server's
    /// (`authorization.k8s.io/decision`), all its authorizers together.
    ApiServer,
    /// A SubjectAccessReview JSON file: the decision is its status, if it has one.
    SubjectAccessReview,
}

impl Source {
    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Warrant => "warrant",
            Source::ApiServer => "apiServer",
            Source::SubjectAccessReview => "subjectAccessReview",
        }
    }
}

/// Where a record was read: the file and its 1-based line (the first line of a JSON document).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The file as named on the command line.
    pub file: Arc<str>,
    /// The line.
    pub line: u64,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One recorded review.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The review, as the authorizer saw it.
    pub review: Review,
    /// When it was judged, when the input says.
    pub at: Option<DateTime<Utc>>,
    /// What was answered then, when the input says.
    pub decision: Option<Decision>,
    /// Who decided then, when the input says (warrant's `decidedBy`).
    pub decided_by: Option<String>,
    /// The kind of input.
    pub source: Source,
    /// Where it was read.
    pub(crate) origin: Origin,
    /// Keys of the user's extra that the recorder left out (`--audit-redact-extra`): the replay
    /// cannot be exact for such a record.
    pub redacted: Vec<String>,
}

/// Why a line or document yielded no record, when that is expected and counted rather than an
/// error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Skip {
    /// An audit event of a stage other than ResponseStarted / ResponseComplete.
    Stage,
    /// An audit event whose auditID was already taken.
    Duplicate,
    /// An admission record of warrant's log (the validation ring is not replayed).
    Admission,
}

impl Skip {
    /// The phrase in text reports.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Skip::Stage => "audit events of other stages (RequestReceived, Panic)",
            Skip::Duplicate => "audit events of an auditID already replayed",
            Skip::Admission => "admission records",
        }
    }
}

/// What one input item yields.
#[derive(Debug)]
pub enum Item {
    /// A review to replay.
    Review(Box<Recorded>),
    /// Nothing to replay, for an expected reason.
    Skipped(Skip),
}
