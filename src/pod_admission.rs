//! Pod security admission, wired: pod `AdmissionReview`s judged by the pure engine of
//! [`crate::pod_security`] against the constraints and namespaces the cluster cache watches
//! ([`crate::cluster::constraints`]), with the `use` answers asked of the API server through
//! [`crate::object::AccessReview`]. `server` routes `POST /mutate` and the pods of
//! `POST /admit` here; `cli::serve` builds it when `--pod-security` is not `Off`; [`offline`] judges a pod
//! from saved files for `warrant check --pod` and `warrant test`.

mod judge;
pub mod offline;
mod settings;
mod usage;

#[cfg(test)]
mod tests;

pub use judge::{PodSecurity, Stage, is_pod};
pub use settings::{OnUnavailable, PodSecuritySettings};
