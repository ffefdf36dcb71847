//! The rule index of a Policy: which rules can match a review, found from what each rule's
//! expression provably requires (`cel::Requirement`: a resource or non-resource review, a verb,
//! resource, API group or namespace among literal values), so that a review evaluates only
//! those, in their order. A rule the index leaves out evaluates to `false` on that review, with
//! no error and no step spent, so leaving it out changes nothing but the time taken.
//!
//! Each rule is filed once per kind of review: under the values of its most selective
//! requirement that applies to that kind, or with the rules that must always be evaluated; a
//! rule that requires the other kind is not filed at all. A candidate is then checked against
//! all its requirements before it is evaluated.

use crate::cel::{Dimension, Requirement};
use k8s_openapi::api::authorization::v1::SubjectAccessReviewSpec;
use std::collections::HashMap;
use std::sync::Arc;

/// The index of one list of rules (a Policy's Deny rules, or its Allow rules).
#[derive(Debug, Default)]
pub(crate) struct RuleIndex {
    requirements: Box<[Arc<[Requirement]>]>,
    all: Vec<u32>,
    resource: Filing,
    non_resource: Filing,
}

/// Rule positions by the value they are filed under.
type Buckets = HashMap<Box<str>, Vec<u32>>;

/// The rules filed for one kind of review, by position in the list.
#[derive(Debug, Default)]
struct Filing {
    always: Vec<u32>,
    by_field: Vec<(Dimension, Buckets)>,
    by_verb: Buckets,
    by_group: Buckets,
}

impl Filing {
    fn file(&mut self, position: u32, key: Option<Key<'_>>) {
        let Some((dimension, values)) = key else {
            self.always.push(position);
            return;
        };
        let map = match dimension {
            Filed::Group => &mut self.by_group,
            Filed::NonResourceVerb => &mut self.by_verb,
            Filed::Field(d) => {
                let i = match self.by_field.iter().position(|(x, _)| *x == d) {
                    Some(i) => i,
                    None => {
                        self.by_field.push((d, HashMap::new()));
                        self.by_field.len() - 1
                    }
                };
                &mut self.by_field[i].1
            }
        };
        for v in values {
            let list = map.entry(v.clone()).or_default();
            // `in ['a', 'a']` files a rule under one value once.
            if list.last() != Some(&position) {
                list.push(position);
            }
        }
    }
}

impl RuleIndex {
    /// The index of rules whose expressions require `requirements`, in order.
    pub fn new(requirements: Vec<Arc<[Requirement]>>) -> Self {
        let mut index = RuleIndex::default();
        for (i, reqs) in requirements.iter().enumerate() {
            let i = i as u32;
            if !reqs.contains(&Requirement::NonResource) {
                index.resource.file(i, resource_key(reqs));
            }
            if !reqs.contains(&Requirement::Resource) {
                index.non_resource.file(i, non_resource_key(reqs));
            }
        }
        index.all = (0..requirements.len() as u32).collect();
        index.requirements = requirements.into_boxed_slice();
        index
    }

    /// The positions of the rules that can match `spec`, in order.
    pub(crate) fn candidates<'a>(
        &'a self,
        spec: &'a SubjectAccessReviewSpec,
    ) -> impl Iterator<Item = usize> + 'a {
        let mut lists: [&[u32]; 6] = [&[]; 6];
        let filing = match (&spec.resource_attributes, &spec.non_resource_attributes) {
            (None, Some(n)) => {
                let f = &self.non_resource;
                lists[1] = lookup(&f.by_verb, n.verb.as_deref().unwrap_or_default());
                Some(f)
            }
            (Some(_), None) => {
                let f = &self.resource;
                for (slot, (d, map)) in lists[1..5].iter_mut().zip(&f.by_field) {
                    *slot = lookup(map, d.value(spec).unwrap_or_default());
                }
                Some(f)
            }
            // A decoded review has exactly one kind of attributes; anything else is judged by
            // every rule.
            (Some(_), Some(_)) | (None, None) => None,
        };
        lists[0] = filing.map_or(&self.all, |f| &f.always);
        // The rules filed under the user's groups (a group may be sent twice).
        let mut in_groups: Vec<u32> = Vec::new();
        if let Some(f) = filing.filter(|f| !f.by_group.is_empty()) {
            for g in spec.groups.iter().flatten() {
                in_groups.extend_from_slice(lookup(&f.by_group, g));
            }
            in_groups.sort_unstable();
            in_groups.dedup();
        }
        Merge {
            lists,
            in_groups,
            next_group: 0,
        }
        .map(|p| p as usize)
        .filter(move |&p| self.requirements[p].iter().all(|r| r.holds(spec)))
    }
}

fn lookup<'a>(map: &'a Buckets, value: &str) -> &'a [u32] {
    map.get(value).map_or(&[], Vec::as_slice)
}

/// Where a rule is filed: under a field of resource attributes, the verb of non-resource
/// attributes, or a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filed {
    Field(Dimension),
    NonResourceVerb,
    Group,
}

/// Where a rule is filed and under which values.
type Key<'a> = (Filed, &'a [Box<str>]);

/// For resource reviews: the most selective field requirement (fewest values; ties in
/// [`Dimension::ALL`] order), else a group.
fn resource_key(reqs: &[Requirement]) -> Option<Key<'_>> {
    reqs.iter()
        .filter_map(|r| match r {
            Requirement::Field(d, values) => Some((*d, &**values)),
            _ => None,
        })
        .min_by_key(|(d, values)| {
            let rank = Dimension::ALL.iter().position(|x| x == d);
            (values.len(), rank)
        })
        .map(|(d, values)| (Filed::Field(d), values))
        .or_else(|| group_key(reqs))
}

/// For non-resource reviews: the verb requirement with the fewest values, else a group.
fn non_resource_key(reqs: &[Requirement]) -> Option<Key<'_>> {
    reqs.iter()
        .filter_map(|r| match r {
            Requirement::NonResourceVerb(values) => Some(&**values),
            _ => None,
        })
        .min_by_key(|values| values.len())
        .map(|values| (Filed::NonResourceVerb, values))
        .or_else(|| group_key(reqs))
}

fn group_key(reqs: &[Requirement]) -> Option<Key<'_>> {
    reqs.iter().find_map(|r| match r {
        Requirement::InGroup(g) => Some((Filed::Group, std::slice::from_ref(g))),
        _ => None,
    })
}

/// Sorted lists merged in order (a rule is filed in at most one of them).
struct Merge<'a> {
    lists: [&'a [u32]; 6],
    in_groups: Vec<u32>,
    next_group: usize,
}

impl Iterator for Merge<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let group = self.in_groups.get(self.next_group).copied();
        let list = self
            .lists
            .iter()
            .enumerate()
            .filter_map(|(i, l)| l.first().map(|p| (i, *p)))
            .min_by_key(|(_, p)| *p);
        match (list, group) {
            (Some((_, p)), Some(g)) if g < p => {
                self.next_group += 1;
                Some(g)
            }
            (Some((i, p)), _) => {
                self.lists[i] = &self.lists[i][1..];
                Some(p)
            }
            (None, Some(g)) => {
                self.next_group += 1;
                Some(g)
            }
            (None, None) => None,
        }
    }
}
