//! One `authorizers[]` entry: its `type` (parsed once into an [`AuthorizerType`]), its `name`,
//! warrant's entry-level `failurePolicy`, `mode` and `matchConditions`, the cross-field rules (each
//! block only on its own type, names and types unique), and the assembled
//! [`AuthorizerConfig`]. Mirrors the per-authorizer loop of `ValidateAuthorizationConfiguration`
//! in `k8s.io/apiserver/pkg/apis/apiserver/validation/validation.go`, plus kube-apiserver's
//! naming rules (`pkg/kubeapiserver/options/authorization.go`). The blocks themselves are
//! checked in [`super::webhook`], [`super::policy`], [`super::guard`] and
//! [`super::match_conditions`].

use super::{
    Checker, Flavour, conditions, guard, invalid, line, match_conditions, parse_failure_policy,
    parse_mode, policy, warrant_only, webhook,
};
use crate::cel::Expression;
use crate::config::error::ErrorKind;
use crate::config::model::{
    AuthorizerConfig, AuthorizerSpec, AuthorizerType, FailurePolicy, Mode, WebhookConfig,
};
use crate::config::schema::{self, At};
use crate::names::{AuthorizerName, NameError};
use std::collections::HashSet;

/// Every type warrant runs, in the order `Unsupported value` lists them.
const WARRANT_TYPES: [AuthorizerType; 5] = [
    AuthorizerType::AlwaysAllow,
    AuthorizerType::AlwaysDeny,
    AuthorizerType::Webhook,
    AuthorizerType::Policy,
    AuthorizerType::DeletionGuard,
];

/// The types of upstream's schema that warrant runs.
const UPSTREAM_TYPES: [AuthorizerType; 3] = [
    AuthorizerType::AlwaysAllow,
    AuthorizerType::AlwaysDeny,
    AuthorizerType::Webhook,
];

/// The types kube-apiserver knows but warrant cannot run, and why.
const CLUSTER_STATE_TYPES: [&str; 3] = ["RBAC", "Node", "ABAC"];

/// The type a `type` value names, whatever the flavour; `None` for any other spelling.
fn parse_type(s: &str) -> Option<AuthorizerType> {
    WARRANT_TYPES.into_iter().find(|t| t.as_str() == s)
}

impl Flavour {
    /// The types a file of this flavour may use.
    fn types(self) -> &'static [AuthorizerType] {
        match self {
            Flavour::Upstream => &UPSTREAM_TYPES,
            Flavour::Warrant => &WARRANT_TYPES,
        }
    }

    /// Their spellings, as `Unsupported value` lists them.
    fn supported_types(self) -> Vec<&'static str> {
        self.types().iter().map(|t| t.as_str()).collect()
    }
}

/// What earlier entries of the file took: their names and, in an upstream file, their types.
#[derive(Debug, Default)]
pub(super) struct Claims {
    names: HashSet<String>,
    types: HashSet<AuthorizerType>,
}

/// Where an entry sits: what each of its checks needs to place an error.
struct Entry {
    flavour: Flavour,
    /// `authorizers[i]`.
    base: String,
    /// The entry's line, for errors about a missing field.
    line: u32,
}

impl Entry {
    /// The path of a field of this entry.
    fn path(&self, field: &str) -> String {
        format!("{}.{field}", self.base)
    }
}

/// The entry's `type` as written, where, and the type it names.
#[derive(Debug, Clone, Copy)]
struct Type<'a> {
    written: &'a str,
    line: u32,
    /// `None` for a spelling warrant does not know (`RBAC`, `Foo`).
    named: Option<AuthorizerType>,
}

/// Whether the entry's type is `t`.
fn is(ty: Option<Type<'_>>, t: AuthorizerType) -> bool {
    ty.and_then(|ty| ty.named) == Some(t)
}

