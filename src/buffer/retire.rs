//! Retiring a finalizer: when a configuration reload drops a `buffer` block (or a kind from its
//! `resources`, or renames its finalizer), the objects still carrying the old finalizer would
//! never finish a deletion, since no controller removes it any more. The leader therefore lists
//! each retired kind once and takes the old finalizer off every object carrying it, Terminating
//! ones included (there is no cool-down left to wait for). A restart with the block already
//! gone cannot know the old finalizer: remove the block while warrant runs, or take the
//! finalizer off by hand (`kubectl patch`, with break-glass or a ticket).

use super::context::api_for;
use super::error::BufferError;
use super::kinds;
use super::metrics::BufferMetrics;
use super::patch::{self, Patched};
use crate::config::model::buffer::BufferSettings;
use crate::config::model::guard::Kind;
use kube::api::{Api, DynamicObject, ListParams};

/// Objects listed per page.
const PAGE: u32 = 500;

/// The `(finalizer, kind)` pairs of `old` that no settings of `new` still cover.
pub(crate) fn retired<'a>(
    old: impl IntoIterator<Item = &'a BufferSettings>,
    new: &[&BufferSettings],
) -> Vec<(String, Kind)> {
    let kept = |f: &str, k: &Kind| {
        new.iter()
            .any(|s| s.finalizer == f && s.covers(&k.group, &k.resource))
    };
    let mut out: Vec<(String, Kind)> = Vec::new();
    for s in old {
        for k in &s.resources {
            let pair = (s.finalizer.clone(), k.clone());
            if !kept(&s.finalizer, k) && !out.contains(&pair) {
                out.push(pair);
            }
        }
    }
    out
}

/// Takes `finalizer` off every object of `kind`; returns how many.
pub(crate) async fn retire(
    client: &kube::Client,
    kind: &Kind,
    finalizer: &str,
    metrics: &BufferMetrics,
) -> Result<usize, BufferError> {
    let resource = kinds::resolve(client, kind).await?;
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let mut params = ListParams::default().limit(PAGE);
    let mut removed = 0;
    loop {
        let page = api
            .list_metadata(&params)
            .await
            .map_err(|e| patch::api_error("list", &resource.plural, e))?;
        for o in &page.items {
            let target = api_for(client, &resource, &o.metadata);
            if patch::remove(&target, &o.metadata, finalizer).await? == Patched::Done {
                metrics.removed("RETIRED");
                removed += 1;
            }
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(next) => params = params.continue_token(&next),
            None => return Ok(removed),
        }
    }
}
