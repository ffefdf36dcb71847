//! The HTTPS server: hyper 1 on tokio with rustls, HTTP/1.1 and HTTP/2 (ALPN), handshake and
//! header-read timeouts, and a graceful drain on shutdown. It speaks HTTP, TLS and caller
//! authentication and knows no rules: reviews go to the live chain through [`routes`], admission
//! requests through `admit`.

pub mod admit;
pub mod body;
pub mod bootstrap;
pub mod caller;
mod connection;
mod decoded;
mod details;
mod preface;
mod rejection;
pub(crate) mod routes;
mod slots;
mod tickets;
pub mod tls;

pub use rejection::Rejection;
pub use routes::{AppState, ConnectionInfo};
pub(crate) use slots::Trust;

use connection::{ConnectionSettings, Drain};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use hyper_util::server::conn::auto;
use slots::{Admitted, Slot, Slots};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;
use tls::ReloadingTls;
use tokio::net::TcpListener;

type TlsStream = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;

/// Timeouts and limits of the listener.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The HTTPS address.
    pub listen: SocketAddr,
    /// An optional plain-HTTP address; must be loopback.
    pub insecure_listen: Option<SocketAddr>,
    /// How long a TLS handshake may take.
    pub(crate) handshake_timeout: Duration,
    /// How long a client may take to send request headers (HTTP/1.1).
    pub header_read_timeout: Duration,
    /// How long in-flight requests may take to finish after shutdown begins.
    pub shutdown_grace: Duration,
    /// Most concurrent HTTP/2 streams per connection.
    pub(crate) max_concurrent_streams: u32,
    /// Most open connections (TLS handshakes included); past it, a new connection takes the
    /// slot of the oldest unauthenticated one, or waits in the kernel's backlog when every slot
    /// is held by an authenticated connection.
    pub max_connections: usize,
    /// Most connections that have not authenticated yet (handshakes included); `None`: an
    /// eighth of `max_connections`, at least one. The rest of the cap is kept for
    /// authenticated callers.
    pub max_unauthenticated_connections: Option<usize>,
    /// How long a connection may stay open without authenticating (a verified client
    /// certificate, or a first request that passes caller authentication), from its accept.
    pub unauthenticated_timeout: Duration,
    /// How long a connection may sit with no request in flight before it is closed gracefully.
    pub idle_timeout: Duration,
}

impl ServerOptions {
    /// Defaults for a listen address: 10 s handshake and header timeouts, 30 s drain, 250
    /// streams, 1,024 connections of which 128 may be unauthenticated, each for at most 10 s,
    /// 120 s idle timeout (above the 90 s after which Go's HTTP client, kube-apiserver's, drops
    /// its own idle connections).
    pub fn new(listen: SocketAddr) -> Self {
        Self {
            listen,
            insecure_listen: None,
            handshake_timeout: Duration::from_secs(10),
            header_read_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(30),
            max_concurrent_streams: 250,
            max_connections: 1024,
            max_unauthenticated_connections: None,
            unauthenticated_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
        }
    }

    /// The unauthenticated share of the cap.
    fn unauthenticated_cap(&self) -> usize {
        self.max_unauthenticated_connections
            .unwrap_or(self.max_connections / 8)
            .clamp(1, self.max_connections.max(1))
    }
}

/// Why the listeners could not be bound.
#[derive(Debug, Error)]
pub enum BindError {
    /// An address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// The plain-HTTP address is not loopback.
    #[error(
        "--insecure-listen {0} refused: plain HTTP is only served on a loopback address (127.0.0.0/8 or ::1)"
    )]
    InsecureNotLoopback(SocketAddr),
}

/// A bound server, ready to run.
pub struct Server {
    listener: TcpListener,
    insecure: Option<TcpListener>,
    tls: Arc<ReloadingTls>,
    state: Arc<AppState>,
    options: ServerOptions,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("options", &self.options)
            .finish()
    }
}

async fn bind(addr: SocketAddr) -> Result<TcpListener, BindError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| BindError::Bind { addr, source })
}

