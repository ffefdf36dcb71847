//! `warrant serve`: load the chain, start the HTTPS listener, reload the configuration and the
//! serving certificate on change, drain on SIGTERM.
//!
//! With no flags it starts on the embedded default: `authz-config/warrant.yaml` (or its
//! embedded copy), and a CA, serving certificate, client certificate and kubeconfig generated
//! into `--state-dir`. Caller authentication is on by default (the generated CA is the client
//! CA), so a caller without the generated client certificate is refused.

use super::{ConfigSource, ExitStatus};
use crate::clock::SystemClock;
use crate::cluster;
use crate::config::duration::GoDuration;
use crate::file_watch::WatchTiming;
use crate::object::{ClusterView, NoCluster};
use crate::reload::LiveChain;
use crate::server::bootstrap::{self, StateFiles};
use crate::server::caller::{CallerAuth, TokenAuth};
use crate::server::tls::{ReloadingTls, TlsFiles};
use crate::server::{AppState, Server, ServerOptions};
use crate::telemetry::audit::{AuditSink, AuditTarget};
use crate::telemetry::logging::{self, LogFormat};
use crate::telemetry::metrics::Metrics;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `warrant serve`, in Kubernetes flag style.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The chain configuration (AuthorizationConfiguration); reloaded on change.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// HTTPS listen address.
    #[arg(long, default_value = "127.0.0.1:8443", value_name = "ADDR")]
    pub listen: SocketAddr,
    /// Serving certificate (PEM); reloaded on change. Default: generated into --state-dir.
    #[arg(long, value_name = "FILE", requires = "tls_private_key_file")]
    pub tls_cert_file: Option<PathBuf>,
    /// Serving private key (PEM); reloaded on change.
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    pub tls_private_key_file: Option<PathBuf>,
    /// Require and verify client certificates signed by this CA bundle. Default with a
    /// generated serving certificate: the generated CA.
    #[arg(long, value_name = "FILE")]
    pub client_ca_file: Option<PathBuf>,
    /// Accept bearer tokens from this file (kube-apiserver static token CSV:
    /// token,user,uid,"group1,group2").
    #[arg(long, value_name = "FILE")]
    pub token_auth_file: Option<PathBuf>,
    /// Where generated certificates and the kubeconfig are kept.
    #[arg(long, default_value = ".warrant", value_name = "DIR")]
    pub state_dir: PathBuf,
    /// Also serve plain HTTP on this address; refused unless it is loopback.
    #[arg(long, value_name = "ADDR")]
    pub insecure_listen: Option<SocketAddr>,
    /// Audit records: a file path, `-` for standard output, or `none`.
    #[arg(long, default_value = "-", value_name = "PATH")]
    pub audit_log: String,
    /// Replay these recorded reviews (warrant or kube-apiserver audit logs, SubjectAccessReview
    /// files) against every reloaded configuration and the one being served, and refuse the
    /// reload when a flip would deny a bootstrap identity (repeatable).
    #[arg(long, value_name = "INPUT")]
    pub replay_on_reload: Vec<PathBuf>,
    /// warrant's own service account (`namespace/name`, repeatable), a bootstrap identity for
    /// --replay-on-reload.
    #[arg(
        long,
        value_name = "NAMESPACE/NAME",
        default_value = "warrant-system/warrant"
    )]
    pub warrant_service_account: Vec<String>,
    /// Leave these keys of the user's `extra` out of audit records (repeatable, or
    /// comma-separated); a record that had any lists them under `extraRedacted`.
    #[arg(long, value_name = "KEY", num_args = 1.., value_delimiter = ',')]
    pub audit_redact_extra: Vec<String>,
    /// Operational log format (to standard error).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Time budget of one review through the chain (Go duration).
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub review_timeout: String,
    /// How long in-flight requests may take to finish after SIGTERM (Go duration).
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    pub shutdown_grace_period: String,
    /// Re-check the configuration and certificate files at least this often, besides
    /// watching them (Go duration).
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    pub file_check_interval: String,
    /// Most open connections; past it, new connections wait in the kernel's backlog.
    #[arg(long, default_value_t = 1024, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// Request body bytes held in memory at once across all connections; past it a request is
    /// answered 429 with Retry-After.
    #[arg(long, default_value_t = 64 * 1024 * 1024, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1024..))]
    pub max_buffered_request_bytes: u64,
    /// Bytes each Webhook entry's verdict cache may hold (keys, reasons and bookkeeping); past
    /// it the least used verdicts are evicted. It holds at most 8192 verdicts either way, as
    /// kube-apiserver's, which has no flag for its cache size.
    #[arg(long, default_value_t = crate::authorizer::webhook::cache::DEFAULT_MAX_BYTES, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(65536..))]
    pub webhook_cache_max_bytes: u64,
    /// Close a connection that has had no request in flight this long (Go duration).
    #[arg(long, default_value = "120s", value_name = "DURATION")]
    pub idle_timeout: String,
    /// The cluster the validation ring watches (default: the pod's service account when
    /// KUBERNETES_SERVICE_HOST is set). Opened only once the chain has a DeletionGuard.
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Leader election (`--leader-elect*`).
    #[command(flatten)]
    pub leader: Box<super::leader_elect::LeaderElectArgs>,
}

