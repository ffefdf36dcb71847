//! An API server's refusal as kubectl prints it to a person: `Error from server (Forbidden):
//! <message>` (the `Status` the API server returned: RBAC's or an admission webhook's words,
//! warrant's code included), and any other client error as its own text.

/// The error as the commands people run print it.
pub fn describe(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) if !s.message.is_empty() => {
            let reason = if s.reason.is_empty() {
                s.code.to_string()
            } else {
                s.reason.clone()
            };
            format!("Error from server ({reason}): {}", s.message)
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn a_refusal_reads_as_kubectl_prints_it() {
        let status: kube::core::Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "code": 403, "reason": "Forbidden",
            "message": "admission webhook \"x\" denied the request: no [MISSING_TICKET]"
        }))
        .unwrap();
        assert_eq!(
            describe(&kube::Error::Api(Box::new(status))),
            "Error from server (Forbidden): admission webhook \"x\" denied the request: no [MISSING_TICKET]"
        );
    }
}
