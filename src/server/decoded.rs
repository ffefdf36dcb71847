//! The memory a JSON body takes once decoded, estimated before it is decoded: a body of
//! `[0,0,0,...]` is a few bytes per element on the wire and tens of bytes per element as a tree
//! (`serde_json::Value`, then the copies CEL and the rings make), so raw size alone does not
//! bound memory. Each body is charged its estimated tree to the process budget of request bytes
//! ([`super::body::BodyBudget`]; refused with 429 when the budget is spent) and may not estimate
//! above [`MAX_DECODED_BYTES`] (refused with 413).

use super::body::{BodyBudget, BodyHold};
use super::rejection::Rejection;

/// The largest estimated tree one request may decode into (48 MiB): the two copies of a 3 MiB
/// object of ordinary density (an UPDATE's object and old object at kube-apiserver's request
/// size limit) fit, a body of megabytes of bare numbers does not.
pub const MAX_DECODED_BYTES: usize = 48 * 1024 * 1024;

/// What one JSON value costs once decoded, beyond its string bytes: a `serde_json::Value` is
/// 32 bytes, plus the slack of the vectors and maps holding it.
const NODE_BYTES: usize = 48;

/// The estimated decoded size of a JSON body: every value (counted by the structural bytes
/// outside strings that introduce one) at [`NODE_BYTES`], plus the bytes of every string (from
/// after its opening quote to its closing one, escapes included). A single pass over the
/// quotes and backslashes, found by one `memchr` search across the body (a search begun afresh
/// for each string cost more than the scan itself on a review's short strings), no
/// allocation; not a validator (malformed JSON is refused by the decoder).
pub fn estimate(body: &[u8]) -> usize {
    let mut nodes = 1usize;
    let mut string_bytes = 0usize;
    // Where the current stretch (outside a string, or a string's text) began.
    let mut from = 0;
    let mut in_string = false;
    // The byte an escape covers is no quote or backslash of its own.
    let mut escaped_until = 0;
    for at in memchr::memchr2_iter(b'"', b'\\', body) {
        if at < escaped_until {
            continue;
        }
        match (in_string, body[at]) {
            (false, b'"') => {
                nodes += structural(&body[from..at]);
                in_string = true;
                from = at + 1;
            }
            // A backslash outside a string escapes nothing.
            (false, _) => {}
            (true, b'"') => {
                string_bytes += at + 1 - from;
                in_string = false;
                from = at + 1;
            }
            (true, _) => escaped_until = at + 2,
        }
    }
    match in_string {
        true => string_bytes += body.len() - from,
        false => nodes += structural(&body[from..]),
    }
    nodes
        .saturating_mul(NODE_BYTES)
        .saturating_add(string_bytes)
}

/// The bytes outside strings that introduce a value.
fn structural(outside: &[u8]) -> usize {
    outside
        .iter()
        .filter(|b| matches!(b, b'[' | b'{' | b',' | b':'))
        .count()
}

/// Charges `body`'s estimated tree to `hold` before it is decoded.
pub fn charge(hold: &mut BodyHold, budget: &BodyBudget, body: &[u8]) -> Result<(), Rejection> {
    let estimate = estimate(body);
    if estimate > MAX_DECODED_BYTES {
        return Err(Rejection::TooComplex {
            estimate,
            limit: MAX_DECODED_BYTES,
        });
    }
    hold.charge(budget, estimate)
}

#[cfg(test)]
mod tests {
    use super::{MAX_DECODED_BYTES, NODE_BYTES, estimate};

    #[test]
    fn bare_numbers_estimate_far_above_their_wire_size_and_strings_near_it() {
        let zeros = format!("[{}0]", "0,".repeat(1000));
        assert_eq!(estimate(zeros.as_bytes()), (1 + 1 + 1000) * NODE_BYTES);
        let text = format!(r#"{{"data":"{}"}}"#, "x".repeat(10_000));
        let e = estimate(text.as_bytes());
        assert!((10_000..10_000 + 4 * NODE_BYTES).contains(&e), "{e}");
        // Structural bytes inside strings (escaped quotes included) are not values.
        assert_eq!(estimate(br#"["a,b:[{", "\",\""]"#), 3 * NODE_BYTES + 13);
    }

    /// The estimate byte by byte, as a state machine: what the jumping version must equal.
    fn byte_by_byte(body: &[u8]) -> usize {
        let (mut nodes, mut string_bytes, mut in_string, mut escaped) = (1, 0, false, false);
        for &b in body {
            if in_string {
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
                string_bytes += 1;
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'[' | b'{' | b',' | b':' => nodes += 1,
                _ => {}
            }
        }
        nodes * NODE_BYTES + string_bytes
    }

    proptest::proptest! {
        #[test]
        fn the_estimate_counts_as_a_byte_by_byte_scan_does(
            body in proptest::collection::vec(proptest::sample::select(
                b"{}[]:,\"\\ax0 ".to_vec()), 0..200)
        ) {
            proptest::prop_assert_eq!(estimate(&body), byte_by_byte(&body));
        }
    }

    #[test]
    fn eight_mebibytes_of_zeros_exceed_the_per_request_limit() {
        let zeros = format!("[{}0]", "0,".repeat(4 * 1024 * 1024));
        assert!(estimate(zeros.as_bytes()) > MAX_DECODED_BYTES);
    }
}
