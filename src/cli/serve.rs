//! `warrant serve`: load the chain, start the HTTPS listener, reload the configuration and the
//! serving certificate on change, drain on SIGTERM.
//!
//! With no flags it starts on the embedded default: `authz-config/warrant.yaml` (or its
//! embedded copy), and a CA, serving certificate, client certificate and kubeconfig generated
//! into `--state-dir`. Caller authentication is on by default (the generated CA is the client
//! CA), so a caller without the generated client certificate is refused.

use super::duration_flag::{self, DurationFlagError};
use super::leader_elect::{LeaderElectError, Leadership};
use super::{ConfigSource, ExitStatus};
use crate::authorizer::deletion_guard::tickets::TicketFeed;
use crate::buffer::BufferMetrics;
use crate::clock::SystemClock;
use crate::cluster;
use crate::config::ConfigErrors;
use crate::defense::coverage_export::CoverageExport;
use crate::defense::{DefenseMetrics, FollowUps};
use crate::file_watch::WatchTiming;
use crate::leader::LeaderMetrics;
use crate::object::{ClusterView, NoCluster};
use crate::reload::{ApplyError, LiveChain};
use crate::server::bootstrap::{self, BootstrapError, StateFiles};
use crate::server::caller::{CallerAuth, TokenAuth, TokenFileError};
use crate::server::tls::{CertificateExpiry, ReloadingTls, TlsError, TlsFiles};
use crate::server::{AppState, BindError, Server, ServerOptions};
use crate::telemetry::audit::remote::SinkMetrics;
use crate::telemetry::audit::{AuditSink, AuditTarget};
use crate::telemetry::logging::{self, LogFormat};
use crate::telemetry::metrics::Metrics;
use prometheus_client::registry::Registry;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;
use tokio::sync::watch;
use tokio::task::JoinHandle;

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
    pub(crate) tls_cert_file: Option<PathBuf>,
    /// Serving private key (PEM); reloaded on change.
    #[arg(long, value_name = "FILE", requires = "tls_cert_file")]
    pub(crate) tls_private_key_file: Option<PathBuf>,
    /// Require and verify client certificates signed by this CA bundle. Default with a
    /// generated serving certificate: the generated CA.
    #[arg(long, value_name = "FILE")]
    pub(crate) client_ca_file: Option<PathBuf>,
    /// Accept bearer tokens from this file (kube-apiserver static token CSV:
    /// token,user,uid,"group1,group2").
    #[arg(long, value_name = "FILE")]
    pub(crate) token_auth_file: Option<PathBuf>,
    /// Where generated certificates and the kubeconfig are kept.
    #[arg(long, default_value = ".warrant", value_name = "DIR")]
    pub(crate) state_dir: PathBuf,
    /// Also serve plain HTTP on this address; refused unless it is loopback.
    #[arg(long, value_name = "ADDR")]
    pub insecure_listen: Option<SocketAddr>,
    /// Audit records: a file path, `-` for standard output, or `none`.
    #[arg(long, default_value = "-", value_name = "PATH")]
    pub(crate) audit_log: String,
    /// Replay these recorded reviews (warrant or kube-apiserver audit logs, SubjectAccessReview
    /// files) against every reloaded configuration and the one being served, and refuse the
    /// reload when a flip would deny a bootstrap identity (repeatable).
    #[arg(long, value_name = "INPUT")]
    pub(crate) replay_on_reload: Vec<PathBuf>,
    /// warrant's own service account (`namespace/name`, repeatable), a bootstrap identity for
    /// --replay-on-reload.
    #[arg(
        long,
        value_name = "NAMESPACE/NAME",
        default_value = "warrant-system/warrant"
    )]
    pub(crate) warrant_service_account: Vec<String>,
    /// Answer every SubjectAccessReview with `status.authorizationDetails` (the deciding
    /// authorizer, code, rule, configuration revision and decision id; at most 1 KiB), for
    /// kube-apiserver's audit events. The field is proposed (KEP-6001) and in no Kubernetes
    /// release yet; API servers that do not know it ignore it.
    #[arg(long)]
    pub(crate) authorization_details: bool,
    /// Leave these keys of the user's `extra` out of audit records (repeatable, or
    /// comma-separated); a record that had any lists them under `extraRedacted`.
    #[arg(long, value_name = "KEY", num_args = 1.., value_delimiter = ',')]
    pub audit_redact_extra: Vec<String>,
    /// Operational log format (to standard error).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub(crate) log_format: LogFormat,
    /// Time budget of one review through the chain (Go duration).
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub review_timeout: String,
    /// How long in-flight requests may take to finish after SIGTERM (Go duration).
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    pub(crate) shutdown_grace_period: String,
    /// Re-check the configuration and certificate files at least this often, besides
    /// watching them (Go duration).
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    pub(crate) file_check_interval: String,
    /// With a cluster connection, how often the leader counts the unprotected critical objects
    /// into `warrant_coverage_unprotected_objects` (Go duration).
    #[arg(long, default_value = "5m", value_name = "DURATION")]
    pub(crate) coverage_interval: String,
    /// Most open connections; past it, new connections wait in the kernel's backlog.
    #[arg(long, default_value_t = 1024, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// Request body bytes held in memory at once across all connections; past it a request is
    /// answered 429 with Retry-After.
    #[arg(long, default_value_t = 64 * 1024 * 1024, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1024..))]
    pub(crate) max_buffered_request_bytes: u64,
    /// Bytes each Webhook entry's verdict cache may hold (keys, reasons and bookkeeping); past
    /// it the least used verdicts are evicted. It holds at most 8192 verdicts either way, as
    /// kube-apiserver's, which has no flag for its cache size.
    #[arg(long, default_value_t = crate::authorizer::webhook::cache::DEFAULT_MAX_BYTES, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(65536..))]
    pub(crate) webhook_cache_max_bytes: u64,
    /// Close a connection that has had no request in flight this long (Go duration).
    #[arg(long, default_value = "120s", value_name = "DURATION")]
    pub idle_timeout: String,
    /// The cluster the validation ring watches (default: the pod's service account when
    /// KUBERNETES_SERVICE_HOST is set). Opened only once the chain has a DeletionGuard.
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Pod security admission (SecurityContextConstraints, docs/pod-security.md): `Off`,
    /// `Observe` (admit unchanged, record what would be refused) or `Enforce`. Needs a
    /// cluster connection.
    #[arg(long, default_value = "Off", value_name = "MODE", value_parser = ["Off", "Observe", "Enforce"])]
    pub pod_security: String,
    /// What pod security does while its constraint cache cannot answer (not listed yet, or a
    /// watch failing): `Fail` refuses the pod, `Ignore` admits it with a warning.
    #[arg(long, default_value = "Fail", value_name = "POLICY", value_parser = ["Fail", "Ignore"])]
    pub pod_security_unavailable: String,
    /// Leader election (`--leader-elect*`).
    #[command(flatten)]
    pub leader: Box<super::leader_elect::LeaderElectArgs>,
    /// Remote audit sinks (`--audit-kafka-*`, `--audit-webhook-*`).
    #[command(flatten)]
    pub audit_sinks: Box<super::audit_sinks::AuditSinkArgs>,
}