/// Checks entry `i`; `None` when anything about it is wrong (errors recorded). The order of the
/// checks is the order errors on one line are reported in.
pub(super) fn check(
    c: &mut Checker,
    flavour: Flavour,
    i: usize,
    a: At<schema::Authorizer>,
    claims: &mut Claims,
) -> Option<AuthorizerConfig> {
    let e = Entry {
        flavour,
        base: format!("authorizers[{i}]"),
        line: line(&a),
    };
    let a = a.value;
    let errors_before = c.errors.len();
    let ty = check_type(c, &e, a.type_.as_ref(), &mut claims.types);
    let runnable = ty
        .and_then(|t| t.named)
        .filter(|t| flavour.types().contains(t));
    let mut spec = runnable.and_then(|t| check_spec(c, &e, t, &a));
    check_misplaced(
        c,
        &e,
        "guard",
        a.guard.as_ref(),
        ty,
        AuthorizerType::DeletionGuard,
    );
    check_misplaced(
        c,
        &e,
        "policy",
        a.policy.as_ref(),
        ty,
        AuthorizerType::Policy,
    );
    if let Some(b) = &a.conditions
        && ty.is_some()
        && !is(ty, AuthorizerType::Policy)
        && !is(ty, AuthorizerType::DeletionGuard)
    {
        c.push(
            line(b),
            e.path("conditions"),
            invalid(
                "non-null",
                "may only be specified when type=Policy or type=DeletionGuard",
            ),
        );
    }
    let conditions = conditions::check_block(c, &e.base, a.conditions.as_ref());
    if is(ty, AuthorizerType::Policy) {
        conditions::refuse_validation_ring(c, &e.base, a.conditions.as_ref());
    }
    let name = check_name(c, &e, a.name.as_ref(), ty, &mut claims.names);
    let webhook = check_webhook(c, &e, a.webhook.as_ref(), ty);
    let mut failure_policy = check_failure_policy(c, &e, a.failure_policy.as_ref(), ty);
    let mode = check_mode(c, &e, a.mode.as_ref(), a.guard.as_ref(), spec.as_mut());
    check_match_conditions_field(c, &e, a.match_conditions.as_ref(), ty);
    let match_conditions = match_conditions(c, &e, &a, ty);
    if let Some((settings, policy)) = webhook {
        spec = Some(AuthorizerSpec::Webhook(settings));
        failure_policy = policy;
    }
    if c.errors.len() != errors_before {
        return None;
    }
    Some(AuthorizerConfig {
        name: name?,
        failure_policy,
        mode,
        spec: spec?,
        match_conditions,
        conditions,
    })
}

/// `type`: required, one of the flavour's types, and in an upstream file unique unless Webhook.
fn check_type<'a>(
    c: &mut Checker,
    e: &Entry,
    t: Option<&'a At<String>>,
    types: &mut HashSet<AuthorizerType>,
) -> Option<Type<'a>> {
    let Some(t) = t.filter(|t| !t.value.is_empty()) else {
        c.push(
            t.map_or(e.line, line),
            e.path("type"),
            ErrorKind::Required(None),
        );
        return None;
    };
    let ty = Type {
        written: &t.value,
        line: line(t),
        named: parse_type(&t.value),
    };
    match ty.named.filter(|n| e.flavour.types().contains(n)) {
        None => c.push(
            ty.line,
            e.path("type"),
            unsupported_type(e.flavour, ty.written),
        ),
        // Only Webhook may repeat in kube-apiserver; warrant's own flavour allows any type
        // to repeat, because its types are configured per entry.
        Some(n)
            if e.flavour == Flavour::Upstream
                && n != AuthorizerType::Webhook
                && !types.insert(n) =>
        {
            c.push(
                ty.line,
                e.path("type"),
                ErrorKind::Duplicate(ty.written.to_owned()),
            )
        }
        Some(_) => {}
    }
    Some(ty)
}

/// `Unsupported value` for a type, saying why for the types that need cluster state.
fn unsupported_type(flavour: Flavour, t: &str) -> ErrorKind {
    // ABAC reads a policy file on the API server's disk, not cluster state.
    let detail = match t {
        "ABAC" => Some(
            "ABAC (a policy file on the API server's disk) is not supported by warrant yet; keep it in kube-apiserver's own --authorization-config"
                .to_owned(),
        ),
        _ => CLUSTER_STATE_TYPES.contains(&t).then(|| {
            format!(
                "{t} needs cluster state that warrant does not hold; keep it in kube-apiserver's own --authorization-config"
            )
        }),
    };
    ErrorKind::NotSupported {
        value: t.to_owned(),
        supported: flavour.supported_types(),
        detail,
    }
}