impl Server {
    /// Binds the listeners.
    pub async fn bind(
        options: ServerOptions,
        tls: Arc<ReloadingTls>,
        state: Arc<AppState>,
    ) -> Result<Self, BindError> {
        if let Some(addr) = options.insecure_listen
            && !addr.ip().is_loopback()
        {
            return Err(BindError::InsecureNotLoopback(addr));
        }
        let listener = bind(options.listen).await?;
        let insecure = match options.insecure_listen {
            Some(addr) => Some(bind(addr).await?),
            None => None,
        };
        Ok(Self {
            listener,
            insecure,
            tls,
            state,
            options,
        })
    }

    /// The bound HTTPS address (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or(self.options.listen)
    }

    /// The bound plain-HTTP address, if any.
    pub fn insecure_addr(&self) -> Option<SocketAddr> {
        self.insecure.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// Serves until `shutdown` completes, then stops accepting and drains in-flight requests
    /// for at most the grace period.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let Server {
            listener,
            insecure,
            tls,
            state,
            options,
        } = self;
        let settings = connection_settings(&options);
        let slots = Slots::new(options.max_connections, options.unauthenticated_cap());
        let drain = Drain::new();
        // Handshakes run in their own tasks and hand finished TLS streams back here, so only
        // connections that completed a handshake are drained on shutdown; a handshake still
        // in progress is simply abandoned.
        let (handshaken, mut ready) = tokio::sync::mpsc::channel::<Handshaken>(64);
        let mut backoff = AcceptBackoff::default();
        tokio::pin!(shutdown);
        'serving: loop {
            // When every slot is held by an authenticated connection, nothing is accepted
            // until one frees; otherwise a new connection can always have a slot.
            tokio::select! {
                _ = slots.admissible() => {}
                Some((stream, info, slot)) = ready.recv() => {
                    connection::spawn(&settings, drain.handle(), slot, state.clone(), info, stream);
                    continue;
                }
                _ = &mut shutdown => break,
            };
            let accepted = tokio::select! {
                a = listener.accept() => a.map(|(tcp, _)| (tcp, false)),
                a = accept_optional(insecure.as_ref()) => a.map(|(tcp, _)| (tcp, true)),
                Some((stream, info, held)) = ready.recv() => {
                    connection::spawn(&settings, drain.handle(), held, state.clone(), info, stream);
                    continue;
                }
                _ = &mut shutdown => break,
            };
            let (tcp, plain) = match accepted {
                Ok(a) => a,
                Err(e) => {
                    backoff.failed(&e).await;
                    continue;
                }
            };
            backoff.reset();
            no_delay(&tcp);
            // The slot is taken once the connection exists (displacing the oldest
            // unauthenticated one when needed); only a race with promotions can make it wait.
            let slot = loop {
                tokio::select! {
                    (s, admitted) = slots.admit() => {
                        match admitted {
                            Admitted::Displaced => backoff.at_cap(options.max_connections),
                            Admitted::Free => backoff.below_cap(),
                        }
                        break s;
                    }
                    Some((stream, info, held)) = ready.recv() => {
                        connection::spawn(&settings, drain.handle(), held, state.clone(), info, stream);
                    }
                    _ = &mut shutdown => break 'serving,
                }
            };
            let handoff = Handoff {
                settings: &settings,
                drain: &drain,
                state: &state,
                tls: &tls,
                handshake_timeout: options.handshake_timeout,
                handshaken: &handshaken,
            };
            handoff.start(tcp, plain, slot);
        }
        drop(ready);
        drop(listener);
        drop(insecure);
        drain_within(drain, options.shutdown_grace).await;
    }
}

/// What an accepted connection is handed to: served at once on the plain-HTTP listener, after
/// its TLS handshake (in a task of its own) on the TLS one.
struct Handoff<'a> {
    settings: &'a ConnectionSettings,
    drain: &'a Drain,
    state: &'a Arc<AppState>,
    tls: &'a Arc<ReloadingTls>,
    handshake_timeout: Duration,
    handshaken: &'a tokio::sync::mpsc::Sender<Handshaken>,
}

impl Handoff<'_> {
    /// Starts serving `tcp` in `slot` (`plain`: it came in on the plain-HTTP listener).
    fn start(&self, tcp: tokio::net::TcpStream, plain: bool, slot: Slot) {
        if plain {
            let info = ConnectionInfo {
                verified_cert: false,
                insecure: true,
            };
            let (drain, state) = (self.drain.handle(), self.state.clone());
            connection::spawn(self.settings, drain, slot, state, info, tcp);
        } else {
            let acceptor = tokio_rustls::TlsAcceptor::from(self.tls.current());
            let handshaken = self.handshaken.clone();
            spawn_handshake(acceptor, tcp, self.handshake_timeout, slot, handshaken);
        }
    }
}

