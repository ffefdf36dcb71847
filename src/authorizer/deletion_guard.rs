//! `type: DeletionGuard`: the authorization ring of a deletion defense. It never allows: for a
//! destructive request on a protected target it denies (Enforce) or records the would-be denial
//! (Observe), and otherwise stands aside (NoOpinion) so the rest of the chain and RBAC decide.
//!
//! Order: scope and exclusions; break-glass; trusted principals; rate limits; change windows and
//! freezes (`WINDOW_BLOCKED` above LOW); tickets (`MISSING_TICKET`, `TICKET_NOT_FOUND`,
//! `TICKET_NOT_APPROVED`, `INSUFFICIENT_APPROVALS`, `TICKET_EXPIRED`, `TICKET_SCOPE`); then
//! `ALLOW`, or `ALLOW_WITH_COOLDOWN` for CRITICAL risk.

pub mod assessment;
pub mod rate;
pub mod state;
pub mod tickets;

pub use crate::config::model::guard::{GuardSpec, Level, Mode};
pub use assessment::{Assessment, GuardCode, RiskLevel};
pub use state::{GuardShared, GuardStates};

use crate::authorizer::{Authorizer, AuthorizerError, BoxFuture, Deadline, Input};
use crate::config::model::guard::DEFAULT_EXCLUDED_GROUPS;
use crate::config::model::pattern;
use crate::decision::{Decision, Reason, Verdict};
use crate::names::Code;
use std::sync::Arc;
use tickets::{Snapshot, Target};

/// A deletion guard in a chain.
#[derive(Debug)]
pub struct DeletionGuard {
    shared: Arc<GuardShared>,
}

impl DeletionGuard {
    /// A guard over shared state.
    pub fn new(shared: Arc<GuardShared>) -> Self {
        Self { shared }
    }