/// The settings of a type without a `webhook:` block; the Webhook's come from
/// [`check_webhook`], after the name, as upstream orders its errors.
fn check_spec(
    c: &mut Checker,
    e: &Entry,
    t: AuthorizerType,
    a: &schema::Authorizer,
) -> Option<AuthorizerSpec> {
    match t {
        AuthorizerType::AlwaysAllow => Some(AuthorizerSpec::AlwaysAllow),
        AuthorizerType::AlwaysDeny => Some(AuthorizerSpec::AlwaysDeny),
        AuthorizerType::Policy => {
            policy::check(c, &e.base, e.line, a.policy.as_ref()).map(AuthorizerSpec::Policy)
        }
        AuthorizerType::DeletionGuard => guard::check(c, &e.base, e.line, a.guard.as_ref())
            .map(|g| AuthorizerSpec::DeletionGuard(Box::new(g))),
        AuthorizerType::Webhook => None,
    }
}

/// A block set on an entry of another type (once the entry has a type at all).
fn check_misplaced<T>(
    c: &mut Checker,
    e: &Entry,
    field: &str,
    block: Option<&At<T>>,
    ty: Option<Type<'_>>,
    owner: AuthorizerType,
) {
    if let Some(b) = block
        && ty.is_some()
        && !is(ty, owner)
    {
        c.push(
            line(b),
            e.path(field),
            ErrorKind::Invalid {
                value: "non-null".into(),
                detail: format!("may only be specified when type={owner}"),
            },
        );
    }
}

/// `name`: required, unique, a DNS-1123 subdomain; in an upstream file a non-Webhook entry is
/// named after its type.
fn check_name(
    c: &mut Checker,
    e: &Entry,
    n: Option<&At<String>>,
    ty: Option<Type<'_>>,
    names: &mut HashSet<String>,
) -> Option<AuthorizerName> {
    let path = e.path("name");
    let Some(n) = n else {
        c.push(e.line, path, ErrorKind::Required(None));
        return None;
    };
    let nl = line(n);
    match AuthorizerName::new(&n.value) {
        Err(NameError::Empty) => c.push(nl, path, ErrorKind::Required(None)),
        // Upstream checks a repeated name before its format.
        Err(NameError::Format(_)) if names.contains(&n.value) => {
            c.push(nl, path, ErrorKind::Duplicate(n.value.clone()))
        }
        Err(NameError::Format(msg)) => {
            names.insert(n.value.clone());
            c.push(
                nl,
                path,
                invalid(&n.value, format!("authorizer name is invalid: {msg}")),
            )
        }
        Ok(_) if !names.insert(n.value.clone()) => {
            c.push(nl, path, ErrorKind::Duplicate(n.value.clone()))
        }
        Ok(valid) => {
            if e.flavour == Flavour::Upstream {
                check_upstream_name(c, nl, path, &n.value, ty);
            }
            return Some(valid);
        }
    }
    None
}

/// kube-apiserver names every authorizer but a Webhook after its type, lowercased. The rule
/// reads the type as written, so it also holds for the types warrant refuses (`rbac`).
fn check_upstream_name(c: &mut Checker, nl: u32, path: String, name: &str, ty: Option<Type<'_>>) {
    let Some(t) = ty.filter(|t| t.named != Some(AuthorizerType::Webhook)) else {
        return;
    };
    let want = t.written.to_lowercase();
    if name != want {
        c.push(
            nl,
            path,
            invalid(
                name,
                format!(
                    "kube-apiserver requires the name of a {} authorizer to be {want:?}",
                    t.written
                ),
            ),
        );
    }
}

/// The `webhook:` block: required for a Webhook, refused on other types, checked by
/// [`webhook::check`]. Returns the settings and the failure policy.
fn check_webhook(
    c: &mut Checker,
    e: &Entry,
    w: Option<&At<schema::Webhook>>,
    ty: Option<Type<'_>>,
) -> Option<(WebhookConfig, FailurePolicy)> {
    if !is(ty, AuthorizerType::Webhook) {
        check_misplaced(c, e, "webhook", w, ty, AuthorizerType::Webhook);
        return None;
    }
    let Some(w) = w else {
        c.push(
            e.line,
            e.path("webhook"),
            ErrorKind::Required(Some("required when type=Webhook".into())),
        );
        return None;
    };
    webhook::check(c, e.flavour, &e.base, w)
}

