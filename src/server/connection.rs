//! One served connection, from its first bytes to its close: the idle timeout (a connection
//! with no review in flight for `idle_timeout` is shut down gracefully: HTTP/2 sends GOAWAY,
//! HTTP/1.1 closes after the current exchange; probes do not count as activity, so a client
//! polling `/healthz` does not keep a connection forever), the shutdown drain (every connection
//! is told to finish its in-flight requests; [`Drain::wait`] resolves when the last one is
//! gone), and the connection slot it holds until it closes (the listener's cap, see
//! `slots.rs`): a connection that has not authenticated within `unauthenticated_timeout` of its
//! accept is shut down, and one whose slot a newer connection took is dropped at once.

use super::preface;
use super::routes::{self, AppState, ConnectionInfo};
use super::slots::Slot;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// Tells connections to drain and waits until they have.
#[derive(Debug)]
pub(super) struct Drain {
    signal: watch::Sender<bool>,
    alive: mpsc::Sender<()>,
    gone: mpsc::Receiver<()>,
}

/// What a connection task holds of the drain: the signal, and a token whose drop says "gone".
#[derive(Debug, Clone)]
pub(super) struct DrainHandle {
    signal: watch::Receiver<bool>,
    _alive: mpsc::Sender<()>,
}

impl Drain {
    /// A drain with no connection yet.
    pub(super) fn new() -> Self {
        let (signal, _) = watch::channel(false);
        let (alive, gone) = mpsc::channel(1);
        Self {
            signal,
            alive,
            gone,
        }
    }

    /// The handle a new connection task keeps.
    pub(super) fn handle(&self) -> DrainHandle {
        DrainHandle {
            signal: self.signal.subscribe(),
            _alive: self.alive.clone(),
        }
    }

    /// Tells every connection to finish and resolves when the last one has closed.
    pub(super) async fn wait(self) {
        let Drain {
            signal,
            alive,
            mut gone,
        } = self;
        let _ = signal.send(true);
        drop(alive);
        // `recv` yields `None` once every handle's sender is dropped; nothing is ever sent.
        while gone.recv().await.is_some() {}
    }
}

/// How one connection is served.
#[derive(Debug, Clone)]
pub(super) struct ConnectionSettings {
    /// hyper's HTTP/1.1 and HTTP/2 builder.
    pub(super) builder: Arc<auto::Builder<TokioExecutor>>,
    /// How long the first bytes may take.
    pub(super) header_read_timeout: Duration,
    /// How long a connection may sit with no request in flight.
    pub(super) idle_timeout: Duration,
    /// How long a connection may stay open without authenticating.
    pub(super) unauthenticated_timeout: Duration,
}

/// How long an unauthenticated connection told to close (its time budget spent) may take to
/// finish what it has in flight before it is dropped.
const UNAUTHENTICATED_GRACE: Duration = Duration::from_secs(1);

/// Whether a path is a probe, which is not activity that keeps a connection open.
fn is_probe(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz" | "/livez")
}

/// Requests in flight on one connection and when the last one ended.
#[derive(Debug)]
struct Activity {
    started: Instant,
    in_flight: AtomicUsize,
    last_ms: AtomicU64,
}

impl Activity {
    fn new() -> Self {
        Self {
            started: Instant::now(),
            in_flight: AtomicUsize::new(0),
            last_ms: AtomicU64::new(0),
        }
    }

