//! `warrant why RESOURCE/NAME` (also `kubectl warrant why`): why a deletion of the object is
//! (or would be) refused, asked of the cluster with the user's kubeconfig and judged by the
//! chain file's rings ([`crate::defense::why`]): the object's labels and finalizers, the
//! tickets naming it, each ring's answer, and the guard's risk report (level, score, reasons,
//! what the object takes down). Exit status: 0 when both rings would let the deletion through
//! (RBAC still decides), 3 when a ring refuses it, 1 when the cluster could not answer, 2 for a
//! usage or configuration error.

use super::ExitStatus;
use super::user_cluster::{Printed, UserCluster};
use crate::cli::ConfigSource;
use crate::cluster::target::ObjectTarget;
use crate::defense::why::{Explanation, Question, RingAnswer, explain};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

/// `warrant why`.
#[derive(Debug, clap::Args)]
pub struct WhyArgs {
    /// The object, as `resource[.group]/name` (`statefulsets.apps/orders-db`).
    #[arg(value_name = "RESOURCE/NAME")]
    pub target: String,
    /// The cluster and namespace.
    #[command(flatten)]
    pub cluster: UserCluster,
    /// Who deletes (default: you, as the API server authenticates you).
    #[arg(long = "as", value_name = "USER")]
    pub as_user: Option<String>,
    /// A group of that user (repeatable; default: yours when `--as` is not given).
    #[arg(long = "as-group", value_name = "GROUP")]
    pub as_group: Vec<String>,
    /// A ticket presented with the deletion (as the guards' user extra key).
    #[arg(long, value_name = "ID")]
    pub ticket: Option<String>,
    /// The chain file the rings run; default `authz-config/warrant.yaml` or the embedded copy.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// How long to wait for the cluster to be listed.
    #[arg(long, default_value = "60s", value_parser = timeout, value_name = "DURATION")]
    pub timeout: Duration,
    /// Output: a report (default), `json` or `yaml`.
    #[arg(short = 'o', long, value_enum, default_value_t = Printed::Table)]
    pub output: Printed,
}

/// `--timeout`: a positive Go duration.
fn timeout(v: &str) -> Result<Duration, super::duration_flag::DurationFlagError> {
    super::duration_flag::positive("timeout", v, "60s")
}

/// Explains and prints.
pub fn run(args: WhyArgs) -> ExitStatus {
    let target = match ObjectTarget::parse(&args.target) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitStatus::Usage;
        }
    };
    let config = match ConfigSource::resolve(args.config.as_deref()).load() {
        Ok(l) => l.config,
        Err(errors) => {
            for e in errors.iter() {
                eprintln!("{e}");
            }
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
    let explained = runtime.block_on(async {
        let (client, namespace) = args.cluster.open().await.map_err(|e| e.to_string())?;
        let (user, groups) = match &args.as_user {
            Some(u) => (u.clone(), args.as_group.clone()),
            None => {
                let me = crate::cluster::whoami::whoami(&client)
                    .await
                    .map_err(|e| e.to_string())?;
                (me.name, me.groups)
            }
        };
        let question = Question {
            target,
            namespace,
            user,
            groups,
            ticket: args.ticket.clone(),
            timeout: args.timeout,
        };
        explain(&client, &config, &question, chrono::Utc::now())
            .await
            .map_err(|e| e.to_string())
    });
    let explained = match explained {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitStatus::Failure;
        }
    };
    match args.output.document(&explained) {
        Some(Ok(text)) => print!("{text}"),
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return ExitStatus::Failure;
        }
        None => print!("{}", report(&explained)),
    }
    if explained.refused() {
        ExitStatus::Denied
    } else {
        ExitStatus::Success
    }
}

