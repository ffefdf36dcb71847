//! The admission side of the offline tools: an object read from a file (YAML or JSON) and the
//! [`ObjectContext`] `warrant check --object` and `warrant test` judge it in, against saved
//! cluster state (`--cluster-state DIR`) or an empty cluster.

use crate::cluster::constraints::ConstraintCache;
use crate::object::{ClusterView, EmptyCluster, ObjectContext, Operation, Subject};
use crate::pod_admission::offline::{self, Grants};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

/// Why an object or the saved cluster state cannot be used.
#[derive(Debug, Error)]
pub enum ObjectInputError {
    /// The object file cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The object file is not YAML or JSON.
    #[error("{}: not a YAML or JSON object: {message}", path.display())]
    Decode {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// The document is not a Kubernetes object (a mapping with `metadata`).
    #[error("{}: not a Kubernetes object (a mapping with metadata)", path.display())]
    NotAnObject {
        /// The file.
        path: PathBuf,
    },
    /// The verb is not one admission judges.
    #[error("--object judges an admission request: the verb must be delete or update, not {0:?}")]
    Verb(String),
    /// An update needs the stored object too.
    #[error("an update needs --old-object (the stored object) besides --object (the new one)")]
    NoOldObject,
    /// The saved cluster state cannot be loaded.
    #[error("--cluster-state {}: {message}", path.display())]
    ClusterState {
        /// The directory.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// No `SecurityContextConstraints` to judge a pod against.
    #[error(
        "no SecurityContextConstraints in {0}: give --constraints (deploy/pod-security.yaml holds the default set)"
    )]
    NoConstraints(String),
    /// A `use` grant cannot be read.
    #[error(transparent)]
    Grant(#[from] crate::pod_admission::offline::OfflineError),
}

/// Reads one object from a YAML or JSON file.
pub(crate) fn read_object(path: &Path) -> Result<Subject, ObjectInputError> {
    let text = std::fs::read_to_string(path).map_err(|source| ObjectInputError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let value: serde_json::Value =
        serde_saphyr::from_str(&text).map_err(|e| ObjectInputError::Decode {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    object(value).ok_or_else(|| ObjectInputError::NotAnObject {
        path: path.to_path_buf(),
    })
}

/// A JSON value as an object, when it is a mapping with `metadata`.
pub fn object(value: serde_json::Value) -> Option<Subject> {
    value
        .get("metadata")
        .is_some_and(serde_json::Value::is_object)
        .then(|| Subject::new(value))
}

/// The cluster an offline judgement sees: the saved state in `dir`, or an empty cluster.
pub(crate) fn cluster_view(dir: Option<&Path>) -> Result<Arc<dyn ClusterView>, ObjectInputError> {
    match dir {
        None => Ok(Arc::new(EmptyCluster)),
        Some(dir) => match crate::cluster::FileView::load(dir) {
            Ok(view) => Ok(Arc::new(view)),
            Err(e) => Err(ObjectInputError::ClusterState {
                path: dir.to_path_buf(),
                message: e.to_string(),
            }),
        },
    }
}

/// Pod security over saved files: the constraints of `constraints` (else of `state`), the
/// namespaces of `state`, and `use` answered by `grants` (`WHO=CONSTRAINT`).
pub(crate) fn pod_security(
    state: Option<&Path>,
    constraints: Option<&Path>,
    grants: &[String],
) -> Result<crate::pod_admission::PodSecurity, ObjectInputError> {
    use crate::cluster::FileView;
    let load = |dir: &Path| {
        FileView::load(dir).map_err(|e| ObjectInputError::ClusterState {
            path: dir.to_path_buf(),
            message: e.to_string(),
        })
    };
    let state = state.map(load).transpose()?.unwrap_or_default();
    let separate = constraints.map(load).transpose()?;
    let found = separate.as_ref().unwrap_or(&state).constraints().to_vec();
    if found.is_empty() {
        let place = match (constraints, separate.is_some()) {
            (Some(p), true) => p.display().to_string(),
            _ => "the cluster state".to_owned(),
        };
        return Err(ObjectInputError::NoConstraints(place));
    }
    let grants = Grants::parse(grants.iter().map(String::as_str))?;
    let cache = ConstraintCache::listed(found, state.namespaces().to_vec());
    Ok(offline::offline(cache, grants))
}

/// The admission context of `verb` on `object` (for a delete: the stored object; for an
/// update: the new one, with `old_object` the stored one).
pub fn context(
    verb: &str,
    object: Subject,
    old_object: Option<Subject>,
    dry_run: bool,
    view: Arc<dyn ClusterView>,
) -> Result<ObjectContext, ObjectInputError> {
    let (operation, object, old_object) = match verb {
        "delete" => (Operation::Delete, None, Some(object)),
        "update" => match old_object {
            Some(old) => (Operation::Update, Some(object), Some(old)),
            None => return Err(ObjectInputError::NoOldObject),
        },
        other => return Err(ObjectInputError::Verb(other.to_owned())),
    };
    Ok(ObjectContext {
        operation,
        object,
        old_object,
        dry_run,
        view,
    })
}