    fn touch(&self) {
        let ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    /// How long the connection has had nothing in flight (zero while a request runs).
    fn idle_for(&self) -> Duration {
        if self.in_flight.load(Ordering::Relaxed) > 0 {
            return Duration::ZERO;
        }
        let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
        self.started.elapsed().saturating_sub(last)
    }
}

/// Counts one request in flight for as long as it lives (also when its future is dropped).
struct InFlight(Arc<Activity>);

impl InFlight {
    fn start(activity: &Arc<Activity>) -> Self {
        activity.in_flight.fetch_add(1, Ordering::Relaxed);
        Self(activity.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A connection counted in `warrant_http_open_connections` from the moment it is served until
/// it closes.
struct OpenConnection {
    gauge: prometheus_client::metrics::gauge::Gauge,
}

impl OpenConnection {
    fn new(state: &AppState) -> Self {
        let gauge = state.metrics.open_connections().clone();
        gauge.inc();
        Self { gauge }
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

/// Serves one connection in its own task, holding `slot` until it closes.
pub(super) fn spawn<I>(
    settings: &ConnectionSettings,
    drain: DrainHandle,
    mut slot: Slot,
    state: Arc<AppState>,
    info: ConnectionInfo,
    io: I,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let settings = settings.clone();
    tokio::spawn(async move {
        let _open = OpenConnection::new(&state);
        // Until its first bytes arrive, a connection is not drained: a silent one neither
        // delays the drain nor outlives the header-read timeout.
        let preface = tokio::select! {
            p = preface::read_ahead(io, settings.header_read_timeout) => p,
            _ = slot.displaced() => {
                tracing::debug!("connection displaced by a newer one before a request");
                return;
            }
        };
        let io = match preface {
            Ok(io) => io,
            Err(e) => {
                tracing::debug!(error = %e, "connection dropped before a request");
                return;
            }
        };
        serve(settings, drain, slot, state, info, io).await;
    });
}

async fn serve<I>(
    settings: ConnectionSettings,
    mut drain: DrainHandle,
    mut slot: Slot,
    state: Arc<AppState>,
    info: ConnectionInfo,
    io: I,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let activity = Arc::new(Activity::new());
    let tracked = activity.clone();
    let trust = slot.trust();
    let service = service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
        let state = state.clone();
        let in_flight = (!is_probe(req.uri().path())).then(|| InFlight::start(&tracked));
        req.extensions_mut().insert(trust.clone());
        // Boxed by `serve` at its route's size: hyper moves each request's future into the
        // task it spawns, and the task moves it again as it runs; a box is a pointer.
        let route = routes::serve(state, info, req);
        async move {
            let resp = route.await;
            drop(in_flight);
            Ok::<_, Infallible>(resp)
        }
    });
    let conn = settings.builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    let check = (settings.idle_timeout / 4).max(Duration::from_millis(100));
    let budget = slot.admitted() + settings.unauthenticated_timeout;
    let mut closing = false;
    // Once an unauthenticated connection is told to close, when it is dropped regardless.
    let mut cut_off: Option<Instant> = None;
    loop {
        // Read again each time round; a branch armed while the connection was unauthenticated
        // checks again when it fires, as a request may have authenticated it meanwhile (a
        // bearer token promotes the connection from inside a request, not at the handshake).
        let unauthenticated = !slot.is_authenticated();
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                return;
            }
            _ = slot.displaced() => {
                tracing::debug!("unauthenticated connection displaced by a newer one");
                return;
            }
            _ = tokio::time::sleep_until(budget), if unauthenticated && cut_off.is_none() => {
                if slot.is_authenticated() {
                    continue;
                }
                tracing::debug!(
                    budget = ?settings.unauthenticated_timeout,
                    "closing a connection that did not authenticate in time"
                );
                if !closing {
                    conn.as_mut().graceful_shutdown();
                    closing = true;
                }
                cut_off = Some(Instant::now() + UNAUTHENTICATED_GRACE);
            }
            _ = sleep_until_some(cut_off), if unauthenticated => {
                if !slot.is_authenticated() {
                    return;
                }
            }
            _ = drain.signal.changed(), if !closing => {
                conn.as_mut().graceful_shutdown();
                closing = true;
            }
            _ = tokio::time::sleep(check), if !closing => {
                if activity.idle_for() >= settings.idle_timeout {
                    tracing::debug!(idle = ?settings.idle_timeout, "closing an idle connection");
                    conn.as_mut().graceful_shutdown();
                    closing = true;
                }
            }
        }
    }
}

/// Sleeps until `at`, or forever when there is no such instant.
async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
