//! The benchmark's open-loop generator: it POSTs one body at a fixed rate whatever the server
//! answers, and times each request from the instant it was due, not from the instant it went
//! out. A server (or this generator) that falls behind shows it in the latencies instead of
//! slowing the offered rate (no coordinated omission). One thread (pin it with `taskset`),
//! persistent HTTP/2 connections with any number of streams (or HTTP/1.1 connections, one
//! request at a time each), rustls with ring, a bearer token and/or a client certificate. The
//! pacer sleeps on a timerfd at least `--tick` (100 µs) at a time, and sends what fell due
//! meanwhile together. Requests are futures polled by the pacer's own task, not tasks of their
//! own, and HTTP/2 goes straight through the `h2` crate (hyper's client would add a dispatch
//! channel and a task per stream): the generator's cost per request is what limits how fast
//! it can offer a steady rate, so it is kept near the protocol's own. `bench/run.sh` builds
//! it (`cargo build --release --example open_loop`) and drives it for the p50/p99 at half of
//! each server's own saturation.
//!
//!     open_loop --url https://127.0.0.1:8443/authorize --body review.json --ca ca.crt \
//!               --rate 36000 --duration 5s [--connections 1] [--token T] \
//!               [--cert C --key K] [--http1] [--drain 5s] [--tick 100us] [--latencies FILE]
//!
//! It prints one JSON object: what was offered, sent, answered with 200, failed and left
//! unanswered at the cut-off (the end of the sends plus `--drain`), the percentiles of the
//! latencies, and how late the generator itself sent (`late_sends`: more than 1 ms after their
//! due instant). `--latencies` also writes every latency in µs, one per line, in the order the
//! requests ended (a request still unanswered at the cut-off counts its wait so far).

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper::{Request, Uri, header};
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::error::Error;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::unix::AsyncFd;
use tokio::net::TcpStream;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_rustls::TlsConnector;

/// A send later than this after its due instant counts as late (the generator's own lag).
const LATE: Duration = Duration::from_millis(1);
/// The pacer's default shortest sleep (`--tick`): what falls due meanwhile goes out together
/// when it wakes (at most 10,000 wake-ups a second, whatever the rate).
const TICK: Duration = Duration::from_micros(100);

type Failure = Box<dyn Error + Send + Sync>;

/// Command-line arguments.
struct Args {
    url: Uri,
    body: Bytes,
    ca: String,
    rate: f64,
    duration: Duration,
    drain: Option<Duration>,
    tick: Duration,
    connections: usize,
    token: Option<String>,
    cert: Option<(String, String)>,
    http1: bool,
    latencies: Option<String>,
}

/// `250us`, `5ms`, `5s` or `5` (seconds).
fn parse_duration(v: &str) -> Result<Duration, Failure> {
    let (number, scale) = if let Some(n) = v.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = v.strip_suffix("ms") {
        (n, 1e-3)
    } else {
        (v.strip_suffix('s').unwrap_or(v), 1.0)
    };
    let seconds: f64 = number.parse()?;
    if !(seconds.is_finite() && seconds >= 0.0) {
        return Err(format!("{v}: not a duration").into());
    }
    Ok(Duration::from_secs_f64(seconds * scale))
}

fn parse_args() -> Result<Args, Failure> {
    let usage = "usage: open_loop --url URL --body FILE --ca FILE --rate N --duration D [--connections N] [--token T] [--cert C --key K] [--http1] [--drain D] [--tick D] [--latencies FILE]";
    let (mut url, mut body, mut ca, mut rate, mut duration) = (None, None, None, None, None);
    let (mut drain, mut connections, mut token, mut cert, mut key) = (None, None, None, None, None);
    let (mut http1, mut latencies, mut tick) = (false, None, TICK);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--http1" {
            http1 = true;
            continue;
        }
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--url" => url = Some(value.parse::<Uri>()?),
            "--body" => body = Some(Bytes::from(std::fs::read(&value)?)),
            "--ca" => ca = Some(value),
            "--rate" => rate = Some(value.parse::<f64>()?),
            "--duration" => duration = Some(parse_duration(&value)?),
            "--drain" => drain = Some(parse_duration(&value)?),
            "--tick" => tick = parse_duration(&value)?,
            "--connections" => connections = Some(value.parse::<usize>()?),
            "--token" => token = Some(value),
            "--cert" => cert = Some(value),
            "--key" => key = Some(value),
            "--latencies" => latencies = Some(value),
            other => return Err(format!("unknown flag {other}\n{usage}").into()),
        }
    }
    let rate = rate.ok_or(usage)?;
    if !(rate.is_finite() && rate > 0.0) {
        return Err(format!("--rate {rate}: must be above 0").into());
    }
    let cert = match (cert, key) {
        (Some(c), Some(k)) => Some((c, k)),
        (None, None) => None,
        _ => return Err("--cert and --key go together".into()),
    };
    Ok(Args {
        url: url.ok_or(usage)?,
        body: body.ok_or(usage)?,
        ca: ca.ok_or(usage)?,
        rate,
        duration: duration.ok_or(usage)?,
        drain,
        tick,
        connections: connections.unwrap_or(if http1 { 32 } else { 1 }).max(1),
        token,
        cert,
        http1,
        latencies,
    })
}

