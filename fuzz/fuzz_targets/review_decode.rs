//! SubjectAccessReview decoding (v1 and v1beta1): any bytes decode or are refused, never a
//! panic; a decoded review re-encodes in both versions, and the re-encoded v1 and v1beta1
//! requests decode back to the same spec.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warrant::review::{self, ApiVersion};

fuzz_target!(|data: &[u8]| {
    let Ok(decoded) = review::decode(data) else {
        return;
    };
    let _ = decoded.attributes();
    let options = decoded.options();
    let _ = review::canonical_spec_json(decoded.spec(), options);
    for version in [ApiVersion::V1, ApiVersion::V1beta1] {
        let bytes = review::encode_request(version, decoded.spec(), options);
        let again = review::decode(&bytes).expect("an encoded review decodes");
        assert_eq!(
            review::canonical_spec_json(again.spec(), None),
            review::canonical_spec_json(decoded.spec(), None),
            "round trip through {version:?} changed the spec"
        );
        if version == ApiVersion::V1 {
            assert_eq!(again.options(), options, "options lost in v1");
        }
    }
});