/// Why `warrant serve` could not start, by start-up step.
#[derive(Debug, Error)]
pub(crate) enum ServeError {
    /// A duration flag is not a positive duration.
    #[error(transparent)]
    Flag(#[from] DurationFlagError),
    /// The cluster named by `--kubeconfig` (or the pod's) cannot be used.
    #[error(transparent)]
    Cluster(#[from] cluster::ConnectError),
    /// Leader election could not start.
    #[error(transparent)]
    Leader(#[from] LeaderElectError),
    /// A `--replay-on-reload` input cannot be read.
    #[error("--replay-on-reload {0}")]
    Replay(#[source] crate::replay::input::InputError),
    /// The embedded default configuration does not validate.
    #[error("embedded default is invalid: {0}")]
    EmbeddedConfig(#[source] ConfigErrors),
    /// The configuration's chain could not be built or was refused.
    #[error(transparent)]
    Chain(#[from] ApplyError),
    /// The state directory (generated certificates, kubeconfig) could not be prepared.
    #[error(transparent)]
    StateDir(#[from] BootstrapError),
    /// The `--token-auth-file` cannot be read.
    #[error(transparent)]
    Tokens(#[from] TokenFileError),
    /// The serving certificate or the client CA cannot be loaded.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// A remote audit sink cannot start.
    #[error(transparent)]
    AuditSink(#[from] super::audit_sinks::AuditSinkError),
    /// The audit log cannot be opened.
    #[error("--audit-log {path}: {source}")]
    Audit {
        /// The flag's value.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A listener could not be bound.
    #[error(transparent)]
    Listen(#[from] BindError),
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

/// Start-up, step by step, then serving until SIGTERM and the drain.
async fn serve(args: ServeArgs) -> Result<(), ServeError> {
    let times = Times::from_args(&args)?;
    let cluster = ClusterStart::resolve(&args).await?;
    let ticket_feed = Arc::new(match &cluster.source {
        Some(_) => TicketFeed::new(),
        None => TicketFeed::unconnected(),
    });
    let telemetry = Telemetry::register(&cluster, &ticket_feed);
    // Leadership: the receiver the once-per-cluster controllers act on; the election releases
    // the Lease as soon as the stop signal (SIGTERM) arrives, while the server drains.
    let (stop_tx, stop_rx) = watch::channel(false);
    let leadership = args
        .leader
        .start(cluster.source.as_ref(), telemetry.leader.clone(), stop_rx)
        .await?;
    let live = live_chain(&args, &cluster, ticket_feed.clone()).await?;
    if let Some(source) = cluster.source.clone() {
        tokio::spawn(cluster::tickets::watch_when_wanted(ticket_feed, source));
    }
    let source = load_config(&args, &live, times.watch, &telemetry.metrics)?;
    let listener = Listener::prepare(&args, telemetry.certificate_expiry.clone())?;
    let audit = open_audit(&args, &telemetry)?;
    let access_review = access_review(&cluster, &telemetry).await?;
    let pod_security = start_pod_security(&args, cluster.source.clone(), &access_review);
    let rings = Rings::start(
        &live,
        cluster,
        &audit,
        &telemetry,
        &leadership,
        times.coverage,
    );
    let state = Arc::new(AppState {
        live: live.clone(),
        metrics: telemetry.metrics.clone(),
        audit: audit.clone(),
        clock: Arc::new(SystemClock),
        caller_auth: listener.caller_auth.clone(),
        review_timeout: times.review,
        cluster: rings.view.clone(),
        follow_ups: FollowUps {
            annotator: Some(rings.annotator.clone()),
            metrics: telemetry.defense.clone(),
        },
        body_budget: crate::server::body::BodyBudget::new(args.max_buffered_request_bytes as usize),
        access_review,
        pod_security: pod_security.as_ref().map(|(p, _)| p.clone()),
        authorization_details: args.authorization_details,
    });
    let server = Server::bind(listener.options(&args, &times), listener.tls.clone(), state).await?;
    announce(&server, listener.generated.as_ref());
    let background = Background {
        tls: tokio::spawn(listener.tls.clone().watch(times.watch)),
        signals: tokio::spawn(other_signals(
            live,
            source,
            listener.tls.clone(),
            telemetry.metrics.clone(),
            audit.clone(),
        )),
    };
    server
        .run(async move {
            shutdown_signal().await;
            let _ = stop_tx.send(true);
        })
        .await;
    stop(leadership, background, rings, audit).await;
    Ok(())
}

/// The duration flags, checked before anything starts.
#[derive(Debug, Clone, Copy)]
struct Times {
    review: Duration,
    grace: Duration,
    idle: Duration,
    watch: WatchTiming,
    coverage: Duration,
}

impl Times {
    fn from_args(args: &ServeArgs) -> Result<Self, DurationFlagError> {
        let flag = |name, value: &str| duration_flag::positive(name, value, "10s");
        let poll = flag("file-check-interval", &args.file_check_interval)?;
        Ok(Self {
            review: flag("review-timeout", &args.review_timeout)?,
            grace: flag("shutdown-grace-period", &args.shutdown_grace_period)?,
            idle: flag("idle-timeout", &args.idle_timeout)?,
            coverage: flag("coverage-interval", &args.coverage_interval)?,
            watch: WatchTiming {
                poll,
                ..WatchTiming::default()
            },
        })
    }
}

/// The cluster connection: resolved (and a `--kubeconfig` file checked) at start-up, opened
/// once the chain needs it; the metadata cache the validation ring reads when there is one.
#[derive(Debug)]
struct ClusterStart {
    source: Option<cluster::Source>,
    cache: Option<Arc<cluster::Cache>>,
}

impl ClusterStart {
    async fn resolve(args: &ServeArgs) -> Result<Self, cluster::ConnectError> {
        let source = cluster::Source::from_env(args.kubeconfig.as_deref());
        if let Some(source @ cluster::Source::Kubeconfig(_)) = &source {
            source.config().await?;
        }
        let cache = source
            .as_ref()
            .map(|_| Arc::new(cluster::Cache::new(cluster::CacheOptions::default())));
        Ok(Self { source, cache })
    }
}

/// Every module's series on one registry: each module registers its own families on the
/// registry it is handed, and [`Metrics`] adds the chain-wide ones and encodes them all.
#[derive(Debug)]
struct Telemetry {
    metrics: Arc<Metrics>,
    sinks: SinkMetrics,
    leader: LeaderMetrics,
    buffer: BufferMetrics,
    coverage: CoverageExport,
    defense: DefenseMetrics,
    access: cluster::AccessReviewMetrics,
    certificate_expiry: CertificateExpiry,
}

impl Telemetry {
    fn register(cluster: &ClusterStart, tickets: &TicketFeed) -> Self {
        let mut registry = Registry::default();
        tickets.register(&mut registry);
        let leader = LeaderMetrics::default();
        leader.register(&mut registry);
        let buffer = BufferMetrics::default();
        let mut coverage = CoverageExport::default();
        if let Some(cache) = &cluster.cache {
            cluster::metrics::register(cache, &mut registry);
            buffer.register(&mut registry);
            coverage = CoverageExport::register(&mut registry);
        }
        let defense = DefenseMetrics::register(&mut registry);
        let access = cluster::AccessReviewMetrics::register(&mut registry);
        let certificate_expiry = CertificateExpiry::default();
        certificate_expiry.register(&mut registry);
        let sinks = SinkMetrics::register(&mut registry);
        Self {
            metrics: Arc::new(Metrics::in_registry(registry)),
            sinks,
            leader,
            buffer,
            coverage,
            defense,
            access,
            certificate_expiry,
        }
    }
}

/// Who may do what, asked of the API server when there is a cluster connection.
async fn access_review(
    cluster: &ClusterStart,
    telemetry: &Telemetry,
) -> Result<Arc<dyn crate::object::AccessReview>, ServeError> {
    Ok(match &cluster.source {
        Some(source) => Arc::new(cluster::AccessReviewer::new(
            source.client().await?,
            cluster::AccessReviewSettings::default(),
            telemetry.access.clone(),
        )),
        None => Arc::new(crate::object::NoAccessReview),
    })
}

/// The swap cell of the chain being served, with what its builds need: the webhook cache
/// bound, the cluster's buckets for `scope: Cluster` rate limits, the cluster's tickets, the
/// `--replay-on-reload` gate.
async fn live_chain(
    args: &ServeArgs,
    cluster: &ClusterStart,
    tickets: Arc<TicketFeed>,
) -> Result<Arc<LiveChain>, ServeError> {
    let mut live = LiveChain::default()
        .with_webhook_cache_bytes(args.webhook_cache_max_bytes)
        .with_ticket_feed(tickets);
    // `scope: Cluster` rate limits keep their buckets as Leases in warrant's namespace.
    if let Some(source) = &cluster.source {
        let client = source.client().await?;
        let namespace = &args.leader.leader_elect_resource_namespace;
        live = live.with_cluster_buckets(Arc::new(cluster::buckets::LeaseBuckets::new(
            client, namespace,
        )));
    }
    if !args.replay_on_reload.is_empty() {
        crate::replay::input::Reader::new(&args.replay_on_reload).map_err(ServeError::Replay)?;
        let options = crate::replay::Options {
            bootstrap: crate::replay::Bootstrap::new(&args.warrant_service_account),
            ..Default::default()
        };
        let gate = crate::replay::LockoutGate::new(args.replay_on_reload.clone(), options);
        live = live.with_gate(Box::new(gate));
    }
    Ok(Arc::new(live))
}

/// The configuration: a file is watched (and reloaded on change), the embedded default applied
/// once.
fn load_config(
    args: &ServeArgs,
    live: &Arc<LiveChain>,
    timing: WatchTiming,
    metrics: &Arc<Metrics>,
) -> Result<ConfigSource, ServeError> {
    let source = ConfigSource::resolve(args.config.as_deref());
    match &source {
        ConfigSource::File(path) => {
            tracing::info!(config = %path.display(), "watching configuration");
            tokio::spawn(live.clone().watch(path.clone(), timing, metrics.clone()));
        }
        ConfigSource::Embedded => {
            let loaded = source.load().map_err(ServeError::EmbeddedConfig)?;
            live.apply(loaded, metrics)?;
        }
    }
    Ok(source)
}

/// TLS and caller authentication: the serving certificate (given, or generated into
/// `--state-dir` with a CA that then authenticates callers) and the token file.
#[derive(Debug)]
struct Listener {
    tls: Arc<ReloadingTls>,
    caller_auth: CallerAuth,
    generated: Option<StateFiles>,
}

impl Listener {
    fn prepare(args: &ServeArgs, expiry: CertificateExpiry) -> Result<Self, ServeError> {
        let (files, generated) = tls_files(args)?;
        let tokens = match &args.token_auth_file {
            Some(p) => Some(TokenAuth::load(p)?),
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
        Ok(Self {
            tls: Arc::new(ReloadingTls::new(files)?.with_expiry(expiry)),
            caller_auth,
            generated,
        })
    }

    /// The listener's addresses, timeouts and limits.
    fn options(&self, args: &ServeArgs, times: &Times) -> ServerOptions {
        let mut options = ServerOptions::new(args.listen);
        options.insecure_listen = args.insecure_listen;
        options.shutdown_grace = times.grace;
        options.max_connections = args.max_connections as usize;
        options.idle_timeout = times.idle;
        options
    }
}

/// The serving certificate's files: the flags', or generated into `--state-dir` (then the
/// generated CA is the client CA unless `--client-ca-file` names another).
fn tls_files(args: &ServeArgs) -> Result<(TlsFiles, Option<StateFiles>), BootstrapError> {
    if let (Some(cert), Some(key)) = (&args.tls_cert_file, &args.tls_private_key_file) {
        let files = TlsFiles {
            cert: cert.clone(),
            key: key.clone(),
            client_ca: args.client_ca_file.clone(),
        };
        return Ok((files, None));
    }
    let state = bootstrap::prepare(&args.state_dir, args.listen)?;
    let files = TlsFiles {
        cert: state.serving_cert.clone(),
        key: state.serving_key.clone(),
        client_ca: Some(
            args.client_ca_file
                .clone()
                .unwrap_or_else(|| state.ca_cert.clone()),
        ),
    };
    Ok((files, Some(state)))
}

/// The audit sink `--audit-log` names, with the remote sinks `--audit-kafka-*` ask for.
fn open_audit(args: &ServeArgs, telemetry: &Telemetry) -> Result<Arc<AuditSink>, ServeError> {
    let metrics = &telemetry.metrics;
    let target = match args.audit_log.as_str() {
        "-" => AuditTarget::Stdout,
        "" | "none" => AuditTarget::Disabled,
        path => AuditTarget::File(PathBuf::from(path)),
    };
    let sink = AuditSink::open(&target, metrics.clone()).map_err(|source| ServeError::Audit {
        path: args.audit_log.clone(),
        source,
    })?;
    let mut sink = sink.with_redacted_extra(args.audit_redact_extra.clone());
    for remote in super::audit_sinks::start(&args.audit_sinks, &telemetry.sinks)? {
        sink = sink.with_remote(remote);
    }
    Ok(Arc::new(sink))
}

/// The validation and buffer rings' running parts: the cluster view (the cache, opened once a
/// chain needs it, or none), the annotator that records requesters, and the buffer's
/// controller.
#[derive(Debug)]
struct Rings {
    view: Arc<dyn ClusterView>,
    annotator: Arc<cluster::Annotator>,
    cluster_task: JoinHandle<()>,
    buffer_task: Option<JoinHandle<()>>,
    coverage_task: Option<JoinHandle<()>>,
}

impl Rings {
    fn start(
        live: &Arc<LiveChain>,
        cluster: ClusterStart,
        audit: &Arc<AuditSink>,
        telemetry: &Telemetry,
        leadership: &Leadership,
        coverage_interval: Duration,
    ) -> Self {
        let needed = {
            let live = live.clone();
            move || live.load().is_some_and(|a| a.chain.admits())
        };
        let annotator = Arc::new(cluster::Annotator::new(cluster.source.clone()));
        let buffer_source = cluster.source.clone();
        let mut coverage_task = None;
        let (view, cluster_task): (Arc<dyn ClusterView>, _) = match (cluster.source, cluster.cache)
        {
            (Some(source), Some(cache)) => {
                let task = tokio::spawn(cluster::open_when_needed(cache.clone(), source, needed));
                // The coverage series: counted by the leader from the same cache.
                coverage_task = Some(tokio::spawn(telemetry.coverage.clone().run(
                    live.clone(),
                    cache.clone(),
                    leadership.leading.clone(),
                    coverage_interval,
                )));
                (cache, task)
            }
            _ => (
                Arc::new(NoCluster),
                tokio::spawn(cluster::warn_unconnected(needed)),
            ),
        };
        // The buffer ring's controller, once a guard has a `buffer` block. It acts only while
        // this replica leads; without leader election the receiver is always true.
        let buffer_task = buffer_source.map(|source| {
            let buffer = crate::buffer::Buffer {
                live: live.clone(),
                source,
                view: view.clone(),
                audit: audit.clone(),
                metrics: telemetry.buffer.clone(),
            };
            tokio::spawn(buffer.run(leadership.leading.clone()))
        });
        Self {
            view,
            annotator,
            cluster_task,
            buffer_task,
            coverage_task,
        }
    }
}

/// Pod security admission when `--pod-security` is not `Off`: its constraint cache, watched
/// once a client can be built (until then, and without a cluster connection, every pod gets
/// the `--pod-security-unavailable` policy, with the reason in the answer), and the task
/// that keeps the watches.
fn start_pod_security(
    args: &ServeArgs,
    source: Option<cluster::Source>,
    access_review: &Arc<dyn crate::object::AccessReview>,
) -> Option<(Arc<crate::pod_admission::PodSecurity>, JoinHandle<()>)> {
    use crate::pod_admission::{OnUnavailable, PodSecurity, PodSecuritySettings};
    let mode = crate::config::Mode::parse(&args.pod_security)?;
    let settings = PodSecuritySettings {
        mode,
        on_unavailable: OnUnavailable::parse(&args.pod_security_unavailable).unwrap_or_default(),
    };
    let cache = Arc::new(cluster::constraints::ConstraintCache::default());
    let watched = cache.clone();
    let task = tokio::spawn(async move {
        let Some(source) = source else {
            watched.unconnected();
            tracing::error!(
                "--pod-security needs a cluster connection (--kubeconfig, or in a cluster): every pod gets the --pod-security-unavailable policy"
            );
            return;
        };
        let mut delay = std::time::Duration::from_secs(1);
        let client = loop {
            match source.client().await {
                Ok(client) => break client,
                Err(e) => {
                    tracing::error!(error = %e, retry_in = ?delay, "pod security cannot build the cluster client");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(std::time::Duration::from_secs(30));
                }
            }
        };
        let watches = watched.start(&client);
        for watch in watches {
            let _ = watch.await;
        }
    });
    tracing::info!(mode = mode.as_str(), "pod security admission enabled");
    Some((
        Arc::new(PodSecurity::new(settings, cache, access_review.clone())),
        task,
    ))
}

/// The tasks that run beside the server until it stops: the certificate watch and the signals
/// that do not stop it.
#[derive(Debug)]
struct Background {
    tls: JoinHandle<()>,
    signals: JoinHandle<()>,
}

/// Says where warrant listens, and what it generated.
fn announce(server: &Server, generated: Option<&StateFiles>) {
    let addr = server.local_addr();
    tracing::info!(url = %format!("https://{addr}/authorize"), "warrant listening");
    eprintln!("warrant listening on https://{addr}/authorize");
    if let Some(plain) = server.insecure_addr() {
        eprintln!("warrant also serving plain HTTP on http://{plain}/authorize (loopback only)");
    }
    if let Some(state) = generated {
        print_generated(state, addr);
    }
}

/// How long the remote audit sinks may take to deliver (or spool) what waits at stop.
const REMOTE_SINK_CLOSE: Duration = Duration::from_secs(5);

/// After the drain: the election releases its Lease (bounded by the renew deadline inside its
/// task), the background tasks stop, and the audit sink is flushed once the last task holding
/// it has let it go.
async fn stop(leadership: Leadership, background: Background, rings: Rings, audit: Arc<AuditSink>) {
    if let Some(task) = leadership.task {
        let _ = task.await;
    }
    background.tls.abort();
    background.signals.abort();
    // The task holds the audit sink: let it go before the last drop flushes the sink.
    let _ = background.signals.await;
    rings.cluster_task.abort();
    if let Some(task) = rings.coverage_task {
        task.abort();
    }
    if let Some(task) = rings.buffer_task {
        task.abort();
        // The task holds the audit sink too.
        let _ = task.await;
    }
    // The remote sinks get a few seconds to deliver, or spool, what waits.
    audit.close_remotes(REMOTE_SINK_CLOSE).await;
    drop(audit);
    tracing::info!("stopped");
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

/// The signals that do not stop the server: SIGHUP re-reads the
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
