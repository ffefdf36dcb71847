//! `warrant recommend --config FILE --audit-log PATH... (--kubeconfig PATH | --cluster-state DIR)`:
//! protection levels per namespace and per object proposed from an audit history (what was
//! deleted and restored, what many principals write, what is never deleted and risky), with the
//! evidence for each, as a table, JSON, or YAML label patches to review. Exit status: 0 when
//! nothing is proposed, 1 when something is, 2 on a usage, configuration, input or cluster
//! error.

use super::ExitStatus;
use super::coverage::{guard_spec, read_cluster};
use crate::authorizer::BoxFuture;
use crate::cluster::lookup::{self, Coordinates};
use crate::defense::recommend::assemble::{
    self, Cluster, InventoryOnly, Objects, Presence, Recommendation, Report, Scope,
};
use crate::defense::recommend::history::{self, ObjectKey};
use crate::defense::recommend::rules::Settings;
use crate::object::ViewError;
use std::path::PathBuf;
use std::time::Duration;

/// Output format of `warrant recommend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// One line per recommendation: scope, level, current, namespace/name, reasons.
    Table,
    /// The label patches, one YAML document each (partial objects to apply server-side), the
    /// evidence in comments.
    Yaml,
    /// The whole report as JSON.
    Json,
}

/// Arguments of `warrant recommend`.
#[derive(Debug, clap::Args)]
pub struct RecommendArgs {
    /// The chain file whose DeletionGuard protects the cluster (its label key, exclusions and
    /// risk model).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// The DeletionGuard entry to read (default: the first).
    #[arg(long, value_name = "NAME")]
    pub guard: Option<String>,
    /// An audit log: kube-apiserver's (`audit.k8s.io/v1` Event JSON lines, as
    /// `--audit-log-path` writes them) or warrant's own records (repeatable; both may be given).
    #[arg(long = "audit-log", value_name = "PATH", required = true)]
    pub audit_logs: Vec<PathBuf>,
    /// The cluster to read, through this kubeconfig (else in-cluster when run in a pod).
    #[arg(long, value_name = "PATH", conflicts_with = "cluster_state")]
    pub kubeconfig: Option<PathBuf>,
    /// Read saved cluster state (YAML or JSON files, as `warrant check` reads them) instead of
    /// a cluster.
    #[arg(long, value_name = "DIR")]
    pub cluster_state: Option<PathBuf>,
    /// How long to wait for the cluster to be listed (and for each object read).
    #[arg(long, default_value = "60s", value_parser = timeout, value_name = "DURATION")]
    pub timeout: Duration,
    /// A creation of an object this soon after its deletion restores it.
    #[arg(long, default_value = "1h", value_parser = restore_window, value_name = "DURATION")]
    pub restore_window: Duration,
    /// Distinct principals writing an object that make it shared (`standard`).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..), value_name = "N")]
    pub many_principals: u32,
    /// Objects inside a namespace with a proposed level that propose one for the namespace.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..), value_name = "N")]
    pub namespace_min_objects: u32,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

fn timeout(v: &str) -> Result<Duration, super::duration_flag::DurationFlagError> {
    super::duration_flag::positive("timeout", v, "60s")
}

fn restore_window(v: &str) -> Result<Duration, super::duration_flag::DurationFlagError> {
    super::duration_flag::positive("restore-window", v, "1h")
}

/// Objects read live through the client, each within the timeout.
struct Live {
    client: kube::Client,
    timeout: Duration,
}

impl Objects for Live {
    fn get<'a>(
        &'a self,
        key: &'a ObjectKey,
        version: &'a str,
    ) -> BoxFuture<'a, Result<Presence, ViewError>> {
        Box::pin(async move {
            if version.is_empty() {
                return Ok(Presence::Unknown);
            }
            let at = Coordinates {
                group: &key.group,
                version,
                resource: &key.resource,
                namespace: &key.namespace,
                name: &key.name,
            };
            Ok(match lookup::get(&self.client, at, self.timeout).await? {
                Some(s) => Presence::Found(s),
                None => Presence::Absent,
            })
        })
    }
}

