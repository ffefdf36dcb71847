//! The `AdmissionReview` wire format (`admission.k8s.io/v1` only): decoding the request
//! kube-apiserver sends to a validating webhook, mapping it onto the review and object context
//! the validation ring judges, and encoding the answer.
//!
//! The field names are those of `k8s.io/api/admission/v1/types.go` (v0.35.4). Decoding is
//! lenient about fields it does not know, as the API server's own decoder is, and strict about
//! what warrant needs: the envelope's `apiVersion` and `kind`, a `request` with a `uid`, a known
//! `operation`, `userInfo`, `kind` and `resource`, and the objects an operation carries
//! (`oldObject` for a DELETE, both for an UPDATE). JSON arrays are refused where Go's decoder
//! refuses them ([`crate::review::refuse_array`]).

mod decode;
mod error;
mod mapping;
mod request;
mod response;

pub use decode::{API_VERSION, KIND, decode, decode_shared};
pub use error::AdmissionError;
pub use mapping::{Mapped, map};
pub use request::{AdmissionOperation, AdmissionRequest, GroupVersionKind, GroupVersionResource};
pub use response::{AdmissionResponse, is_annotation_key};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_encode;
