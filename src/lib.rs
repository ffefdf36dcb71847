//! warrant: an external authorization webhook for Kubernetes.
//!
//! kube-apiserver POSTs a `SubjectAccessReview` to warrant; warrant runs an ordered chain of
//! authorizers with the API server's own union semantics and answers allow, deny or no opinion,
//! with a reason that names the authorizer and rule that decided.
//!
//! The crate is layered; each layer imports only from those below it (`.ci/run` checks the
//! module graph for cycles, `tests/modules/check.sh`; `docs/architecture.md` is the long form):
//!
//! 1. vocabulary: [`names`] (checked identifiers), [`decision`] (`Decision`, `Reason`, `Verdict`
//!    with an opaque type-owned detail), [`review`] (the SubjectAccessReview wire, v1 and
//!    v1beta1), [`object`] (the validation ring's object, admission context and cluster view),
//!    [`admission`] (the `AdmissionReview` wire, v1), [`tickets`] (the `DeletionTicket`
//!    resource and the rules of its writes), [`clock`] (the injected clock) and
//!    [`file_watch`] (debounced file watching);
//! 2. [`cel`]: the only module that touches the CEL engine;
//! 3. [`config`]: bytes to a validated model, every file schema and model included (the
//!    deletion guard's too); it builds nothing and imports no runtime module;
//! 4. [`authorizer`]: the contract, the chain, the metric families each entry resolves its
//!    series from at build, and one module per type (`Policy`, `webhook`, `deletion_guard`,
//!    `AlwaysAllow`/`AlwaysDeny`);
//! 5. [`telemetry`] (registry, audit records, logging: records and never decides),
//!    [`reload`] (the live chain, its atomic swap and reload gate), [`leader`] (leader election
//!    on a Lease), [`replay`] (recorded
//!    traffic judged again by a candidate chain) and [`cluster`] (the `kube` client, the
//!    metadata cache of watches behind `object::ClusterView`, and its file-backed twin);
//! 6. [`buffer`]: the buffer ring's cool-down controller (finalizers, holds, notifications),
//!    started by `serve`; [`defense`]: the deletion defense's map of every ring's code, the
//!    validation ring's decision with its typed follow-ups, and the component that performs
//!    them; [`namespace_ranges`]: pod security's namespace range allocator, on the leader;
//! 7. [`server`] (HTTPS, TLS, caller authentication; knows no rules) and [`cli`] (one file per
//!    subcommand). `main.rs` only parses and dispatches.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod admission;
pub mod authorizer;
pub mod buffer;
pub mod cel;
pub mod cli;
pub mod clock;
pub mod cluster;
pub mod config;
pub mod decision;
pub mod defense;
pub mod file_watch;
pub mod leader;
pub mod names;
pub mod namespace_ranges;
pub mod object;
pub mod pod_admission;
pub mod pod_security;
pub mod reload;
pub mod replay;
pub mod review;
pub mod server;
pub mod telemetry;
pub mod tickets;
