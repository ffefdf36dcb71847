//! Reading a request body under three bounds: its own size (`MAX_BODY_BYTES`, 413), its time
//! (`BODY_READ_TIMEOUT`, 408), and the process-wide [`BodyBudget`] of request bytes held in
//! memory at once (429 with `Retry-After` when spent, so a flood of half-sent bodies over many
//! HTTP/2 streams cannot grow the process without bound). The budget is taken frame by frame
//! as bytes arrive, and given back when the request's [`BodyHold`] is dropped. The bytes of a
//! body beyond its first MiB (the SubjectAccessReview limit: only admission and conditions
//! reviews grow so large) may use at most half the budget, so a few large bodies sent slowly
//! cannot leave ordinary reviews without room. A body that may be large only if it says so
//! ([`Growth`]) is refused at the small limit unless its first bytes declare the large kind.
//! The tree a body decodes into is charged to the same budget before it is built
//! (`super::decoded`).

use super::rejection::Rejection;
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The budget's unit: permits are KiB.
const UNIT: usize = 1024;

/// The largest SubjectAccessReview body accepted (1 MiB).
pub(crate) const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The largest AdmissionReview body accepted (8 MiB). An UPDATE carries the object twice, new
/// and stored: the new one is bounded by kube-apiserver's request body limit (3 MiB,
/// `MaxRequestBodyBytes` in `k8s.io/apiserver/pkg/server/config.go`), the stored one by the same
/// limit when it was written; 2 MiB more cover the envelope. A smaller limit would refuse (and,
/// with `failurePolicy: Fail`, block) updates of large objects such as CustomResourceDefinitions.
pub(crate) const MAX_ADMISSION_BODY_BYTES: usize = 8 * 1024 * 1024;

/// How long a client may take to send the body after its headers.
pub(crate) const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a body counts as large: past the SubjectAccessReview limit.
const LARGE_FROM: usize = MAX_BODY_BYTES;

/// The request bytes all connections may hold in memory at once.
#[derive(Debug, Clone)]
pub struct BodyBudget {
    permits: Arc<Semaphore>,
    /// The share of `permits` that bytes of bodies past [`LARGE_FROM`] may hold.
    large: Arc<Semaphore>,
    bytes: usize,
}

impl BodyBudget {
    /// A budget of `bytes` (rounded up to whole KiB, at least one).
    pub fn new(bytes: usize) -> Self {
        let units = bytes.div_ceil(UNIT).clamp(1, Semaphore::MAX_PERMITS);
        Self {
            permits: Arc::new(Semaphore::new(units)),
            large: Arc::new(Semaphore::new(units.div_ceil(2))),
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
pub struct BodyHold {
    all: Option<OwnedSemaphorePermit>,
    large: Option<OwnedSemaphorePermit>,
}

/// Takes `units` more of `from` into `held`; false when they are not available.
fn take(from: &Arc<Semaphore>, held: &mut Option<OwnedSemaphorePermit>, units: usize) -> bool {
    if units == 0 {
        return true;
    }
    let Ok(n) = u32::try_from(units) else {
        return false;
    };
    let Ok(more) = from.clone().try_acquire_many_owned(n) else {
        return false;
    };
    match held {
        Some(h) => h.merge(more),
        None => *held = Some(more),
    }
    true
}

impl BodyHold {
    /// Holds the bytes of a body growing from `from` to `to` bytes.
    fn grow(&mut self, budget: &BodyBudget, from: usize, to: usize) -> bool {
        let units = to.div_ceil(UNIT) - from.div_ceil(UNIT);
        let large = |n: usize| n.saturating_sub(LARGE_FROM).div_ceil(UNIT);
        take(&budget.large, &mut self.large, large(to) - large(from))
            && take(&budget.permits, &mut self.all, units)
    }

    /// Holds `bytes` more (a decoded tree's estimated size); refused with 429 when the
    /// budget does not have them.
    pub fn charge(&mut self, budget: &BodyBudget, bytes: usize) -> Result<(), Rejection> {
        if take(&budget.permits, &mut self.all, bytes.div_ceil(UNIT)) {
            Ok(())
        } else {
            Err(Rejection::Overloaded {
                budget: budget.bytes(),
            })
        }
    }
}

/// Whether a body's first bytes declare it the larger kind.
pub type Declared = fn(&[u8]) -> bool;

/// How large a body may grow: to `limit`, or past it up to `larger` when its first bytes
/// satisfy `declared` (checked once, when the body first grows past `limit`).
#[derive(Clone, Copy)]
pub struct Growth {
    /// The limit for any body.
    pub limit: usize,
    /// The limit for a body that declares itself as the larger kind, and the test of its
    /// first bytes.
    pub larger: Option<(usize, Declared)>,
}

impl Growth {
    /// At most `limit` bytes, whatever the body says.
    pub fn at_most(limit: usize) -> Self {
        Self {
            limit,
            larger: None,
        }
    }
}

/// How many first bytes [`Growth`]'s test sees.
const DECLARATION_BYTES: usize = 4096;

/// Reads a body within `growth` and `timeout`, holding its bytes against `budget`.
pub async fn read(
    body: Incoming,
    growth: Growth,
    timeout: Duration,
    budget: &BodyBudget,
) -> Result<(Bytes, BodyHold), Rejection> {
    match tokio::time::timeout(timeout, collect(body, growth, budget)).await {
        Err(_) => Err(Rejection::BodyTimeout(timeout)),
        Ok(result) => result,
    }
}

async fn collect(
    mut body: Incoming,
    growth: Growth,
    budget: &BodyBudget,
) -> Result<(Bytes, BodyHold), Rejection> {
    let mut buf = BytesMut::new();
    let mut hold = BodyHold::default();
    let mut limit = growth.limit;
    let mut larger = growth.larger;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Rejection::BodyRead(Box::new(e)))?;
        let Ok(data) = frame.into_data() else {
            continue; // trailers carry nothing a review needs
        };
        let len = buf.len() + data.len();
        if len > limit {
            match larger.take() {
                Some((more, declared)) if declared(&first_bytes(&buf, &data)) => limit = more,
                _ => return Err(Rejection::TooLarge { limit }),
            }
            if len > limit {
                return Err(Rejection::TooLarge { limit });
            }
        }
        if !hold.grow(budget, buf.len(), len) {
            return Err(Rejection::Overloaded {
                budget: budget.bytes(),
            });
        }
        buf.extend_from_slice(&data);
    }
    Ok((buf.freeze(), hold))
}

/// The first [`DECLARATION_BYTES`] of what has arrived and what is arriving.
fn first_bytes(buf: &[u8], data: &[u8]) -> Vec<u8> {
    let mut head = buf[..buf.len().min(DECLARATION_BYTES)].to_vec();
    let more = DECLARATION_BYTES - head.len();
    head.extend_from_slice(&data[..data.len().min(more)]);
    head
}
