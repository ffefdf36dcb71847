//! From arguments to the input of a chain: the review (from flags shaped like `kubectl auth
//! can-i`, or a JSON file), the evaluation time, and with `--object` the admission context.

use super::args::CheckArgs;
use super::error::{InputError, TimeError};
use crate::authorizer::Input;
use crate::cli::object_input;
use crate::review::{self, ApiVersion, Review};
use chrono::{DateTime, Utc};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, ResourceAttributes, SubjectAccessReviewSpec,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

impl CheckArgs {
    /// The review these arguments describe, opted in to conditions with `--conditions`.
    pub fn review(&self) -> Result<Review, InputError> {
        let review = self.plain_review()?;
        Ok(if self.conditions {
            review.with_options(Some(crate::review::AuthorizationOptions::conditional()))
        } else {
            review
        })
    }

    fn plain_review(&self) -> Result<Review, InputError> {
        if let Some(path) = &self.file {
            if self.verb.is_some() || self.resource.is_some() {
                return Err(InputError::FileAndFlags);
            }
            let bytes = std::fs::read(path).map_err(|source| InputError::ReadFile {
                path: path.clone(),
                source,
            })?;
            return review::decode(&bytes).map_err(|source| InputError::DecodeFile {
                path: path.clone(),
                source,
            });
        }
        let (Some(verb), Some(target)) = (&self.verb, &self.resource) else {
            return Err(InputError::MissingTarget);
        };
        Flags {
            verb,
            target,
            namespace: self.namespace.as_deref(),
            subresource: self.subresource.as_deref(),
            user: self.as_user.as_deref(),
            groups: &self.as_group,
            uid: self.as_uid.as_deref(),
            extra: parse_extra(&self.extra)?,
        }
        .review()
    }

    /// The input these arguments describe: the review, and with `--object` its admission
    /// context (not when the review handles conditions: the objects then go to the round trip,
    /// [`CheckArgs::conditions_objects`]).
    pub fn input(&self) -> Result<Input, InputError> {
        let input = Input::new(self.review()?, self.now()?);
        let Some(path) = &self.object else {
            if self.cluster_state.is_some() {
                return Err(InputError::StateWithoutObject);
            }
            return Ok(input);
        };
        if input.review.supports_conditions() {
            return Ok(input);
        }
        let object = object_input::read_object(path)?;
        let old = self
            .old_object
            .as_deref()
            .map(object_input::read_object)
            .transpose()?;
        let view = object_input::cluster_view(self.cluster_state.as_deref())?;
        let verb = self.verb.as_deref().unwrap_or("");
        let ctx = object_input::context(verb, object, old, self.dry_run, view)?;
        Ok(input.with_object(Arc::new(ctx)))
    }

    /// The objects of the enforcer round trip: `--object` and `--old-object`, as JSON.
    pub(crate) fn conditions_objects(&self) -> Result<(Option<Value>, Option<Value>), InputError> {
        let read = |p: &Option<PathBuf>| {
            p.as_deref()
                .map(|p| object_input::read_object(p).map(|o| o.json().clone()))
                .transpose()
        };
        Ok((read(&self.object)?, read(&self.old_object)?))
    }

    /// The evaluation time.
    pub fn now(&self) -> Result<DateTime<Utc>, InputError> {
        match &self.at {
            None => Ok(Utc::now()),
            Some(s) => parse_at(s).map_err(InputError::At),
        }
    }
}

/// Parses an RFC 3339 evaluation time.
pub fn parse_at(s: &str) -> Result<DateTime<Utc>, TimeError> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|source| TimeError {
            input: s.to_owned(),
            source,
        })
}

/// A review described as `kubectl auth can-i` describes one: the flags of `warrant check`, also
/// the fields of a `warrant test` case.
#[derive(Debug, Clone)]
pub struct Flags<'a> {
    /// The verb.
    pub verb: &'a str,
    /// `RESOURCE[.GROUP][/NAME]`, or a non-resource path starting with `/`.
    pub target: &'a str,
    /// Namespace of the resource.
    pub namespace: Option<&'a str>,
    /// Subresource.
    pub subresource: Option<&'a str>,
    /// The user.
    pub user: Option<&'a str>,
    /// The user's groups.
    pub groups: &'a [String],
    /// The user's UID.
    pub uid: Option<&'a str>,
    /// The extra attributes.
    pub extra: Option<BTreeMap<String, Vec<String>>>,
}

impl Flags<'_> {
    /// The v1 review these flags describe.
    pub fn review(self) -> Result<Review, InputError> {
        let (verb, target) = (self.verb, self.target);
        let mut spec = SubjectAccessReviewSpec {
            user: self.user.map(str::to_owned),
            groups: (!self.groups.is_empty()).then(|| self.groups.to_vec()),
            uid: self.uid.map(str::to_owned),
            extra: self.extra,
            ..Default::default()
        };
        if target.starts_with('/') {
            if self.namespace.is_some() || self.subresource.is_some() {
                return Err(InputError::NonResourceScope);
            }
            spec.non_resource_attributes = Some(NonResourceAttributes {
                path: Some(target.to_owned()),
                verb: Some(verb.to_owned()),
            });
        } else {
            let (kind, name) = match target.split_once('/') {
                Some((k, n)) if !n.is_empty() => (k, Some(n.to_owned())),
                Some(_) => {
                    return Err(InputError::EmptyName {
                        target: target.to_owned(),
                    });
                }
                None => (target, None),
            };
            let (resource, group) = match kind.split_once('.') {
                Some((r, g)) => (r, g),
                None => (kind, ""),
            };
            if resource.is_empty() {
                return Err(InputError::EmptyResource {
                    target: target.to_owned(),
                });
            }
            spec.resource_attributes = Some(ResourceAttributes {
                namespace: self.namespace.map(str::to_owned),
                verb: Some(verb.to_owned()),
                group: Some(group.to_owned()),
                resource: Some(resource.to_owned()),
                subresource: self.subresource.map(str::to_owned),
                name,
                ..Default::default()
            });
        }
        Review::new(ApiVersion::V1, spec).map_err(InputError::Review)
    }
}

fn parse_extra(pairs: &[String]) -> Result<Option<BTreeMap<String, Vec<String>>>, InputError> {
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in pairs {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| InputError::Extra { pair: p.clone() })?;
        extra.entry(k.to_owned()).or_default().push(v.to_owned());
    }
    Ok((!extra.is_empty()).then_some(extra))
}