fn duration_flag(name: &str, value: &str) -> Result<Duration, String> {
    GoDuration::parse(value)
        .ok()
        .filter(|d| d.is_positive())
        .and_then(|d| d.to_std())
        .ok_or_else(|| format!("--{name} {value:?}: expected a positive duration such as 10s"))
}

/// Starts the server and blocks until it has shut down.
pub fn run(args: ServeArgs) -> ExitStatus {
    logging::init(args.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start runtime: {e}");
            return ExitStatus::Failure;
        }
    };
    match runtime.block_on(serve(args)) {
        Ok(()) => ExitStatus::Success,
        Err(e) => {
            tracing::error!("{e}");
            eprintln!("error: {e}");
            ExitStatus::Failure
        }
    }
}

async fn serve(args: ServeArgs) -> Result<(), String> {
    let review_timeout = duration_flag("review-timeout", &args.review_timeout)?;
    let grace = duration_flag("shutdown-grace-period", &args.shutdown_grace_period)?;
    let poll = duration_flag("file-check-interval", &args.file_check_interval)?;
    let timing = WatchTiming {
        poll,
        ..WatchTiming::default()
    };
    // The cluster connection: resolved (and a --kubeconfig file checked) now, opened once the
    // chain needs it.
    let cluster_source = cluster::Source::from_env(args.kubeconfig.as_deref());
    if let Some(source @ cluster::Source::Kubeconfig(_)) = &cluster_source {
        source.config().await.map_err(|e| e.to_string())?;
    }
    let cache = cluster_source
        .as_ref()
        .map(|_| Arc::new(cluster::Cache::new(cluster::CacheOptions::default())));
    let leader_metrics = crate::leader::LeaderMetrics::default();
    let buffer_metrics = crate::buffer::BufferMetrics::default();
    let metrics = Arc::new(Metrics::with_extra(|r| {
        leader_metrics.register(r);
        if let Some(cache) = &cache {
            cluster::metrics::register(cache, r);
            buffer_metrics.register(r);
        }
    }));
    // Leadership: the receiver the once-per-cluster controllers act on; the election releases
    // the Lease as soon as the stop signal (SIGTERM) arrives, while the server drains.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let leadership = args
        .leader
        .start(cluster_source.as_ref(), leader_metrics, stop_rx)
        .await?;
    let mut live = LiveChain::default().with_webhook_cache_bytes(args.webhook_cache_max_bytes);
    // `scope: Cluster` rate limits keep their buckets as Leases in warrant's namespace.
    if let Some(source) = &cluster_source {
        let client = source.client().await.map_err(|e| e.to_string())?;
        let namespace = &args.leader.leader_elect_resource_namespace;
        live = live.with_cluster_buckets(Arc::new(cluster::buckets::LeaseBuckets::new(
            client, namespace,
        )));
    }
    if !args.replay_on_reload.is_empty() {
        crate::replay::input::Reader::new(&args.replay_on_reload)
            .map_err(|e| format!("--replay-on-reload {e}"))?;
        let options = crate::replay::Options {
            bootstrap: crate::replay::Bootstrap::new(&args.warrant_service_account),
            ..Default::default()
        };
        let gate = crate::replay::LockoutGate::new(args.replay_on_reload.clone(), options);
        live = live.with_gate(Box::new(gate));
    }
    let live = Arc::new(live);

    // Configuration.
    let source = ConfigSource::resolve(args.config.as_deref());
    match &source {
        ConfigSource::File(path) => {
            tracing::info!(config = %path.display(), "watching configuration");
            tokio::spawn(live.clone().watch(path.clone(), timing, metrics.clone()));
        }
        ConfigSource::Embedded => {
            let loaded = source
                .load()
                .map_err(|e| format!("embedded default is invalid: {e}"))?;
            live.apply(loaded, &metrics).map_err(|e| e.to_string())?;
        }
    }

    // TLS and caller authentication.
    let mut generated: Option<StateFiles> = None;
    let files = match (&args.tls_cert_file, &args.tls_private_key_file) {
        (Some(cert), Some(key)) => TlsFiles {
            cert: cert.clone(),
            key: key.clone(),
            client_ca: args.client_ca_file.clone(),
        },
        _ => {
            let state =
                bootstrap::prepare(&args.state_dir, args.listen).map_err(|e| e.to_string())?;
            let files = TlsFiles {
                cert: state.serving_cert.clone(),
                key: state.serving_key.clone(),
                client_ca: Some(
                    args.client_ca_file
                        .clone()
                        .unwrap_or_else(|| state.ca_cert.clone()),
                ),
            };
            generated = Some(state);
            files
        }
    };
    let tokens = match &args.token_auth_file {
        Some(p) => Some(TokenAuth::load(p).map_err(|e| e.to_string())?),
        None => None,
    };
    let caller_auth = CallerAuth {
        client_certificates: files.client_ca.is_some(),
        tokens,
    };
    if !caller_auth.is_required() {
        tracing::warn!(
            "no --client-ca-file and no --token-auth-file: any caller that reaches the listener may ask for reviews"
        );
    }
    let tls = Arc::new(ReloadingTls::new(files).map_err(|e| e.to_string())?);

    // Audit.
    let target = match args.audit_log.as_str() {
        "-" => AuditTarget::Stdout,
        "" | "none" => AuditTarget::Disabled,
        path => AuditTarget::File(PathBuf::from(path)),
    };
    let audit = Arc::new(
        AuditSink::open(&target, metrics.clone())
            .map_err(|e| format!("--audit-log {}: {e}", args.audit_log))?
            .with_redacted_extra(args.audit_redact_extra.clone()),
    );

    let needed = {
        let live = live.clone();
        move || live.load().is_some_and(|a| a.chain.admits())
    };
    let annotator = Arc::new(cluster::Annotator::new(cluster_source.clone()));
    let buffer_source = cluster_source.clone();
    let (cluster_view, cluster_task): (Arc<dyn ClusterView>, _) = match (cluster_source, cache) {
        (Some(source), Some(cache)) => {
            let task = tokio::spawn(cluster::open_when_needed(cache.clone(), source, needed));
            (cache, task)
        }
        _ => (
            Arc::new(NoCluster),
            tokio::spawn(cluster::warn_unconnected(needed)),
        ),
    };

    // The buffer ring's controller, once a guard has a `buffer` block. It acts only while
    // this replica leads; without leader election the receiver is always true.
    let leader = leadership.leading.clone();
    let buffer_task = buffer_source.map(|source| {
        let buffer = crate::buffer::Buffer {
            live: live.clone(),
            source,
            view: cluster_view.clone(),
            audit: audit.clone(),
            metrics: buffer_metrics,
        };
        tokio::spawn(buffer.run(leader))
    });

    let (live_for_signals, metrics_for_signals) = (live.clone(), metrics.clone());
    let state = Arc::new(AppState {
        live,
        metrics,
        audit: audit.clone(),
        clock: Arc::new(SystemClock),
        caller_auth,
        review_timeout,
        cluster: cluster_view,
        annotator: Some(annotator),
        body_budget: crate::server::body::BodyBudget::new(args.max_buffered_request_bytes as usize),
    });
    let mut options = ServerOptions::new(args.listen);
    options.insecure_listen = args.insecure_listen;
    options.shutdown_grace = grace;
    options.max_connections = args.max_connections as usize;
    options.idle_timeout = duration_flag("idle-timeout", &args.idle_timeout)?;
    let server = Server::bind(options, tls.clone(), state)
        .await
        .map_err(|e| e.to_string())?;
    let addr = server.local_addr();
    tracing::info!(url = %format!("https://{addr}/authorize"), "warrant listening");
    eprintln!("warrant listening on https://{addr}/authorize");
    if let Some(plain) = server.insecure_addr() {
        eprintln!("warrant also serving plain HTTP on http://{plain}/authorize (loopback only)");
    }
    if let Some(state) = &generated {
        print_generated(state, addr);
    }
    let tls_task = tokio::spawn(tls.clone().watch(timing));
    let signals = tokio::spawn(other_signals(
        live_for_signals,
        source,
        tls,
        metrics_for_signals,
        audit.clone(),
    ));
    server
        .run(async move {
            shutdown_signal().await;
            let _ = stop_tx.send(true);
        })
        .await;
    if let Some(task) = leadership.task {
        // The release is bounded by the renew deadline inside the task.
        let _ = task.await;
    }
    tls_task.abort();
    signals.abort();
    // The task holds the audit sink: let it go before the last drop flushes the sink.
    let _ = signals.await;
    cluster_task.abort();
    if let Some(task) = buffer_task {
        task.abort();
        // The task holds the audit sink too.
        let _ = task.await;
    }
    drop(audit);
    tracing::info!("stopped");
    Ok(())
}