/// The settings every connection is served with.
fn connection_settings(options: &ServerOptions) -> ConnectionSettings {
    ConnectionSettings {
        builder: Arc::new(http_builder(options)),
        header_read_timeout: options.header_read_timeout,
        idle_timeout: options.idle_timeout,
        unauthenticated_timeout: options.unauthenticated_timeout,
    }
}

/// TCP_NODELAY, as Go's net package sets on every connection (kube-apiserver's side of this one
/// has it): a small answer must not wait for Nagle and a delayed ACK.
fn no_delay(tcp: &tokio::net::TcpStream) {
    if let Err(e) = tcp.set_nodelay(true) {
        tracing::debug!(error = %e, "cannot set TCP_NODELAY");
    }
}

/// Waits for the in-flight requests to finish, for at most `grace`.
async fn drain_within(drain: Drain, grace: Duration) {
    tracing::info!("shutting down: draining in-flight requests");
    if tokio::time::timeout(grace, drain.wait()).await.is_err() {
        tracing::warn!("grace period ended with requests still in flight");
    }
}

/// A finished TLS handshake, handed back to the accept loop.
type Handshaken = (TlsStream, ConnectionInfo, Slot);

/// The accept loop's back-off: a failing `accept` (out of file descriptors, typically) waits
/// 50 ms, doubling up to 1 s, and is logged once per streak instead of every time; reaching the
/// connection cap is logged once until a connection is admitted below it again.
#[derive(Debug, Default)]
struct AcceptBackoff {
    failures: u32,
    capped: bool,
}

impl AcceptBackoff {
    async fn failed(&mut self, e: &std::io::Error) {
        if self.failures == 0 {
            tracing::warn!(error = %e, "accept failed; backing off until it succeeds");
        }
        let delay = Duration::from_millis(50) * 2u32.saturating_pow(self.failures.min(5));
        self.failures += 1;
        tokio::time::sleep(delay.min(Duration::from_secs(1))).await;
    }

    fn at_cap(&mut self, cap: usize) {
        if !self.capped {
            tracing::warn!(
                max_connections = cap,
                "connection limit reached: the oldest unauthenticated connections are closed \
                 to make room for new ones"
            );
            self.capped = true;
        }
    }

    fn below_cap(&mut self) {
        self.capped = false;
    }

    fn reset(&mut self) {
        if self.failures > 0 {
            tracing::info!(failures = self.failures, "accept recovered");
        }
        self.failures = 0;
    }
}

/// The HTTP/1.1 and HTTP/2 connection builder with the server's timeouts and limits. HTTP/2
/// flow control is sized for review traffic (small bodies): a stream may have 64 KiB in flight
/// and a connection 1 MiB, so one connection's unread bodies stay bounded whatever its stream
/// count.
fn http_builder(options: &ServerOptions) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(options.header_read_timeout)
        .keep_alive(true);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(options.max_concurrent_streams)
        .initial_stream_window_size(64 * 1024)
        .initial_connection_window_size(1024 * 1024)
        .keep_alive_interval(Some(Duration::from_secs(30)));
    builder
}

/// Runs one TLS handshake in its own task, bounded by `timeout` and ended early when a newer
/// connection takes its slot, and hands the stream back to the accept loop (a connection that
/// presented a verified client certificate is authenticated from here on); a failed or late
/// handshake only logs at debug level.
fn spawn_handshake(
    acceptor: tokio_rustls::TlsAcceptor,
    tcp: tokio::net::TcpStream,
    timeout: Duration,
    mut slot: Slot,
    handshaken: tokio::sync::mpsc::Sender<Handshaken>,
) {
    tokio::spawn(async move {
        let accepted = tokio::select! {
            a = tokio::time::timeout(timeout, acceptor.accept(tcp)) => a,
            _ = slot.displaced() => {
                tracing::debug!("TLS handshake displaced by a newer connection");
                return;
            }
        };
        let stream = match accepted {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                refused_handshake(&e);
                return;
            }
            Err(_) => {
                tracing::debug!("TLS handshake timed out");
                return;
            }
        };
        let info = ConnectionInfo {
            verified_cert: stream
                .get_ref()
                .1
                .peer_certificates()
                .is_some_and(|c| !c.is_empty()),
            insecure: false,
        };
        if info.verified_cert {
            slot.trust().authenticated();
        }
        // The server may have stopped meanwhile; then the stream is dropped.
        let _ = handshaken.send((stream, info, slot)).await;
    });
}