/// rustls with ring, TLS 1.3 and 1.2, trusting `--ca`, offering h2 (or http/1.1 alone).
fn tls_config(args: &Args) -> Result<ClientConfig, Failure> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(&args.ca)? {
        roots.add(cert?)?;
    }
    let builder = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .with_root_certificates(roots);
    let mut config = match &args.cert {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_file_iter(cert)?.collect::<Result<Vec<_>, _>>()?;
            builder.with_client_auth_cert(chain, PrivateKeyDer::from_pem_file(key)?)?
        }
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = if args.http1 {
        vec![b"http/1.1".to_vec()]
    } else {
        vec![b"h2".to_vec()]
    };
    Ok(config)
}

/// The persistent connections requests go out on.
enum Connections {
    /// HTTP/2: any number of streams per connection, taken round robin.
    Http2(Vec<h2::client::SendRequest<Bytes>>),
    /// HTTP/1.1: one request at a time per connection; a request waits for an idle one.
    Http1 {
        idle: Mutex<Vec<http1::SendRequest<Full<Bytes>>>>,
        free: Semaphore,
    },
}

async fn dial(
    args: &Args,
    connector: &TlsConnector,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, Failure> {
    let host = args.url.host().ok_or("the URL has no host")?;
    let port = args.url.port_u16().unwrap_or(443);
    let tcp = TcpStream::connect((host, port)).await?;
    tcp.set_nodelay(true)?;
    let name = ServerName::try_from(host.trim_matches(|c| c == '[' || c == ']').to_owned())?;
    Ok(connector.connect(name, tcp).await?)
}

async fn connect(args: &Args) -> Result<Connections, Failure> {
    let connector = TlsConnector::from(Arc::new(tls_config(args)?));
    if args.http1 {
        let mut idle = Vec::with_capacity(args.connections);
        for _ in 0..args.connections {
            let io = TokioIo::new(dial(args, &connector).await?);
            let (sender, connection) = http1::handshake(io).await?;
            tokio::spawn(connection);
            idle.push(sender);
        }
        return Ok(Connections::Http1 {
            free: Semaphore::new(idle.len()),
            idle: Mutex::new(idle),
        });
    }
    let mut senders = Vec::with_capacity(args.connections);
    for _ in 0..args.connections {
        let io = dial(args, &connector).await?;
        let (sender, connection) = h2::client::Builder::new()
            .initial_window_size(64 * 1024)
            .initial_connection_window_size(1024 * 1024)
            .handshake::<_, Bytes>(io)
            .await?;
        // The connection's own task reads and writes the socket; a broken connection fails
        // the requests on it, which count it.
        tokio::spawn(async move {
            let _ = connection.await;
        });
        senders.push(sender);
    }
    Ok(Connections::Http2(senders))
}

/// What every request shares.
struct Plan {
    url: Uri,
    body: Bytes,
    authorization: Option<header::HeaderValue>,
    connections: Connections,
    tally: Mutex<Tally>,
}

/// The outcome of every request so far.
#[derive(Default)]
struct Tally {
    latencies_us: Vec<u32>,
    succeeded: u64,
    failed: u64,
    unanswered: u64,
    first_error: Option<String>,
}

impl Tally {
    fn failure(&mut self, error: String) {
        self.failed += 1;
        self.first_error.get_or_insert(error);
    }
}

impl Plan {
    /// The request's head: HTTP/2 takes the authority from the URL (`:authority`), and the
    /// body's length is stated here, as kube-apiserver's client states it (the h2 crate adds
    /// no header; hyper's HTTP/1.1 client adds it from the body); HTTP/1.1 wants the path in
    /// the request line and a Host header, which hyper's connection-level client leaves to us.
    fn head(&self) -> Result<Request<()>, Failure> {
        let builder = match (&self.connections, self.url.authority()) {
            (Connections::Http1 { .. }, Some(authority)) => {
                let path = self.url.path_and_query().map_or("/", |p| p.as_str());
                Request::post(path).header(header::HOST, authority.as_str())
            }
            _ => Request::post(self.url.clone()).header(header::CONTENT_LENGTH, self.body.len()),
        };
        let mut builder = builder
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json");
        if let Some(a) = &self.authorization {
            builder = builder.header(header::AUTHORIZATION, a.clone());
        }
        Ok(builder.body(())?)
    }

    /// Sends one request on connection `n` (HTTP/2) or the next idle one (HTTP/1.1) and reads
    /// the whole answer; `Ok` with the HTTP status.
    async fn exchange(&self, n: usize) -> Result<u16, Failure> {
        let head = self.head()?;
        match &self.connections {
            Connections::Http2(senders) => {
                // Streams past the server's limit on concurrent streams wait in h2's queue
                // until one ends (their latency, timed from the due instant, includes it).
                let mut sender = senders[n % senders.len()].clone();
                let (response, mut stream) = sender.send_request(head, false)?;
                stream.send_data(self.body.clone(), true)?;
                let response = response.await?;
                let status = response.status().as_u16();
                let mut body = response.into_body();
                while let Some(chunk) = body.data().await {
                    let chunk = chunk?;
                    body.flow_control().release_capacity(chunk.len())?;
                }
                Ok(status)
            }
            Connections::Http1 { idle, free } => {
                let permit = free.acquire().await?;
                let taken = idle.lock().map_err(|_| "poisoned")?.pop();
                let mut sender = taken.ok_or("no idle connection")?;
                let request = head.map(|()| Full::new(self.body.clone()));
                let result = async {
                    sender.ready().await?;
                    let response = sender.send_request(request).await?;
                    let status = response.status().as_u16();
                    response.into_body().collect().await?;
                    Ok::<u16, Failure>(status)
                }
                .await;
                if result.is_ok() {
                    idle.lock().map_err(|_| "poisoned")?.push(sender);
                } else {
                    // A broken connection is not given back: one fewer to wait for.
                    permit.forget();
                }
                result
            }
        }
    }

    /// One request due at `due`, given up at `cutoff`; its latency runs from `due`.
    async fn one(&self, n: usize, due: Instant, cutoff: Instant) {
        let outcome = tokio::time::timeout_at(cutoff, self.exchange(n)).await;
        let waited = Instant::now().saturating_duration_since(due);
        let micros = u32::try_from(waited.as_micros()).unwrap_or(u32::MAX);
        let Ok(mut tally) = self.tally.lock() else {
            return;
        };
        tally.latencies_us.push(micros);
        match outcome {
            Ok(Ok(200)) => tally.succeeded += 1,
            Ok(Ok(status)) => tally.failure(format!("HTTP status {status}")),
            Ok(Err(e)) => tally.failure(e.to_string()),
            Err(_) => {
                tally.unanswered += 1;
                tally
                    .first_error
                    .get_or_insert("unanswered at the cut-off".into());
            }
        }
    }
}

/// A one-shot kernel timer (timerfd) read through tokio's reactor: it wakes the pacer within
/// microseconds of a due instant, where tokio's own timer rounds up to whole milliseconds (which
/// would send each millisecond's requests in one burst) and polling would keep the core busy.
struct FineTimer {
    fd: AsyncFd<OwnedFd>,
}

impl FineTimer {
    fn new() -> io::Result<Self> {
        // SAFETY: no pointer is passed; a negative result is an error, anything else a new
        // descriptor that only this value owns.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a valid descriptor owned by nothing else; the `OwnedFd` keeps it open
        // and returns it unchanged for as long as the `AsyncFd` holds it.
        let fd =
            unsafe { AsyncFd::register(OwnedFd::from_raw_fd(raw)) }.map_err(io::Error::from)?;
        Ok(Self { fd })
    }

    /// Sleeps `d` (at least 1 ns: a zero value would disarm the timer).
    async fn sleep(&self, d: Duration) -> io::Result<()> {
        let d = d.max(Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: libc::time_t::try_from(d.as_secs()).unwrap_or(libc::time_t::MAX),
                tv_nsec: libc::c_long::from(d.subsec_nanos() as i32),
            },
        };
        let fd = self.fd.get_ref().as_raw_fd();
        // SAFETY: `spec` outlives the call; the old value is not asked for (null).
        if unsafe { libc::timerfd_settime(fd, 0, &spec, std::ptr::null_mut()) } < 0 {
            return Err(io::Error::last_os_error());
        }
        loop {
            let mut ready = self.fd.readable().await?;
            let read = ready.try_io(|inner| {
                let mut expirations = [0u8; 8];
                // SAFETY: the buffer is 8 writable bytes, as a timerfd read needs.
                let n =
                    unsafe { libc::read(inner.as_raw_fd(), expirations.as_mut_ptr().cast(), 8) };
                if n < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(())
                }
            });
            if let Ok(result) = read {
                return result;
            }
        }
    }
}

