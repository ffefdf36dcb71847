//! Reading a request body under three bounds: its own size (`MAX_BODY_BYTES`, 413), its time
//! (`BODY_READ_TIMEOUT`, 408), and the process-wide [`BodyBudget`] of request bytes held in
//! memory at once (429 with `Retry-After` when spent, so a flood of half-sent bodies over many
//! HTTP/2 streams cannot grow the process without bound). The budget is taken frame by frame
//! as bytes arrive, and given back when the request's [`BodyHold`] is dropped.

use super::rejection::Rejection;
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The budget's unit: permits are KiB.
const UNIT: usize = 1024;

/// The request bytes all connections may hold in memory at once.
#[derive(Debug, Clone)]
pub struct BodyBudget {
    permits: Arc<Semaphore>,
    bytes: usize,
}

impl BodyBudget {
    /// A budget of `bytes` (rounded up to whole KiB, at least one).
    pub fn new(bytes: usize) -> Self {
        let units = bytes.div_ceil(UNIT).clamp(1, Semaphore::MAX_PERMITS);
        Self {
            permits: Arc::new(Semaphore::new(units)),
            bytes,
        }
    }

    /// The budget in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Default for BodyBudget {
    /// 64 MiB: sixty-four bodies at the 1 MiB limit, thousands of ordinary reviews.
    fn default() -> Self {
        Self::new(64 * 1024 * 1024)
    }
}

/// The budget one request holds until it is answered.
#[derive(Debug, Default)]
pub struct BodyHold(Option<OwnedSemaphorePermit>);

impl BodyHold {
    fn grow(&mut self, budget: &BodyBudget, units: usize) -> bool {
        if units == 0 {
            return true;
        }
        let Ok(n) = u32::try_from(units) else {
            return false;
        };
        let Ok(more) = budget.permits.clone().try_acquire_many_owned(n) else {
            return false;
        };
        match &mut self.0 {
            Some(held) => held.merge(more),
            None => self.0 = Some(more),
        }
        true
    }
}

/// Reads a body of at most `limit` bytes within `timeout`, holding its bytes against `budget`.
pub async fn read(
    body: Incoming,
    limit: usize,
    timeout: Duration,
    budget: &BodyBudget,
) -> Result<(Bytes, BodyHold), Rejection> {
    match tokio::time::timeout(timeout, collect(body, limit, budget)).await {
        Err(_) => Err(Rejection::BodyTimeout(timeout)),
        Ok(result) => result,
    }
}

async fn collect(
    mut body: Incoming,
    limit: usize,
    budget: &BodyBudget,
) -> Result<(Bytes, BodyHold), Rejection> {
    let mut buf = BytesMut::new();
    let mut hold = BodyHold::default();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Rejection::BodyRead(Box::new(e)))?;
        let Ok(data) = frame.into_data() else {
            continue; // trailers carry nothing a review needs
        };
        let len = buf.len() + data.len();
        if len > limit {
            return Err(Rejection::TooLarge { limit });
        }
        let units = len.div_ceil(UNIT) - buf.len().div_ceil(UNIT);
        if !hold.grow(budget, units) {
            return Err(Rejection::Overloaded {
                budget: budget.bytes(),
            });
        }
        buf.extend_from_slice(&data);
    }
    Ok((buf.freeze(), hold))
}
