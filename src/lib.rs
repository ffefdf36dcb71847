//! warrant: an external authorization webhook for Kubernetes.
//!
//! kube-apiserver POSTs a `SubjectAccessReview` to warrant; warrant runs an ordered chain of
//! authorizers with the API server's own union semantics and answers allow, deny or no opinion,
//! with a reason that names the authorizer and rule that decided.
//!
//! The crate is layered: [`review`] owns the wire format, [`decision`] the vocabulary,
//! [`config`] turns bytes into a validated model (and builds nothing), [`authorizer`] owns the
//! trait and the chain, [`server`] speaks HTTPS and knows no rules, [`telemetry`] records and
//! never decides, and [`cli`] holds one function per subcommand. `main.rs` only dispatches.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod authorizer;
pub mod cel;
pub mod cli;
pub mod clock;
pub mod config;
pub mod decision;
pub mod file_watch;
pub mod names;
pub mod reload;
pub mod review;
pub mod server;
pub mod telemetry;