/// What the pacer saw of its own timing.
struct Pacing {
    sent: u64,
    late_sends: u64,
    max_lag: Duration,
}

/// Sends `total` requests, the i-th due at `start + i / rate`, and polls them until each has
/// ended (answered, failed or given up at the cut-off).
async fn pace(
    plan: &Plan,
    rate: f64,
    total: u64,
    tick: Duration,
    start: Instant,
    cutoff: Instant,
) -> io::Result<Pacing> {
    let timer = FineTimer::new()?;
    let due = |i: u64| start + Duration::from_secs_f64(i as f64 / rate);
    let mut pacing = Pacing {
        sent: 0,
        late_sends: 0,
        max_lag: Duration::ZERO,
    };
    let mut running = FuturesUnordered::new();
    while pacing.sent < total {
        let now = Instant::now();
        while pacing.sent < total && due(pacing.sent) <= now {
            let at = due(pacing.sent);
            let lag = now - at;
            pacing.max_lag = pacing.max_lag.max(lag);
            pacing.late_sends += u64::from(lag > LATE);
            let n = usize::try_from(pacing.sent).unwrap_or(0);
            running.push(plan.one(n, at, cutoff));
            pacing.sent += 1;
        }
        if pacing.sent >= total {
            break;
        }
        let left = due(pacing.sent).saturating_duration_since(Instant::now());
        let sleep = timer.sleep(left.max(tick));
        tokio::pin!(sleep);
        // Requests progress while the pacer waits for the next due instant.
        loop {
            tokio::select! {
                biased;
                slept = &mut sleep => break slept?,
                Some(()) = running.next(), if !running.is_empty() => {}
            }
        }
    }
    // Every request ends by the cut-off (its own timeout).
    while running.next().await.is_some() {}
    Ok(pacing)
}