/// Reads the history and the cluster, and prints the recommendations.
pub fn run(args: RecommendArgs) -> ExitStatus {
    let spec = match guard_spec(&args.config, args.guard.as_deref()) {
        Ok(s) => s,
        Err(status) => return status,
    };
    let Some(label_key) = spec.objects.protection_label.clone() else {
        eprintln!(
            "error: {}: the DeletionGuard has no protectionLabel to recommend",
            args.config.display()
        );
        return ExitStatus::Usage;
    };
    let Ok(window) = chrono::TimeDelta::from_std(args.restore_window) else {
        eprintln!("error: --restore-window is too long");
        return ExitStatus::Usage;
    };
    let settings = Settings {
        restore_window: window,
        many_principals: args.many_principals as usize,
        namespace_min_objects: args.namespace_min_objects as usize,
    };
    let history = match history::read(&args.audit_logs) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitStatus::Usage;
        }
    };
    let runtime = match super::check::offline_runtime() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitStatus::Failure;
        }
    };
    let found = runtime.block_on(async {
        let (inventory, view, client) = read_cluster(
            args.cluster_state.as_deref(),
            args.kubeconfig.as_deref(),
            args.timeout,
        )
        .await?;
        let live = client.map(|client| Live {
            client,
            timeout: args.timeout,
        });
        let objects: &dyn Objects = match &live {
            Some(l) => l,
            None => &InventoryOnly,
        };
        let cluster = Cluster {
            inventory,
            view,
            objects,
        };
        assemble::recommend(&spec, &history, cluster, chrono::Utc::now(), &settings)
            .await
            .map_err(|e| e.to_string())
    });
    let report = match found {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitStatus::Usage;
        }
    };
    let printed = match args.output {
        Output::Json => serde_json::to_string_pretty(&report).map(|s| format!("{s}\n")),
        Output::Yaml => Ok(patches(&report, &label_key)),
        Output::Table => Ok(table(&report)),
    };
    match printed {
        Ok(s) => print!("{s}"),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitStatus::Failure;
        }
    }
    if report.recommendations.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    }
}

fn place(r: &Recommendation) -> String {
    let resource = match r.group.as_str() {
        "" => r.resource.clone(),
        g => format!("{}.{g}", r.resource),
    };
    if r.namespace.is_empty() {
        format!("{resource}/{}", r.name)
    } else {
        format!("{resource} {}/{}", r.namespace, r.name)
    }
}

/// The recommendations as a table.
fn table(report: &Report) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let span = match (report.from, report.to) {
        (Some(f), Some(t)) => format!("from {} to {}", f.to_rfc3339(), t.to_rfc3339()),
        _ => "no time span".to_owned(),
    };
    let _ = writeln!(
        out,
        "history: {} records, {} writes, {span}",
        report.records, report.writes
    );
    if report.recommendations.is_empty() {
        out.push_str("no protection to recommend\n");
        return out;
    }
    let _ = writeln!(
        out,
        "{:<10} {:<9} {:<9} {:<48} REASONS",
        "SCOPE", "LEVEL", "CURRENT", "OBJECT"
    );
    for r in &report.recommendations {
        let scope = match r.scope {
            Scope::Namespace => "namespace",
            Scope::Object => "object",
        };
        let _ = writeln!(
            out,
            "{:<10} {:<9} {:<9} {:<48} {}",
            scope,
            r.level.as_str(),
            r.current.map_or("none", |l| l.as_str()),
            place(r),
            r.reasons.join("; ")
        );
    }
    let _ = writeln!(out, "{} recommendations", report.recommendations.len());
    out
}

/// The label patches, one YAML document each, the evidence in comments.
fn patches(report: &Report, label_key: &str) -> String {
    let mut out = String::new();
    for r in &report.recommendations {
        out.push_str("---\n");
        out.push_str(&format!(
            "# {}: {} (now {})\n",
            place(r),
            r.level.as_str(),
            r.current.map_or("unprotected", |l| l.as_str())
        ));
        for reason in &r.reasons {
            out.push_str(&format!("# - {reason}\n"));
        }
        match r.patch(label_key).map(|p| serde_saphyr::to_string(&p)) {
            Some(Ok(doc)) => out.push_str(&doc),
            Some(Err(e)) => out.push_str(&format!("# cannot be written as YAML: {e}\n")),
            None => {
                let ns = if r.namespace.is_empty() {
                    String::new()
                } else {
                    format!(" -n {}", r.namespace)
                };
                let resource = match r.group.as_str() {
                    "" => r.resource.clone(),
                    g => format!("{}.{g}", r.resource),
                };
                out.push_str(&format!(
                    "# kind unknown (not in the cluster state read): kubectl label{ns} {resource} {} {label_key}={} --overwrite\n",
                    r.name,
                    r.level.as_str()
                ));
            }
        }
    }
    out
}
