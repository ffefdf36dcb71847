//! The `use` answers a pod needs, asked of the API server before the engine runs.
//!
//! For every candidate constraint and every subject the constraint does not list (the pod's
//! service account, the requester), one SubjectAccessReview: verb `use`, group
//! `security.openshift.io`, resource `securitycontextconstraints`, the constraint's name, in
//! the pod's namespace (`sccmatching/matcher.go`, `authorizedForSCC`). The questions run
//! concurrently within the request's deadline; an error or a timeout counts as "may not", as an
//! authorizer error does in OpenShift, and is reported so that the response can say so.

use crate::object::{AccessQuestion, AccessReview};
use crate::pod_security::constraint::{GROUP, RESOURCE};
use crate::pod_security::{Identity, SecurityContextConstraints};
use futures_util::future::join_all;
use std::collections::HashSet;
use std::sync::Arc;
use tokio::time::Instant;

/// The answers: which subject (by name) may use which constraint (by name).
#[derive(Debug, Default)]
pub struct Usage {
    allowed: HashSet<(String, String)>,
    /// The questions that could not be answered, in words.
    pub errors: Vec<String>,
}

impl Usage {
    /// Whether `who` may use `constraint`.
    pub fn may_use(&self, who: &Identity, constraint: &SecurityContextConstraints) -> bool {
        self.allowed
            .contains(&(who.name.clone(), constraint.name().to_owned()))
    }
}

/// Asks whether each of `subjects` may use each of `constraints` it is not listed in.
pub async fn ask(
    access: &Arc<dyn AccessReview>,
    namespace: &str,
    subjects: &[&Identity],
    constraints: &[&SecurityContextConstraints],
    deadline: Instant,
) -> Usage {
    let mut questions = Vec::new();
    for constraint in constraints {
        for who in subjects {
            if who.listed_in(constraint) {
                continue;
            }
            questions.push(AccessQuestion {
                user: who.name.clone(),
                uid: who.uid.clone(),
                groups: who.groups.clone(),
                extra: who.extra.clone(),
                verb: "use".to_owned(),
                group: GROUP.to_owned(),
                resource: RESOURCE.to_owned(),
                subresource: String::new(),
                namespace: namespace.to_owned(),
                name: constraint.name().to_owned(),
            });
        }
    }
    let answers = tokio::time::timeout_at(
        deadline,
        join_all(questions.iter().map(|q| access.review(q))),
    )
    .await;
    let mut usage = Usage::default();
    match answers {
        Ok(answers) => {
            for (question, answer) in questions.iter().zip(answers) {
                match answer {
                    Ok(answer) if answer.is_allowed() => {
                        usage
                            .allowed
                            .insert((question.user.clone(), question.name.clone()));
                    }
                    Ok(_) => {}
                    Err(error) => usage.errors.push(format!(
                        "whether {} may use {}: {error}",
                        question.user, question.name
                    )),
                }
            }
        }
        Err(_) => usage.errors.push(format!(
            "{} use questions not answered within the request's deadline",
            questions.len()
        )),
    }
    usage
}
