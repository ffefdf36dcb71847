//! CEL: compile (parse, type-check, load-time folding) with both variable sets, then evaluate
//! what compiles against a fixed review. Every outcome is a value or an error within the
//! budget, never a panic or an unbounded allocation.
#![no_main]

use chrono::{DateTime, Utc};
use k8s_openapi::api::authorization::v1::SubjectAccessReviewSpec;
use libfuzzer_sys::fuzz_target;
use std::sync::LazyLock;
use warrant::cel::{Binding, Expression, Variables};

/// A review with a bit of everything an expression can read.
const REVIEW: &str = r#"{
  "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
  "spec": {
    "user": "jane", "uid": "u-1", "groups": ["dev", "system:authenticated"],
    "extra": {"scopes": ["a", "b"], "warrant.io/ticket": ["CHG-1"]},
    "resourceAttributes": {
      "namespace": "team-a", "verb": "list", "group": "apps", "version": "v1",
      "resource": "deployments", "subresource": "scale", "name": "web",
      "fieldSelector": {"rawSelector": "metadata.name=web",
        "requirements": [{"key": "metadata.name", "operator": "In", "values": ["web"]}]},
      "labelSelector": {"rawSelector": "tier=web",
        "requirements": [{"key": "tier", "operator": "In", "values": ["web", "api"]}]}
    }
  }
}"#;

static SPEC: LazyLock<SubjectAccessReviewSpec> = LazyLock::new(|| {
    warrant::review::decode(REVIEW.as_bytes())
        .expect("the fixed review decodes")
        .spec()
        .clone()
});

static NOW: LazyLock<DateTime<Utc>> = LazyLock::new(|| {
    DateTime::parse_from_rfc3339("2026-03-04T10:11:12Z")
        .expect("a valid timestamp")
        .with_timezone(&Utc)
});

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    for vars in [Variables::Request, Variables::RequestAndNow] {
        let Ok(expression) = Expression::compile(source, vars) else {
            continue;
        };
        let binding = Binding::new(&SPEC, *NOW);
        let bound = binding.with(expression.uses());
        let _ = expression.judge(&bound);
    }
});