/// The nearest-rank percentile of sorted values.
fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

async fn run(args: Args) -> Result<serde_json::Value, Failure> {
    let authorization = match &args.token {
        Some(t) => Some(header::HeaderValue::try_from(format!("Bearer {t}"))?),
        None => None,
    };
    let plan = Plan {
        url: args.url.clone(),
        body: args.body.clone(),
        authorization,
        connections: connect(&args).await?,
        tally: Mutex::new(Tally::default()),
    };
    let total = (args.rate * args.duration.as_secs_f64()).round() as u64;
    let start = Instant::now();
    let sends_end = start + args.duration;
    let cutoff = sends_end
        + args
            .drain
            .unwrap_or(args.duration.max(Duration::from_secs(1)));
    let pacing = pace(&plan, args.rate, total, args.tick, start, cutoff).await?;
    let wall = start.elapsed();
    let tally = std::mem::take(&mut *plan.tally.lock().map_err(|_| "poisoned")?);
    if let Some(path) = &args.latencies {
        let mut text = String::with_capacity(tally.latencies_us.len() * 6);
        for l in &tally.latencies_us {
            text.push_str(&l.to_string());
            text.push('\n');
        }
        std::fs::write(path, text)?;
    }
    let mut sorted = tally.latencies_us;
    sorted.sort_unstable();
    Ok(serde_json::json!({
        "offered_rate": args.rate,
        "offered": total,
        "sent": pacing.sent,
        "succeeded": tally.succeeded,
        "failed": tally.failed,
        "unanswered": tally.unanswered,
        "first_error": tally.first_error,
        "wall_seconds": wall.as_secs_f64(),
        "late_sends": pacing.late_sends,
        "max_send_lag_us": pacing.max_lag.as_micros() as u64,
        "p50_us": percentile(&sorted, 0.50),
        "p90_us": percentile(&sorted, 0.90),
        "p99_us": percentile(&sorted, 0.99),
        "p999_us": percentile(&sorted, 0.999),
        "max_us": sorted.last().copied().unwrap_or(0),
    }))
}

fn main() -> Result<(), Failure> {
    let args = parse_args()?;
    // A subscriber that wants nothing: with none, tracing hands every span of h2 and hyper to
    // the `log` crate, a cost per request that is the generator's, not the server's.
    tracing::subscriber::set_global_default(tracing::subscriber::NoSubscriber::default())?;
    let summary = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(run(args))?;
    println!("{summary}");
    Ok(())
}
