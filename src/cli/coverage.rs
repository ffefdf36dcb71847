//! `warrant coverage --config FILE (--kubeconfig PATH | --cluster-state DIR)`: the objects that
//! look critical (the guard's risk model scores their deletion at `--min-level` or above, or
//! their name or namespace matches `--critical-names`) but that no rule or protection label of
//! the guard protects, or protects below the level their risk calls for, riskiest first, as a
//! table, JSON, or the label patches that close the gaps (`-o yaml`). Against a live cluster,
//! the objects of every custom resource are candidates too. Exit status: 0 when there is no
//! gap, 1 when there are gaps, 2 on a usage, configuration or cluster error.

use super::ExitStatus;
use crate::authorizer::deletion_guard::RiskLevel;
use crate::cluster::{Cache, CacheOptions, Source};
use crate::config::model::guard::GuardSpec;
use crate::config::model::pattern::Pattern;
use crate::defense::coverage::{self, Criteria, DEFAULT_CRITICAL_NAMES, Gap};
use crate::object::ClusterView;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Output format of `warrant coverage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// One line per gap: level, score, kind, namespace/name, reasons.
    Table,
    /// The gaps as one JSON array.
    Json,
    /// The label patches that close the gaps, one YAML document each (partial objects to
    /// apply server-side), the score and reasons in comments.
    Yaml,
}

/// The lowest risk level reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MinLevel {
    /// Every unprotected object.
    Low,
    /// MEDIUM and above.
    Medium,
    /// HIGH and above.
    High,
    /// CRITICAL only.
    Critical,
}

impl MinLevel {
    fn level(self) -> RiskLevel {
        match self {
            MinLevel::Low => RiskLevel::Low,
            MinLevel::Medium => RiskLevel::Medium,
            MinLevel::High => RiskLevel::High,
            MinLevel::Critical => RiskLevel::Critical,
        }
    }
}

/// Arguments of `warrant coverage`.
#[derive(Debug, clap::Args)]
pub struct CoverageArgs {
    /// The chain file whose DeletionGuard protects the cluster.
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// The DeletionGuard entry to read (default: the first).
    #[arg(long, value_name = "NAME")]
    pub guard: Option<String>,
    /// The cluster to read, through this kubeconfig (else in-cluster when run in a pod).
    #[arg(long, value_name = "PATH", conflicts_with = "cluster_state")]
    pub kubeconfig: Option<PathBuf>,
    /// Read saved cluster state (YAML or JSON files, as `warrant check` reads them) instead of
    /// a cluster.
    #[arg(long, value_name = "DIR")]
    pub cluster_state: Option<PathBuf>,
    /// How long to wait for the cluster to be listed.
    #[arg(long, default_value = "60s", value_parser = timeout, value_name = "DURATION")]
    pub timeout: Duration,
    /// The lowest deletion risk level that needs protection.
    #[arg(long, value_enum, default_value_t = MinLevel::Medium)]
    pub min_level: MinLevel,
    /// Name patterns (`*` wildcards) of objects or namespaces that need protection whatever
    /// their risk (repeatable; default `*prod*`, `*production*`).
    #[arg(long = "critical-names", value_name = "PATTERN")]
    pub critical_names: Vec<String>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

/// `--timeout`: a positive Go duration.
fn timeout(v: &str) -> Result<Duration, super::duration_flag::DurationFlagError> {
    super::duration_flag::positive("timeout", v, "60s")
}

/// Finds and prints the gaps.
pub fn run(args: CoverageArgs) -> ExitStatus {
    let spec = match guard_spec(&args.config, args.guard.as_deref()) {
        Ok(s) => s,
        Err(status) => return status,
    };
    let names: Vec<&str> = if args.critical_names.is_empty() {
        DEFAULT_CRITICAL_NAMES.to_vec()
    } else {
        args.critical_names.iter().map(String::as_str).collect()
    };
    let criteria = Criteria {
        min_level: args.min_level.level(),
        critical_names: names.into_iter().map(Pattern::new).collect(),
    };
    let runtime = match super::check::offline_runtime() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitStatus::Failure;
        }
    };
    let label_key = match (args.output, spec.objects.protection_label.clone()) {
        (Output::Yaml, None) => {
            eprintln!(
                "error: {}: the DeletionGuard has no protectionLabel to patch; protect with protectedResources rules instead",
                args.config.display()
            );
            return ExitStatus::Usage;
        }
        (_, key) => key.unwrap_or_default(),
    };
    let found = runtime.block_on(async {
        let (inventory, view, _) = read_cluster(
            args.cluster_state.as_deref(),
            args.kubeconfig.as_deref(),
            args.timeout,
        )
        .await?;
        coverage::gaps(&spec, inventory, view, chrono::Utc::now(), &criteria)
            .await
            .map_err(|e| e.to_string())
    });
    let gaps = match found {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitStatus::Usage;
        }
    };
    match args.output {
        Output::Json => match serde_json::to_string_pretty(&gaps) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitStatus::Failure;
            }
        },
        Output::Yaml => print!("{}", patches(&gaps, &label_key)),
        Output::Table => print!("{}", table(&gaps)),
    }
    if gaps.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    }
}

/// The settings of the DeletionGuard `guard` (default: the first) of the chain file `config`,
/// printing what is wrong.
pub(super) fn guard_spec(config: &Path, guard: Option<&str>) -> Result<GuardSpec, ExitStatus> {
    let loaded = crate::config::load_file(config).map_err(|errors| {
        for e in errors.iter() {
            eprintln!("{e}");
        }
        ExitStatus::Usage
    })?;
    let found = loaded
        .config
        .deletion_guards()
        .find(|(name, _)| guard.is_none_or(|n| name.as_str() == n))
        .map(|(_, g)| g.clone());
    found.ok_or_else(|| {
        match guard {
            Some(n) => eprintln!("error: {}: no DeletionGuard named {n}", config.display()),
            None => eprintln!("error: {}: no DeletionGuard", config.display()),
        }
        ExitStatus::Usage
    })
}

/// What [`read_cluster`] reads: the inventory, the view, and the client of a live cluster.
pub(super) type ClusterRead = (
    Vec<crate::cluster::inventory::Inventoried>,
    Arc<dyn ClusterView>,
    Option<kube::Client>,
);

/// The inventory and the view: from saved files (`cluster_state`), or from the cluster once
/// every watch has listed (within `timeout`).
pub(super) async fn read_cluster(
    cluster_state: Option<&Path>,
    kubeconfig: Option<&Path>,
    timeout: Duration,
) -> Result<ClusterRead, String> {
    if let Some(dir) = cluster_state {
        let view = crate::cluster::FileView::load(dir)
            .map_err(|e| format!("--cluster-state {}: {e}", dir.display()))?;
        let inventory = view.index().inventory();
        return Ok((inventory, Arc::new(view), None));
    }
    let source =
        Source::from_env(kubeconfig).ok_or("no cluster: give --kubeconfig or --cluster-state")?;
    let client = source.client().await.map_err(|e| e.to_string())?;
    let cache = Arc::new(Cache::new(CacheOptions::default()));
    let _watches = crate::cluster::start(&cache, client.clone());
    let deadline = tokio::time::Instant::now() + timeout;
    while let Err(e) = cache.ready() {
        if tokio::time::Instant::now() >= deadline {
            return Err(format!(
                "the cluster was not listed within {timeout:?}: {e}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut inventory = cache.read(|i| i.inventory()).map_err(|e| e.to_string())?;
    let custom = crate::cluster::crd::custom_objects(&client, timeout)
        .await
        .map_err(|e| e.to_string())?;
    inventory.extend(custom);
    Ok((inventory, cache, Some(client)))
}

/// The gaps as a table.
fn table(gaps: &[Gap]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if gaps.is_empty() {
        out.push_str("no unprotected critical objects\n");
        return out;
    }
    let _ = writeln!(
        out,
        "{:<9} {:>5}  {:<22} {:<40} {:<19} REASONS",
        "LEVEL", "SCORE", "KIND", "NAMESPACE/NAME", "PROTECTION"
    );
    for g in gaps {
        let _ = writeln!(
            out,
            "{:<9} {:>5}  {:<22} {:<40} {:<19} {}",
            g.level.as_str(),
            g.score,
            g.kind,
            place(g),
            format!("{}->{}", current(g), g.wanted.as_str()),
            g.reasons.join(", ")
        );
    }
    let below = gaps.iter().filter(|g| g.current.is_some()).count();
    let _ = write!(out, "{} unprotected critical objects", gaps.len() - below);
    if below > 0 {
        let _ = write!(out, ", {below} protected below their risk");
    }
    out.push('\n');
    out
}

/// `namespace/name`, or `name` when cluster-scoped.
fn place(g: &Gap) -> String {
    if g.namespace.is_empty() {
        g.name.clone()
    } else {
        format!("{}/{}", g.namespace, g.name)
    }
}

/// The protection a gap has now.
fn current(g: &Gap) -> &'static str {
    g.current.map_or("none", |l| l.as_str())
}

/// The label patches, one YAML document each, the score and reasons in comments.
fn patches(gaps: &[Gap], label_key: &str) -> String {
    let mut out = String::new();
    for g in gaps {
        out.push_str("---\n");
        out.push_str(&format!(
            "# {} {}: {} risk, score {}, protection {} -> {}\n",
            g.kind,
            place(g),
            g.level.as_str(),
            g.score,
            current(g),
            g.wanted.as_str()
        ));
        for reason in &g.reasons {
            out.push_str(&format!("# - {reason}\n"));
        }
        match serde_saphyr::to_string(&g.patch(label_key)) {
            Ok(doc) => out.push_str(&doc),
            Err(e) => out.push_str(&format!("# cannot be written as YAML: {e}\n")),
        }
    }
    out
}