/// The report as text.
pub fn report(e: &Explanation) -> String {
    let mut s = String::new();
    let at = if e.namespace.is_empty() {
        e.object.clone()
    } else {
        format!("{} in namespace {}", e.object, e.namespace)
    };
    let _ = writeln!(s, "deletion of {at} by {}", e.user);
    let labels: Vec<String> = e.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let _ = writeln!(s, "labels: {}", none_or(&labels));
    let _ = writeln!(s, "finalizers: {}", none_or(&e.finalizers));
    if e.terminating {
        let _ = writeln!(s, "terminating: yes (see `holds`)");
    }
    ring(&mut s, "authorization ring", &e.authorization);
    ring(&mut s, "validation ring", &e.validation);
    let scope = if e.tickets_everywhere {
        ""
    } else {
        " (in this namespace: you may not list tickets everywhere)"
    };
    let _ = writeln!(s, "tickets naming it{scope}:");
    if e.tickets.is_empty() {
        let _ = writeln!(s, "  none");
    }
    for t in &e.tickets {
        let _ = writeln!(
            s,
            "  {} {} requested by {}, approved by {}, expires {}{}",
            t.id,
            t.phase,
            t.requested_by,
            none_or(&t.approvers),
            t.expires_at,
            if t.single_use { ", single use" } else { "" }
        );
    }
    s
}

fn none_or(items: &[String]) -> String {
    if items.is_empty() {
        "<none>".into()
    } else {
        items.join(", ")
    }
}

/// One ring's answer and the guard's report.
fn ring(s: &mut String, name: &str, a: &RingAnswer) {
    let _ = writeln!(s, "{name}: {}", a.decision);
    for line in a.reason.lines() {
        let _ = writeln!(s, "  reason: {line}");
    }
    let Some(d) = &a.assessment else {
        return;
    };
    let _ = writeln!(
        s,
        "  risk {} score {}",
        d["riskLevel"].as_str().unwrap_or(""),
        d["riskScore"]
    );
    for r in d["riskReasons"].as_array().into_iter().flatten() {
        let _ = writeln!(s, "    {}", r.as_str().unwrap_or(""));
    }
    if let Some(impact) = d.get("impact") {
        let list = |key: &str| {
            let items: Vec<String> = impact[key]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            none_or(&items)
        };
        let _ = writeln!(
            s,
            "  takes down: running pods {}; services {}; ingresses {}; bound volumes {}",
            impact["runningPods"],
            list("services"),
            list("ingresses"),
            list("boundVolumes"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::report;
    use crate::defense::why::{Explanation, RingAnswer, TicketLine};

    #[test]
    fn the_report_names_the_refusal_the_risk_and_the_tickets() {
        let e = Explanation {
            object: "statefulsets.apps/orders-db".into(),
            namespace: "shop".into(),
            user: "alice".into(),
            labels: [("tier".to_owned(), "db".to_owned())].into(),
            finalizers: vec![],
            terminating: false,
            authorization: RingAnswer {
                decision: "NoOpinion".into(),
                reason: String::new(),
                code: None,
                assessment: None,
            },
            validation: RingAnswer {
                decision: "refused".into(),
                reason: "deletion-guard: a change ticket is required [MISSING_TICKET]".into(),
                code: Some("MISSING_TICKET".into()),
                assessment: Some(serde_json::json!({
                    "riskLevel": "CRITICAL", "riskScore": 60, "riskReasons": ["critical label +40"],
                    "impact": {"runningPods": 2, "services": ["orders"], "ingresses": [], "boundVolumes": []}
                })),
            },
            tickets: vec![TicketLine {
                id: "shop/retire".into(),
                phase: "Pending".into(),
                requested_by: "alice".into(),
                approvers: vec![],
                expires_at: "2026-12-05T00:00:00Z".into(),
                single_use: true,
            }],
            tickets_everywhere: true,
        };
        assert!(e.refused());
        assert_eq!(
            report(&e),
            "deletion of statefulsets.apps/orders-db in namespace shop by alice\n\
             labels: tier=db\n\
             finalizers: <none>\n\
             authorization ring: NoOpinion\n\
             validation ring: refused\n\
             \x20 reason: deletion-guard: a change ticket is required [MISSING_TICKET]\n\
             \x20 risk CRITICAL score 60\n\
             \x20   critical label +40\n\
             \x20 takes down: running pods 2; services orders; ingresses <none>; bound volumes <none>\n\
             tickets naming it:\n\
             \x20 shop/retire Pending requested by alice, approved by <none>, expires 2026-12-05T00:00:00Z, single use\n"
        );
    }
}
