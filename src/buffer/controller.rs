//! One kind's controller: a metadata watch of every object of the kind (`PartialObjectMeta`,
//! so 10k objects stay small: `managedFields` and every annotation but the two the buffer
//! reads are dropped before the store), fed into kube-runtime's applier, which reconciles each
//! changed object (at most [`CONCURRENCY`] at once) and wakes the held ones when they next can
//! go. It runs until dropped (leadership lost, configuration changed).

use super::context::Context;
use super::holds::Holds;
use super::reconcile::{error_policy, reconcile};
use futures_util::{StreamExt, TryStreamExt};
use kube::api::{Api, DynamicObject};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::{Config, trigger_self};
use kube::runtime::reflector::store::Writer;
use kube::runtime::{WatchStreamExt, applier, watcher};
use std::sync::Arc;

/// Reconciles running at once per kind.
pub const CONCURRENCY: u16 = 16;

/// Watches and reconciles one kind until dropped.
pub async fn run(ctx: Arc<Context>) {
    // An `Api` of `PartialObjectMeta` lists and watches metadata only.
    let api: Api<PartialObjectMeta<DynamicObject>> =
        Api::all_with(ctx.client.clone(), &ctx.resource);
    let writer = Writer::<PartialObjectMeta<DynamicObject>>::new(ctx.resource.clone());
    let store = writer.as_reader();
    let keep = [
        ctx.settings.confirmation_annotation.clone(),
        ctx.settings.requester_annotation.clone(),
    ];
    // A held object deleted by other means (its finalizer removed by hand) is never
    // reconciled again: its hold is forgotten on the watch's Delete event.
    let holds = ctx.metrics.holds().clone();
    let objects = watcher(api, watcher::Config::default())
        .default_backoff()
        .modify(move |o: &mut PartialObjectMeta<DynamicObject>| slim(o, &keep))
        .inspect_ok(move |event| forget_deleted(&holds, event))
        .reflect(writer)
        .applied_objects();
    let queue = trigger_self(objects, ctx.resource.clone());
    let config = Config::default().concurrency(CONCURRENCY);
    let (metrics, kind) = (ctx.metrics.clone(), ctx.resource.plural.clone());
    applier(
        |o, c| Box::pin(reconcile(o, c)),
        error_policy,
        ctx,
        store,
        queue,
        config,
    )
    .for_each(|result| {
        if let Err(e) = result {
            // Reconcile errors were logged by the error policy; what reaches here is the
            // watch failing (retried with backoff) or the queue.
            tracing::warn!(resource = %kind, error = %e, "buffer ring: watch or queue error");
            metrics.failed("watch");
        }
        std::future::ready(())
    })
    .await;
}

/// Drops what the controller never reads from a cached object.
fn slim(o: &mut PartialObjectMeta<DynamicObject>, keep: &[String; 2]) {
    o.metadata.managed_fields = None;
    if let Some(a) = o.metadata.annotations.as_mut() {
        a.retain(|k, _| keep.contains(k));
    }
}

/// Forgets the hold of a deleted object.
fn forget_deleted(holds: &Holds, event: &watcher::Event<PartialObjectMeta<DynamicObject>>) {
    if let watcher::Event::Delete(o) = event {
        holds.release(o.metadata.uid.as_deref().unwrap_or(""));
    }
}