/// Logs a failed handshake: a refused client certificate (none, expired, another CA's) at INFO,
/// at most once per [`REFUSAL_LOG_INTERVAL`] with the count of those not logged, since an
/// operator needs to see a misconfigured caller but a scanner must not flood the log; any other
/// failure (a port scan, a client giving up) at DEBUG.
fn refused_handshake(e: &std::io::Error) {
    if !is_certificate_refusal(e) {
        tracing::debug!(error = %e, "TLS handshake failed");
        return;
    }
    if let Some(suppressed) = REFUSALS.due(std::time::Instant::now()) {
        tracing::info!(error = %e, suppressed, "client certificate refused");
    }
}

/// Whether a handshake failed on the client's certificate (none presented, or not valid).
fn is_certificate_refusal(e: &std::io::Error) -> bool {
    let tls = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>());
    matches!(
        tls,
        Some(rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented)
    )
}

/// How often a refused client certificate is logged at most.
const REFUSAL_LOG_INTERVAL: Duration = Duration::from_secs(10);

static REFUSALS: RefusalLog = RefusalLog {
    last: std::sync::Mutex::new(None),
    suppressed: std::sync::atomic::AtomicU64::new(0),
};

/// When refusals were last logged, and how many were not logged since.
struct RefusalLog {
    last: std::sync::Mutex<Option<std::time::Instant>>,
    suppressed: std::sync::atomic::AtomicU64,
}

impl RefusalLog {
    /// `Some(suppressed since the last line)` when a line is due at `now`; else counts one more
    /// suppressed refusal.
    fn due(&self, now: std::time::Instant) -> Option<u64> {
        use std::sync::atomic::Ordering;
        let mut last = self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if last.is_some_and(|t| now.duration_since(t) < REFUSAL_LOG_INTERVAL) {
            self.suppressed.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        *last = Some(now);
        Some(self.suppressed.swap(0, Ordering::Relaxed))
    }
}

async fn accept_optional(
    listener: Option<&TcpListener>,
) -> std::io::Result<(tokio::net::TcpStream, SocketAddr)> {
    match listener {
        Some(l) => l.accept().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::{REFUSAL_LOG_INTERVAL, RefusalLog, is_certificate_refusal};
    use std::time::{Duration, Instant};

    #[test]
    fn certificate_refusals_are_told_apart() {
        let wrap = |e: rustls::Error| std::io::Error::new(std::io::ErrorKind::InvalidData, e);
        assert!(is_certificate_refusal(&wrap(
            rustls::Error::NoCertificatesPresented
        )));
        assert!(is_certificate_refusal(&wrap(
            rustls::Error::InvalidCertificate(rustls::CertificateError::Expired)
        )));
        assert!(!is_certificate_refusal(&wrap(
            rustls::Error::HandshakeNotComplete
        )));
        assert!(!is_certificate_refusal(&std::io::Error::from(
            std::io::ErrorKind::UnexpectedEof
        )));
    }

    #[test]
    fn certificate_refusals_are_logged_at_info_once_per_interval_with_the_count_in_between() {
        let log = RefusalLog {
            last: std::sync::Mutex::new(None),
            suppressed: std::sync::atomic::AtomicU64::new(0),
        };
        let t0 = Instant::now();
        assert_eq!(log.due(t0), Some(0));
        assert_eq!(log.due(t0 + Duration::from_secs(1)), None);
        assert_eq!(log.due(t0 + Duration::from_secs(2)), None);
        assert_eq!(log.due(t0 + REFUSAL_LOG_INTERVAL), Some(2));
        assert_eq!(log.due(t0 + REFUSAL_LOG_INTERVAL), None);
    }
}
