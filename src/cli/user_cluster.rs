//! The flags every command that acts in a cluster as its user takes, as kubectl spells them
//! (`--kubeconfig`, `--context`, `-n`), and the connection they open
//! ([`crate::cluster::connect::user_client`]); the chain file such a command reads its guard's
//! settings from; and how such a command prints (`-o json|yaml`, else a table).

use crate::cluster::ConnectError;
use crate::config::Config;
use crate::config::model::buffer::BufferSettings;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// `--kubeconfig`, `--context`, `-n`.
#[derive(Debug, Clone, clap::Args)]
pub struct UserCluster {
    /// The kubeconfig (default: `KUBECONFIG`, then `~/.kube/config`).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context (default: its current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// The namespace (default: the context's).
    #[arg(short = 'n', long, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
}

impl UserCluster {
    /// The user's client and the namespace to act in.
    pub async fn open(&self) -> Result<(kube::Client, String), ConnectError> {
        let (client, default) = crate::cluster::connect::user_client(
            self.kubeconfig.as_deref(),
            self.context.as_deref(),
        )
        .await?;
        Ok((client, self.namespace.clone().unwrap_or(default)))
    }
}

/// How a command prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Printed {
    /// A table, or a line saying what was done.
    Table,
    /// JSON.
    Json,
    /// YAML.
    Yaml,
}

impl Printed {
    /// `value` as JSON or YAML; `None` for a table (the caller prints its own).
    pub fn document<T: serde::Serialize>(self, value: &T) -> Option<Result<String, String>> {
        match self {
            Printed::Table => None,
            Printed::Json => Some(
                serde_json::to_string_pretty(value)
                    .map(|s| s + "\n")
                    .map_err(|e| e.to_string()),
            ),
            Printed::Yaml => Some(serde_saphyr::to_string(value).map_err(|e| e.to_string())),
        }
    }
}

/// Rows as kubectl prints a table: upper-case headers, columns three spaces apart, the last
/// column unpadded; `No resources found.` when there is no row.
pub fn table(head: &[&str], rows: &[Vec<String>]) -> String {
    if rows.is_empty() {
        return "No resources found.\n".into();
    }
    let widths: Vec<usize> = (0..head.len())
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, String::len))
                .chain([head[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    let head: Vec<String> = head.iter().map(|h| (*h).to_owned()).collect();
    for r in std::iter::once(&head).chain(rows) {
        let last = r.len().saturating_sub(1);
        for (c, cell) in r.iter().enumerate() {
            if c == last {
                let _ = writeln!(out, "{cell}");
            } else {
                let _ = write!(out, "{cell:<w$}   ", w = widths[c]);
            }
        }
    }
    out
}

/// The chain file at `path`, every error printed as `warrant validate` prints it.
pub fn load_config(path: &Path) -> Result<Config, String> {
    crate::config::load_file(path)
        .map(|l| l.config)
        .map_err(|errors| {
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        })
}

/// The buffer settings a command reads: those of the guard named `guard` (else the first with
/// a `buffer` block) in the chain file `config`, or the defaults without a chain file.
pub fn buffer_settings(
    config: Option<&Path>,
    guard: Option<&str>,
) -> Result<BufferSettings, String> {
    let Some(path) = config else {
        return Ok(BufferSettings::default());
    };
    let config = load_config(path)?;
    config
        .deletion_guards()
        .filter(|(name, _)| guard.is_none_or(|g| name.as_str() == g))
        .find_map(|(_, spec)| spec.buffer.clone())
        .ok_or_else(|| match guard {
            Some(g) => format!(
                "{}: no DeletionGuard named {g} with a buffer block",
                path.display()
            ),
            None => format!("{}: no DeletionGuard with a buffer block", path.display()),
        })
}

/// Age as kubectl's `HumanDuration` prints it, to two units below a day (`9m12s`, `3h5m`).
pub fn duration(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{}s", s / 60, s % 60),
        s if s < 86400 => format!("{}h{}m", s / 3600, (s % 3600) / 60),
        s => format!("{}d{}h", s / 86400, (s % 86400) / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::{duration, table};

    #[test]
    fn tables_pad_as_kubectl_does() {
        assert_eq!(table(&["A", "B"], &[]), "No resources found.\n");
        assert_eq!(
            table(
                &["NAME", "LEFT"],
                &[vec!["orders-db".into(), "9m12s".into()]]
            ),
            "NAME        LEFT\norders-db   9m12s\n"
        );
        assert_eq!(duration(552), "9m12s");
        assert_eq!(duration(-3), "0s");
        assert_eq!(duration(3 * 3600 + 300), "3h5m");
    }
}
