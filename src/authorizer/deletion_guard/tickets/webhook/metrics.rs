//! One ticket webhook's series, resolved when its guard is built:
//! `warrant_ticket_webhook_lookups_total{name,result}` (each call, by what the ticket system
//! answered or why it did not) and `warrant_ticket_webhook_cache_requests_total{name,result}`
//! (each lookup: `hit`, `miss`, `coalesced`).

use crate::authorizer::metrics::{ByResult, Families, WebhookLabels};
use prometheus_client::metrics::counter::Counter;

/// What a call can end with.
pub(crate) const LOOKUP_RESULTS: [&str; 11] = [
    "approved",
    "pending",
    "rejected",
    "expired",
    "not_found",
    "timeout",
    "canceled",
    "unreachable",
    "http_error",
    "malformed",
    "unusable",
];

/// How a lookup was served.
pub(crate) const CACHE_RESULTS: [&str; 3] = ["hit", "miss", "coalesced"];

/// The series of one guard's ticket webhook.
#[derive(Debug)]
pub struct TicketLookupMetrics {
    lookups: ByResult<WebhookLabels, Counter>,
    cache: ByResult<WebhookLabels, Counter>,
}

impl Default for TicketLookupMetrics {
    /// Series registered nowhere (tests, tools).
    fn default() -> Self {
        Self::new(&Families::default(), "")
    }
}

impl TicketLookupMetrics {
    /// The series of the ticket webhook of guard `name` in `families`.
    pub fn new(families: &Families, name: &str) -> Self {
        let labels = |name: &str| {
            let name = name.to_owned();
            move |result| WebhookLabels {
                name: name.clone(),
                result,
            }
        };
        Self {
            lookups: ByResult::new(&families.ticket_lookups, &LOOKUP_RESULTS, labels(name)),
            cache: ByResult::new(&families.ticket_cache, &CACHE_RESULTS, labels(name)),
        }
    }

    /// Records one call's outcome.
    pub(crate) fn record_lookup(&self, result: &'static str) {
        self.lookups.with(result, |c| {
            c.inc();
        });
    }

    /// Records how one lookup was served.
    pub(crate) fn record_cache(&self, result: &'static str) {
        self.cache.with(result, |c| {
            c.inc();
        });
    }
}
