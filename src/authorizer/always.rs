//! `AlwaysAllow` and `AlwaysDeny` (upstream `authorizerfactory/builtin.go`).
//!
//! A deliberate difference: upstream's AlwaysDeny answers **NoOpinion** with the reason
//! "Everything is forbidden."; it only denies because it ends kube-apiserver's chain, where no
//! decision means 403. Behind a webhook a NoOpinion lets the API server go on to RBAC, so in
//! warrant AlwaysDeny answers a real **Deny** with the same reason.

use super::{Authorizer, AuthorizerError, BoxFuture, Deadline, Input};
use crate::decision::{Decision, Reason, Verdict};

/// The reason upstream's AlwaysDeny gives.
pub(crate) const EVERYTHING_IS_FORBIDDEN: &str = "Everything is forbidden.";

/// Allows every request.
#[derive(Debug, Default, Clone, Copy)]
pub struct AlwaysAllow;

impl Authorizer for AlwaysAllow {
    fn authorize<'a>(
        &'a self,
        _input: &'a Input,
        _deadline: Deadline,
    ) -> BoxFuture<'a, Result<Verdict, AuthorizerError>> {
        Box::pin(std::future::ready(Ok(Verdict::bare(Decision::Allow))))
    }
}

/// Denies every request, with upstream's reason.
#[derive(Debug, Default, Clone, Copy)]
pub struct AlwaysDeny;

impl Authorizer for AlwaysDeny {
    fn authorize<'a>(
        &'a self,
        _input: &'a Input,
        _deadline: Deadline,
    ) -> BoxFuture<'a, Result<Verdict, AuthorizerError>> {
        Box::pin(std::future::ready(Ok(Verdict::new(
            Decision::Deny,
            Reason::message(EVERYTHING_IS_FORBIDDEN),
        ))))
    }
}