fn print_generated(state: &StateFiles, addr: SocketAddr) {
    let d = |p: &PathBuf| p.display().to_string();
    eprintln!("generated state in {}:", state.dir.display());
    eprintln!("  CA certificate      {}", d(&state.ca_cert));
    eprintln!("  client certificate  {}", d(&state.client_cert));
    eprintln!("  client key          {}", d(&state.client_key));
    eprintln!("  kubeconfig          {}", d(&state.kubeconfig));
    eprintln!(
        "try: curl --cacert {} --cert {} --key {} -H 'Content-Type: application/json' --data @tests/fixtures/reviews/v1-resource.json https://{addr}/authorize",
        d(&state.ca_cert),
        d(&state.client_cert),
        d(&state.client_key),
    );
}

/// The signals that do not stop the server (issue 15, findings 6 and 7): SIGHUP re-reads the
/// configuration and the serving certificate and reopens the audit file at once, as operators
/// (and log rotation tools) expect of a daemon; SIGUSR1 and SIGUSR2 are logged and ignored
/// instead of killing the process without a drain.
async fn other_signals(
    live: Arc<LiveChain>,
    source: ConfigSource,
    tls: Arc<ReloadingTls>,
    metrics: Arc<Metrics>,
    audit: Arc<AuditSink>,
) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut hup), Ok(mut usr1), Ok(mut usr2)) = (
            signal(SignalKind::hangup()),
            signal(SignalKind::user_defined1()),
            signal(SignalKind::user_defined2()),
        ) else {
            tracing::warn!("cannot install the SIGHUP/SIGUSR1/SIGUSR2 handlers");
            return;
        };
        loop {
            tokio::select! {
                _ = hup.recv() => {
                    tracing::info!("SIGHUP: re-reading the configuration and the serving certificate, reopening the audit file");
                    if let ConfigSource::File(_) = source {
                        let change = match source.load() {
                            Ok(loaded) => crate::config::watch::Change::Loaded(loaded),
                            Err(errors) => crate::config::watch::Change::Invalid(errors),
                        };
                        live.handle(change, &metrics);
                    }
                    tls.reload();
                    audit.reopen();
                }
                _ = usr1.recv() => tracing::info!("SIGUSR1 ignored (SIGHUP reloads, SIGTERM stops)"),
                _ = usr2.recv() => tracing::info!("SIGUSR2 ignored (SIGHUP reloads, SIGTERM stops)"),
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (live, source, tls, metrics, audit);
        std::future::pending::<()>().await;
    }
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate());
        match term {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    tracing::info!("shutdown signal received");
}
