//! `warrant serve --replay-on-reload INPUT...`: before a reloaded configuration replaces the one
//! being served, the recorded reviews of INPUT are replayed against both, and the reload is
//! refused (the last good chain keeps serving, with a log line and
//! `warrant_config_reload_refusals_total{reason="lockout"}`) when a flip would deny a bootstrap
//! identity. Both chains are built afresh for the replay, with their own state and unregistered
//! metrics, so replayed traffic never spends a rate-limit token or counts in `/metrics`.

use super::engine::{Options, replay_blocking};
use crate::authorizer::Chain;
use crate::config::Config;
use crate::reload::{Refusal, ReloadGate};
use std::path::PathBuf;

/// The reload gate of `--replay-on-reload`.
#[derive(Debug)]
pub struct LockoutGate {
    inputs: Vec<PathBuf>,
    options: Options,
}

impl LockoutGate {
    /// A gate replaying `inputs` with `options`.
    pub fn new(inputs: Vec<PathBuf>, options: Options) -> Self {
        Self { inputs, options }
    }
}

fn replay_error(message: String) -> Refusal {
    Refusal {
        reason: "replay-error",
        message,
    }
}

impl ReloadGate for LockoutGate {
    fn check(&self, candidate: &Config, current: &Config) -> Result<(), Refusal> {
        let build = |c: &Config| Chain::build(c).map_err(|e| replay_error(e.to_string()));
        let (candidate, current) = (build(candidate)?, build(current)?);
        // A runtime of its own cannot start on a thread that runs one: replay on another.
        let report = std::thread::scope(|s| {
            s.spawn(|| replay_blocking(&self.inputs, &candidate, Some(&current), &self.options))
                .join()
        })
        .map_err(|_| replay_error("the replay panicked".into()))?
        .map_err(|e| replay_error(format!("cannot replay: {e}")))?;
        let t = &report.totals;
        if t.lockouts == 0 {
            tracing::info!(
                replayed = t.replayed,
                flipped = t.flipped,
                "--replay-on-reload: no bootstrap identity locked out"
            );
            return Ok(());
        }
        let groups: Vec<String> = report
            .groups
            .iter()
            .filter_map(|g| {
                let who = g.lockout?;
                Some(format!(
                    "{} {} user={} ({who}) resource={}: {}",
                    g.flip, g.rule, g.user, g.resource, g.count
                ))
            })
            .collect();
        Err(Refusal {
            reason: "lockout",
            message: format!(
                "replaying {} reviews, {} flips would lock out a bootstrap identity: {}",
                t.replayed,
                t.lockouts,
                groups.join("; ")
            ),
        })
    }
}
