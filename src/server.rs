//! The HTTPS server: hyper 1 on tokio with rustls, HTTP/1.1 and HTTP/2 (ALPN), handshake and
//! header-read timeouts, and a graceful drain on shutdown. It speaks HTTP, TLS and caller
//! authentication and knows no rules: reviews go to the live chain through [`routes`], admission
//! requests through `admit`.

mod admit;
mod body;
pub mod bootstrap;
pub mod caller;
mod preface;
mod rejection;
pub mod routes;
pub mod tls;

pub use rejection::Rejection;
pub use routes::{AppState, ConnectionInfo};

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use std::convert::Infallible;
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
    pub handshake_timeout: Duration,
    /// How long a client may take to send request headers (HTTP/1.1).
    pub header_read_timeout: Duration,
    /// How long in-flight requests may take to finish after shutdown begins.
    pub shutdown_grace: Duration,
    /// Most concurrent HTTP/2 streams per connection.
    pub max_concurrent_streams: u32,
}

impl ServerOptions {
    /// Defaults for a listen address: 10 s handshake and header timeouts, 30 s drain, 250 streams.
    pub fn new(listen: SocketAddr) -> Self {
        Self {
            listen,
            insecure_listen: None,
            handshake_timeout: Duration::from_secs(10),
            header_read_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(30),
            max_concurrent_streams: 250,
        }
    }
}

/// Why the server could not start.
#[derive(Debug, Error)]
pub enum ServeError {
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

async fn bind(addr: SocketAddr) -> Result<TcpListener, ServeError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })
}

impl Server {
    /// Binds the listeners.
    pub async fn bind(
        options: ServerOptions,
        tls: Arc<ReloadingTls>,
        state: Arc<AppState>,
    ) -> Result<Self, ServeError> {
        if let Some(addr) = options.insecure_listen
            && !addr.ip().is_loopback()
        {
            return Err(ServeError::InsecureNotLoopback(addr));
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
        let builder = Arc::new(http_builder(&self.options));
        let graceful = GracefulShutdown::new();
        let Server {
            listener,
            insecure,
            tls,
            state,
            options,
        } = self;

        // Handshakes run in their own tasks and hand finished TLS streams back here, so only
        // connections that completed a handshake are drained on shutdown; a handshake still
        // in progress is simply abandoned.
        let (handshaken, mut ready) = tokio::sync::mpsc::channel::<(TlsStream, ConnectionInfo)>(64);
        tokio::pin!(shutdown);
        loop {
            let accepted = tokio::select! {
                a = listener.accept() => a.map(|(tcp, _)| (tcp, false)),
                a = accept_optional(insecure.as_ref()) => a.map(|(tcp, _)| (tcp, true)),
                Some((stream, info)) = ready.recv() => {
                    serve_connection(&builder, options.header_read_timeout, graceful.watcher(), state.clone(), info, stream);
                    continue;
                }
                _ = &mut shutdown => break,
            };
            match accepted {
                Ok((tcp, true)) => {
                    let info = ConnectionInfo {
                        verified_cert: false,
                        insecure: true,
                    };
                    let watcher = graceful.watcher();
                    let timeout = options.header_read_timeout;
                    serve_connection(&builder, timeout, watcher, state.clone(), info, tcp);
                }
                Ok((tcp, false)) => {
                    let acceptor = tokio_rustls::TlsAcceptor::from(tls.current());
                    spawn_handshake(acceptor, tcp, options.handshake_timeout, handshaken.clone());
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
        drop(ready);
        drop(listener);
        drop(insecure);
        tracing::info!("shutting down: draining in-flight requests");
        if tokio::time::timeout(options.shutdown_grace, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!("grace period ended with requests still in flight");
        }
    }
}

/// The HTTP/1.1 and HTTP/2 connection builder with the server's timeouts and limits.
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
        .keep_alive_interval(Some(Duration::from_secs(30)));
    builder
}

/// Runs one TLS handshake in its own task, bounded by `timeout`, and hands the stream back to
/// the accept loop; a failed or late handshake only logs at debug level.
fn spawn_handshake(
    acceptor: tokio_rustls::TlsAcceptor,
    tcp: tokio::net::TcpStream,
    timeout: Duration,
    handshaken: tokio::sync::mpsc::Sender<(TlsStream, ConnectionInfo)>,
) {
    tokio::spawn(async move {
        let stream = match tokio::time::timeout(timeout, acceptor.accept(tcp)).await {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "TLS handshake failed");
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
        // The server may have stopped meanwhile; then the stream is dropped.
        let _ = handshaken.send((stream, info)).await;
    });
}

async fn accept_optional(
    listener: Option<&TcpListener>,
) -> std::io::Result<(tokio::net::TcpStream, SocketAddr)> {
    match listener {
        Some(l) => l.accept().await,
        None => std::future::pending().await,
    }
}

fn serve_connection<I>(
    builder: &Arc<auto::Builder<TokioExecutor>>,
    header_read_timeout: Duration,
    watcher: Watcher,
    state: Arc<AppState>,
    info: ConnectionInfo,
    io: I,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |req| {
        let state = state.clone();
        async move { Ok::<_, Infallible>(routes::serve(state, info, req).await) }
    });
    let builder = Arc::clone(builder);
    tokio::spawn(async move {
        // Until its first bytes arrive, a connection is not watched: a silent one neither
        // delays the drain nor outlives the header-read timeout.
        let io = match preface::read_ahead(io, header_read_timeout).await {
            Ok(io) => io,
            Err(e) => {
                tracing::debug!(error = %e, "connection dropped before a request");
                return;
            }
        };
        let conn = builder
            .serve_connection(TokioIo::new(io), service)
            .into_owned();
        if let Err(e) = watcher.watch(conn).await {
            tracing::debug!(error = %e, "connection ended with an error");
        }
    });
}
