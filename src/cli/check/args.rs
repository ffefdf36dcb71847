//! The arguments of `warrant check`, as clap parses them.

use std::path::PathBuf;

/// Output format of `warrant check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// Human-readable answer and trace.
    Text,
    /// `{"allowed", "denied", "reason", "code", "evaluationError", "trace"}`.
    Json,
}

/// Arguments of `warrant check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The verb (`get`, `delete`, ...; for a non-resource path, the lower-case HTTP method).
    #[arg(value_name = "VERB")]
    pub verb: Option<String>,
    /// `RESOURCE[.GROUP][/NAME]`, or a non-resource path starting with `/`.
    #[arg(value_name = "RESOURCE")]
    pub resource: Option<String>,
    /// Namespace of the resource.
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// Subresource (`status`, `log`, ...).
    #[arg(long)]
    pub subresource: Option<String>,
    /// The user asking.
    #[arg(long = "as", value_name = "USER")]
    pub(crate) as_user: Option<String>,
    /// A group of the user (repeatable).
    #[arg(long = "as-group", value_name = "GROUP")]
    pub(crate) as_group: Vec<String>,
    /// The user's UID.
    #[arg(long = "as-uid", value_name = "UID")]
    pub(crate) as_uid: Option<String>,
    /// An extra attribute `KEY=VALUE` (repeatable; repeated keys collect values).
    #[arg(long = "extra", value_name = "KEY=VALUE")]
    pub extra: Vec<String>,
    /// Evaluation time (RFC 3339), for time-aware rules; default now.
    #[arg(long, value_name = "RFC3339")]
    pub at: Option<String>,
    /// Configuration file; default `authz-config/warrant.yaml` or the embedded copy.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A SubjectAccessReview JSON file instead of the flags.
    #[arg(short = 'f', long = "filename", value_name = "REVIEW.json")]
    pub file: Option<PathBuf>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Text)]
    pub output: Output,
    /// Judge an admission request instead (the validation ring): the object deleted, or for an
    /// update the new object (YAML or JSON).
    #[arg(long, value_name = "FILE")]
    pub object: Option<PathBuf>,
    /// For an update judged with `--object`: the stored object.
    #[arg(long, value_name = "FILE", requires = "object")]
    pub(crate) old_object: Option<PathBuf>,
    /// Saved cluster state for `--object` or `--pod`: a directory of YAML/JSON objects (pods,
    /// ReplicaSets, Services, Ingresses, PersistentVolumeClaims, Namespaces; for `--pod` also
    /// SecurityContextConstraints). Without it the cluster is empty.
    #[arg(long, value_name = "DIR")]
    pub(crate) cluster_state: Option<PathBuf>,
    /// Judge the creation of this pod (YAML or JSON) by pod security instead: the constraint
    /// chosen and its patch, or every constraint's reason. The requester is `--as` and
    /// `--as-group`, the namespace `-n` (default: the pod's, else `default`).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["verb", "resource", "file", "object", "conditions"])]
    pub pod: Option<PathBuf>,
    /// With `--pod`: the SecurityContextConstraints, a file or directory of them (for example
    /// deploy/pod-security.yaml); default: those in `--cluster-state`.
    #[arg(long, value_name = "PATH", requires = "pod")]
    pub(crate) constraints: Option<PathBuf>,
    /// With `--pod`: who may use which constraint (the API server's `use` answers), as
    /// `WHO=CONSTRAINT` (a user, `system:serviceaccount:NS:NAME` or `group:NAME`; a name or `*`;
    /// repeatable). Constraints listing a subject in `users`/`groups` need no grant.
    #[arg(long = "can-use", value_name = "WHO=CONSTRAINT", requires = "pod")]
    pub(crate) can_use: Vec<String>,
    /// With `--object`: the request is a dry run.
    #[arg(long, requires = "object")]
    pub dry_run: bool,
    /// Ask as a Kubernetes 1.38 API server with conditional authorization does
    /// (`authorizationOptions` with Allow, ConditionsMap, Deny, NoOpinion and Union; a v1
    /// review file carrying them does the same) and print the conditions of a conditional
    /// answer. With `--object` (and `--old-object`), evaluate them as the API server's enforcer
    /// round trip would, instead of judging with the validation ring. Differences from the API
    /// server: the admission request is made from the flags (fixed uid, `kind` from the
    /// object, no `requestKind`, `options` or `namespaceObject`), the object is used as
    /// written (no conversion or defaulting), and nothing is cached.
    #[arg(long, verbatim_doc_comment)]
    pub conditions: bool,
}
