//! AdmissionReview decoding and mapping onto the review and object context the validation
//! ring judges, against an empty cluster: decoded or refused, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::Arc;
use warrant::object::EmptyCluster;

fuzz_target!(|data: &[u8]| {
    let Ok(request) = warrant::admission::decode(data) else {
        return;
    };
    let mapped = warrant::admission::map(request, Arc::new(EmptyCluster));
    let _ = warrant::review::canonical_spec_json(mapped.review.spec(), None);
    let _ = warrant::admission::AdmissionResponse::allow(mapped.uid).encode();
});