    /// Judges one review synchronously.
    pub fn judge(&self, input: &Input) -> Result<Verdict, AuthorizerError> {
        let spec = &self.shared.spec;
        let review = &input.review;
        let Some(ra) = review.spec().resource_attributes.as_ref() else {
            return Ok(Verdict::bare(Decision::NoOpinion));
        };
        let verb = ra.verb.as_deref().unwrap_or("");
        let group = ra.group.as_deref().unwrap_or("");
        let resource = ra.resource.as_deref().unwrap_or("");
        let name = ra.name.as_deref().unwrap_or("");
        let namespace = ra.namespace.as_deref().unwrap_or("");
        let destructive = match verb {
            "delete" | "deletecollection" => true,
            "update" | "patch" => spec
                .update_resources
                .iter()
                .any(|k| k.covers(group, resource)),
            _ => false,
        };
        // A subresource (pods/eviction is handled by its own verb) is not the object itself.
        if !destructive || ra.subresource.as_deref().is_some_and(|s| !s.is_empty()) {
            return Ok(Verdict::bare(Decision::NoOpinion));
        }
        let is_namespace = group.is_empty() && resource == "namespaces";
        let target_ns = if is_namespace { name } else { namespace };
        let user = review.user();
        let groups = review.groups();
        if pattern::any(&spec.excluded_namespaces, target_ns)
            || spec.excluded_principals.contains(user, groups)
            || groups
                .iter()
                .any(|g| DEFAULT_EXCLUDED_GROUPS.contains(&g.as_str()))
        {
            return Ok(Verdict::bare(Decision::NoOpinion));
        }

        // Protection and risk.
        let mut score = 0u32;
        let mut reasons = Vec::new();
        let mut protection: Option<Level> = None;
        let points = |l: Level| match l {
            Level::Critical => 40,
            Level::High => 20,
            Level::Standard => 0,
        };
        if !target_ns.is_empty()
            && let Some(l) = spec
                .namespaces
                .iter()
                .filter(|p| pattern::any(&p.names, target_ns))
                .map(|p| p.level)
                .max()
        {
            score += points(l);
            reasons.push(format!(
                "{} namespace {target_ns} +{}",
                l.as_str(),
                points(l)
            ));
            protection = protection.max(Some(l));
        }
        if let Some(l) = spec
            .resources
            .iter()
            .filter(|p| {
                p.kind.covers(group, resource)
                    && (p.names.is_empty() || pattern::any(&p.names, name))
            })
            .map(|p| p.level)
            .max()
        {
            let kind = if group.is_empty() {
                resource.to_owned()
            } else {
                format!("{resource}.{group}")
            };
            score += points(l);
            reasons.push(format!("{} {kind} +{}", l.as_str(), points(l)));
            protection = protection.max(Some(l));
        }
        if is_namespace && protection.is_some() {
            score += 30;
            reasons.push("namespace deletion +30".into());
        }
        if verb == "deletecollection" {
            score += 20;
            reasons.push("deletecollection +20".into());
        }
        if spec.business_hours.contains(input.now) {
            score += 10;
            reasons.push("business hours +10".into());
        }
        let t = spec.thresholds;
        let risk = if score >= t.critical {
            RiskLevel::Critical
        } else if score >= t.high {
            RiskLevel::High
        } else if score >= t.medium {
            RiskLevel::Medium
        } else {
            RiskLevel::Low
        };
        let mut ticket_used = None;
        let target = Target {
            namespace: target_ns,
            group,
            resource,
            name,
            user,
        };
        let (code, message) = 'decide: {
            if groups.iter().any(|g| spec.break_glass_groups.contains(g)) {
                break 'decide (
                    GuardCode::BreakGlass,
                    "break-glass: the guard stands aside".into(),
                );
            }
            let trusted = spec.trusted.iter().any(|t| {
                t.principals.contains(user, groups) && protection.is_none_or(|l| l <= t.max_level)
            });
            if trusted {
                break 'decide (GuardCode::Allow, "trusted principal".into());
            }
            for (i, limit) in spec.rate_limits.iter().enumerate() {
                if limit.kind.covers(group, resource)
                    && !self.shared.buckets.take(i, limit, user, input.now)
                {
                    let kind = if limit.kind.resource == "*" {
                        "destructive requests".to_owned()
                    } else {
                        format!("{} deletions", limit.kind.resource)
                    };
                    break 'decide (
                        GuardCode::RateLimited,
                        format!(
                            "rate limit of {} {kind} per {:?} for {user} exceeded",
                            limit.count, limit.period
                        ),
                    );
                }
            }
            let Some(level) = protection else {
                break 'decide (GuardCode::Allow, "target not protected".into());
            };
            if risk > RiskLevel::Low {
                if let Some(f) = spec.freezes.iter().find(|f| f.contains(input.now)) {
                    break 'decide (
                        GuardCode::WindowBlocked,
                        format!("change freeze until {}: {}", f.end.to_rfc3339(), f.reason),
                    );
                }
                if !spec.windows.is_empty() && !spec.windows.iter().any(|w| w.contains(input.now)) {
                    break 'decide (
                        GuardCode::WindowBlocked,
                        "outside every allowed change window".into(),
                    );
                }
            }
            let required = spec.tickets.required_for.contains(&level) || risk >= RiskLevel::High;
            if required {
                let approvals = spec.tickets.approvals[level as usize];
                let snapshot = self.shared.tickets.as_ref().map(|s| s.snapshot());
                let empty = std::collections::HashMap::new();
                let tickets = match snapshot.as_deref() {
                    None => &empty,
                    Some(Snapshot::Loaded(m)) => m,
                    Some(Snapshot::Unreadable(e)) => {
                        if spec.mode == Mode::Enforce {
                            return Err(AuthorizerError::Guard(format!(
                                "ticket source unavailable: {e}"
                            )));
                        }
                        break 'decide (
                            GuardCode::TicketSourceUnavailable,
                            format!("ticket source unavailable: {e}"),
                        );
                    }
                };
                let presented = review
                    .spec()
                    .extra
                    .as_ref()
                    .and_then(|x| x.get(&spec.tickets.extra_key))
                    .and_then(|v| v.first());
                match presented {
                    None => {
                        let pre = tickets.values().find(|t| {
                            !t.scope.requesters.is_empty()
                                && t.status == tickets::Status::Approved
                                && t.approvers.len() as u32 >= approvals
                                && t.expires > input.now
                                && t.covers(&target)
                        });
                        match pre {
                            Some(t) => ticket_used = Some(t.id.clone()),
                            None => {
                                break 'decide (
                                    GuardCode::MissingTicket,
                                    format!(
                                        "a change ticket is required (present it as user extra {})",
                                        spec.tickets.extra_key
                                    ),
                                );
                            }
                        }
                    }
                    Some(id) => {
                        ticket_used = Some(id.clone());
                        let Some(t) = tickets.get(id) else {
                            break 'decide (
                                GuardCode::TicketNotFound,
                                format!("ticket {id} not found"),
                            );
                        };
                        if t.status != tickets::Status::Approved {
                            break 'decide (
                                GuardCode::TicketNotApproved,
                                format!("ticket {id} is {:?}, not Approved", t.status),
                            );
                        }
                        if (t.approvers.len() as u32) < approvals {
                            break 'decide (
                                GuardCode::InsufficientApprovals,
                                format!(
                                    "ticket {id} has {} approver(s), {} target needs {approvals}",
                                    t.approvers.len(),
                                    level.as_str()
                                ),
                            );
                        }
                        if t.expires <= input.now {
                            break 'decide (
                                GuardCode::TicketExpired,
                                format!("ticket {id} expired at {}", t.expires.to_rfc3339()),
                            );
                        }
                        if !t.covers(&target) {
                            break 'decide (
                                GuardCode::TicketScope,
                                format!("ticket {id} does not cover this request"),
                            );
                        }
                    }
                }
            }
            if risk == RiskLevel::Critical {
                (
                    GuardCode::AllowWithCooldown,
                    "critical change: stands aside (cool-down applies at admission)".into(),
                )
            } else {
                (GuardCode::Allow, "checks passed".into())
            }
        };
        let audit_code = Assessment::audit_code_for(spec.mode, code);
        let decision = if code.denies() && spec.mode == Mode::Enforce {
            Decision::Deny
        } else {
            Decision::NoOpinion
        };
        let observed = if spec.mode == Mode::Observe && code.denies() {
            "observed, not enforced: "
        } else {
            ""
        };
        let message = format!(
            "{observed}{message} (risk {} score {}{}{})",
            risk.as_str(),
            score,
            if reasons.is_empty() { "" } else { ": " },
            reasons.join(", ")
        );
        let assessment = Assessment {
            mode: spec.mode,
            code,
            audit_code: audit_code.clone(),
            risk_score: score,
            risk_level: risk,
            protection,
            risk_reasons: reasons,
            ticket: ticket_used,
        };
        let reason = Reason {
            rule: None,
            message,
            code: Code::new(&audit_code).ok(),
        };
        Ok(Verdict::new(decision, reason).with_detail(Arc::new(assessment)))
    }
}

impl Authorizer for DeletionGuard {
    fn authorize<'a>(
        &'a self,
        input: &'a Input,
        _deadline: Deadline,
    ) -> BoxFuture<'a, Result<Verdict, AuthorizerError>> {
        Box::pin(std::future::ready(self.judge(input)))
    }
}