/// warrant's entry-level `failurePolicy` (default Deny): refused in an upstream file and on a
/// Webhook, whose failure policy sits in its `webhook:` block.
fn check_failure_policy(
    c: &mut Checker,
    e: &Entry,
    fp: Option<&At<String>>,
    ty: Option<Type<'_>>,
) -> FailurePolicy {
    let Some(fp) = fp else {
        return FailurePolicy::Deny;
    };
    let path = e.path("failurePolicy");
    if e.flavour == Flavour::Upstream {
        c.push(line(fp), path, warrant_only("failurePolicy"));
    } else if is(ty, AuthorizerType::Webhook) {
        c.push(
            line(fp),
            path,
            ErrorKind::Forbidden(
                "a Webhook authorizer takes its failurePolicy from its webhook block".into(),
            ),
        );
    } else if let Some(p) = parse_failure_policy(c, line(fp), &path, &fp.value) {
        return p;
    }
    FailurePolicy::Deny
}

/// warrant's entry-level `mode` (default Enforce), refused in an upstream file. A DeletionGuard's
/// `guard.mode` is the same setting under its older name: either may be given, both only if they
/// agree, and the guard's settings carry the result so that its codes (`OBSERVED_<CODE>`) and
/// metrics follow the entry.
fn check_mode(
    c: &mut Checker,
    e: &Entry,
    m: Option<&At<String>>,
    guard_block: Option<&At<schema::guard::GuardFile>>,
    spec: Option<&mut AuthorizerSpec>,
) -> Mode {
    let path = e.path("mode");
    let entry = match m {
        None => None,
        Some(m) if e.flavour == Flavour::Upstream => {
            c.push(line(m), path.clone(), warrant_only("mode"));
            None
        }
        Some(m) => parse_mode(c, line(m), &path, &m.value),
    };
    let Some(AuthorizerSpec::DeletionGuard(g)) = spec else {
        return entry.unwrap_or_default();
    };
    let written = guard_block.and_then(|b| b.value.mode.as_ref());
    match (entry, m, written) {
        (Some(mode), Some(m), Some(w)) if w.value != mode.as_str() => {
            c.push(
                line(m),
                path,
                invalid(
                    &m.value,
                    format!(
                        "disagrees with guard.mode {:?}; they are one setting, give either",
                        w.value
                    ),
                ),
            );
            g.mode
        }
        (Some(mode), _, _) => {
            g.mode = mode;
            mode
        }
        (None, _, _) => g.mode,
    }
}

/// warrant's entry-level `matchConditions`: refused in an upstream file and on a Webhook,
/// whose conditions sit in its `webhook:` block.
fn check_match_conditions_field(
    c: &mut Checker,
    e: &Entry,
    mc: Option<&At<Vec<At<schema::MatchCondition>>>>,
    ty: Option<Type<'_>>,
) {
    let Some(mc) = mc else {
        return;
    };
    let path = e.path("matchConditions");
    if e.flavour == Flavour::Upstream {
        c.push(line(mc), path, warrant_only("matchConditions"));
    } else if is(ty, AuthorizerType::Webhook) {
        c.push(
            line(mc),
            path,
            ErrorKind::Forbidden(
                "a Webhook authorizer takes its matchConditions from its webhook block".into(),
            ),
        );
    }
}

/// The compiled conditions: the webhook block's for a Webhook (upstream), the entry's
/// otherwise (warrant.dev only).
fn match_conditions(
    c: &mut Checker,
    e: &Entry,
    a: &schema::Authorizer,
    ty: Option<Type<'_>>,
) -> Vec<Expression> {
    let is_webhook = is(ty, AuthorizerType::Webhook);
    let conditions = match &a.webhook {
        Some(w) if is_webhook => w.value.match_conditions.as_ref(),
        _ if e.flavour == Flavour::Warrant && !is_webhook => a.match_conditions.as_ref(),
        _ => None,
    };
    conditions
        .map(|mc| match_conditions::check(c, &e.path("matchConditions"), mc))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
