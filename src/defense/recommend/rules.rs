//! The rules that turn an object's history and risk into a protection level, as pure functions.
//!
//! For one object:
//!
//! - **restored**: deleted, then created again under the same name within
//!   [`Settings::restore_window`], both by principals the guard looks at (not a controller
//!   healing what it owns): someone had to undo a mistake. Once gives `high`, twice or more
//!   `critical`;
//! - **shared**: written (created, changed, deleted) by [`Settings::many_principals`] or more
//!   distinct principals the guard looks at: `standard`;
//! - **stable and risky**: never deleted over the history, and the guard's risk model scores its
//!   deletion MEDIUM (`standard`), HIGH (`high`) or CRITICAL (`critical`).
//!
//! The level proposed is the highest the rules give. A deletion that was not restored is
//! *routine*: an object deleted as routine gets nothing from its risk alone (protecting it would
//! stand in the way of the work that deletes it), and a namespace with a routine deletion inside
//! gets no namespace-wide level.
//!
//! For one namespace, when nothing inside was deleted as routine: its own object's level, raised
//! to the highest level proposed for an object inside once [`Settings::namespace_min_objects`]
//! objects inside have one.

use super::history::{History, ObjectKey, Op};
use crate::authorizer::deletion_guard::RiskLevel;
use crate::config::model::guard::Level;
use crate::defense::coverage::protection_for;
use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The rules' settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// A creation this soon after a deletion of the same object restores it.
    pub restore_window: TimeDelta,
    /// Distinct writers that make an object shared.
    pub many_principals: usize,
    /// Objects inside a namespace with a proposed level that make the namespace's own.
    pub namespace_min_objects: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            restore_window: TimeDelta::hours(1),
            many_principals: 3,
            namespace_min_objects: 2,
        }
    }
}

/// A deletion undone by a creation of the same object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Restore {
    /// When it was deleted.
    pub deleted_at: DateTime<Utc>,
    /// Who deleted it.
    pub deleted_by: String,
    /// When it was created again.
    pub restored_at: DateTime<Utc>,
    /// Who created it again.
    pub restored_by: String,
}

/// What the history says of one object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Activity {
    /// Its restores, oldest first.
    pub restores: Vec<Restore>,
    /// Deletions by principals the guard looks at.
    pub deletions: u32,
    /// Those not restored within the window (by such a principal).
    pub routine_deletions: u32,
    /// The distinct principals the guard looks at that wrote it.
    pub writers: BTreeSet<String>,
    /// The last write of anyone.
    pub last: Option<Op>,
    /// The API version it was last written at (`""` when unknown).
    pub version: String,
}

/// The guard's risk model on one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Risk {
    /// The deletion's score.
    pub score: u32,
    /// Its level.
    pub level: RiskLevel,
    /// What made it up.
    pub reasons: Vec<String>,
}

/// A level and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    /// The level.
    pub level: Level,
    /// The reasons, one per rule that gave a level, and context.
    pub reasons: Vec<String>,
}

/// Every object's activity in `history`. `ignored(user, groups)` names the principals the
/// guard never looks at (the control plane's controllers, warrant itself): their writes count
/// neither as deletions nor as restores nor as writers, but they are the last write all the
/// same.
pub fn activity(
    history: &History,
    settings: &Settings,
    ignored: impl Fn(&str, &[String]) -> bool,
) -> BTreeMap<ObjectKey, Activity> {
    let mut out: BTreeMap<ObjectKey, Activity> = BTreeMap::new();
    // Per object, the deletion still waiting for its creation.
    let mut open: BTreeMap<&ObjectKey, (DateTime<Utc>, &str)> = BTreeMap::new();
    for w in &history.writes {
        let a = out.entry(w.key.clone()).or_default();
        a.last = Some(w.op);
        if !w.version.is_empty() {
            a.version.clone_from(&w.version);
        }
        let counted = !ignored(&w.user, &w.groups);
        if counted {
            a.writers.insert(w.user.clone());
        }
        match w.op {
            Op::Delete => {
                if let Some(_unrestored) = open.remove(&w.key) {
                    a.routine_deletions += 1;
                }
                if counted {
                    a.deletions += 1;
                    open.insert(&w.key, (w.at, &w.user));
                }
            }
            Op::Create => {
                if let Some((deleted_at, deleted_by)) = open.remove(&w.key) {
                    if counted && w.at - deleted_at <= settings.restore_window {
                        a.restores.push(Restore {
                            deleted_at,
                            deleted_by: deleted_by.to_owned(),
                            restored_at: w.at,
                            restored_by: w.user.clone(),
                        });
                    } else {
                        a.routine_deletions += 1;
                    }
                }
            }
            Op::Update => {}
        }
    }
    for key in open.into_keys() {
        if let Some(a) = out.get_mut(key) {
            a.routine_deletions += 1;
        }
    }
    out
}

fn window(d: TimeDelta) -> String {
    let s = d.num_seconds();
    if s % 3600 == 0 {
        format!("{}h", s / 3600)
    } else if s % 60 == 0 {
        format!("{}m", s / 60)
    } else {
        format!("{s}s")
    }
}

/// The level one object's history and risk give it, if any (see the module's documentation).
pub fn object(
    activity: Option<&Activity>,
    risk: Option<&Risk>,
    settings: &Settings,
) -> Option<Proposal> {
    let empty = Activity::default();
    let a = activity.unwrap_or(&empty);
    let mut level: Option<Level> = None;
    let mut reasons = Vec::new();
    let restored = a.restores.len();
    if restored > 0 {
        let l = if restored >= 2 {
            Level::Critical
        } else {
            Level::High
        };
        level = level.max(Some(l));
        reasons.push(format!(
            "deleted and restored within {}: {restored} {} ({})",
            window(settings.restore_window),
            if restored == 1 { "time" } else { "times" },
            a.restores
                .iter()
                .map(|r| format!(
                    "{} by {}, back by {}",
                    r.deleted_at.to_rfc3339(),
                    r.deleted_by,
                    r.restored_by
                ))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if a.writers.len() >= settings.many_principals {
        level = level.max(Some(Level::Standard));
        reasons.push(format!(
            "written by {} principals: {}",
            a.writers.len(),
            a.writers.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if let Some(r) = risk
        && let Some(l) = protection_for(r.level)
        && a.deletions == 0
    {
        level = level.max(Some(l));
        reasons.push(format!(
            "never deleted in the history, deletion risk {} (score {})",
            r.level.as_str(),
            r.score
        ));
    }
    let level = level?;
    if a.routine_deletions > 0 {
        reasons.push(format!(
            "also deleted {} {} without a restore: protection will ask for those too",
            a.routine_deletions,
            if a.routine_deletions == 1 {
                "time"
            } else {
                "times"
            }
        ));
    }
    Some(Proposal { level, reasons })
}

/// The level of a namespace: `own` (its Namespace object's proposal), `inside` (the levels
/// proposed for objects inside, by name), `routine` (deletions inside not restored).
pub fn namespace(
    own: Option<Proposal>,
    inside: &[(String, Level)],
    routine: u32,
    settings: &Settings,
) -> Option<Proposal> {
    if routine > 0 {
        return None;
    }
    let mut level = own.as_ref().map(|p| p.level);
    let mut reasons = own.map(|p| p.reasons).unwrap_or_default();
    if !inside.is_empty() && inside.len() >= settings.namespace_min_objects {
        level = level.max(inside.iter().map(|(_, l)| *l).max());
        reasons.push(format!(
            "{} objects inside have a proposed level: {}",
            inside.len(),
            inside
                .iter()
                .map(|(n, l)| format!("{n} ({})", l.as_str()))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let level = level?;
    reasons.push("nothing inside deleted without a restore".to_owned());
    Some(Proposal { level, reasons })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::defense::recommend::history::{Log, Write};

    fn at(minute: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_790_000_000 + minute * 60, 0).unwrap()
    }

    fn w(minute: i64, op: Op, name: &str, user: &str) -> Write {
        Write {
            at: at(minute),
            op,
            key: ObjectKey {
                group: String::new(),
                resource: "configmaps".into(),
                namespace: "shop".into(),
                name: name.into(),
            },
            version: "v1".into(),
            user: user.into(),
            groups: Vec::new(),
            log: Log::ApiServer,
        }
    }

    fn of(writes: Vec<Write>) -> BTreeMap<ObjectKey, Activity> {
        let h = History {
            writes,
            ..History::default()
        };
        activity(&h, &Settings::default(), |u, _| u.starts_with("system:"))
    }

    fn risk(level: RiskLevel, score: u32) -> Risk {
        Risk {
            score,
            level,
            reasons: Vec::new(),
        }
    }

    #[test]
    fn a_deletion_undone_within_the_window_is_a_restore_and_a_later_one_is_routine() {
        let a = of(vec![
            w(0, Op::Create, "a", "ana"),
            w(10, Op::Delete, "a", "ben"),
            w(15, Op::Create, "a", "ana"),
            w(20, Op::Delete, "a", "ben"),
            w(200, Op::Create, "a", "ana"),
            w(300, Op::Delete, "a", "ben"),
        ]);
        let a = a.values().next().unwrap();
        assert_eq!(a.restores.len(), 1);
        assert_eq!(a.restores[0].deleted_by, "ben");
        assert_eq!(a.restores[0].restored_at, at(15));
        assert_eq!((a.deletions, a.routine_deletions), (3, 2));
        assert_eq!(a.last, Some(Op::Delete));
    }

    #[test]
    fn a_controller_recreating_what_it_owns_restores_nothing_and_writes_nothing() {
        let a = of(vec![
            w(0, Op::Delete, "a", "ben"),
            w(
                1,
                Op::Create,
                "a",
                "system:serviceaccount:kube-system:statefulset-controller",
            ),
            w(
                2,
                Op::Delete,
                "a",
                "system:serviceaccount:kube-system:generic-garbage-collector",
            ),
        ]);
        let a = a.values().next().unwrap();
        assert!(a.restores.is_empty());
        assert_eq!((a.deletions, a.routine_deletions), (1, 1));
        assert_eq!(a.writers.iter().collect::<Vec<_>>(), ["ben"]);
    }

    #[test]
    fn each_rule_alone_and_the_highest_wins() {
        let s = Settings::default();
        let restored = |n: usize| Activity {
            restores: vec![
                Restore {
                    deleted_at: at(0),
                    deleted_by: "ben".into(),
                    restored_at: at(5),
                    restored_by: "ana".into(),
                };
                n
            ],
            deletions: n as u32,
            ..Activity::default()
        };
        let level = |a: Option<&Activity>, r: Option<&Risk>| object(a, r, &s).map(|p| p.level);
        assert_eq!(level(Some(&restored(1)), None), Some(Level::High));
        assert_eq!(level(Some(&restored(2)), None), Some(Level::Critical));
        let shared = Activity {
            writers: ["a", "b", "c"].map(String::from).into(),
            ..Activity::default()
        };
        assert_eq!(level(Some(&shared), None), Some(Level::Standard));
        let two = Activity {
            writers: ["a", "b"].map(String::from).into(),
            ..Activity::default()
        };
        assert_eq!(level(Some(&two), None), None);
        // Never deleted: the risk model's level.
        assert_eq!(level(None, Some(&risk(RiskLevel::Low, 0))), None);
        assert_eq!(
            level(None, Some(&risk(RiskLevel::Medium, 30))),
            Some(Level::Standard)
        );
        assert_eq!(
            level(Some(&two), Some(&risk(RiskLevel::High, 50))),
            Some(Level::High)
        );
        assert_eq!(
            level(Some(&shared), Some(&risk(RiskLevel::Critical, 80))),
            Some(Level::Critical)
        );
        // Deleted as routine: the risk alone proposes nothing, a restore still does.
        let routine = Activity {
            deletions: 1,
            routine_deletions: 1,
            ..Activity::default()
        };
        assert_eq!(
            level(Some(&routine), Some(&risk(RiskLevel::High, 50))),
            None
        );
        let both = Activity {
            routine_deletions: 1,
            deletions: 2,
            ..restored(1)
        };
        let p = object(Some(&both), Some(&risk(RiskLevel::Critical, 80)), &s).unwrap();
        assert_eq!(p.level, Level::High);
        assert!(
            p.reasons[0].starts_with("deleted and restored within 1h: 1 time ("),
            "{:?}",
            p.reasons
        );
        assert_eq!(
            p.reasons[1],
            "also deleted 1 time without a restore: protection will ask for those too"
        );
    }

    #[test]
    fn a_namespace_takes_its_objects_level_only_without_routine_deletions_inside() {
        let s = Settings::default();
        let inside = [
            ("a".to_owned(), Level::High),
            ("b".to_owned(), Level::Standard),
        ];
        let p = namespace(None, &inside, 0, &s).unwrap();
        assert_eq!(p.level, Level::High);
        assert_eq!(
            p.reasons,
            [
                "2 objects inside have a proposed level: a (high), b (standard)",
                "nothing inside deleted without a restore"
            ]
        );
        assert_eq!(namespace(None, &inside[..1], 0, &s), None);
        assert_eq!(namespace(None, &inside, 1, &s), None);
        let own = Proposal {
            level: Level::Standard,
            reasons: vec!["written by 3 principals: a, b, c".into()],
        };
        let p = namespace(Some(own.clone()), &inside[..1], 0, &s).unwrap();
        assert_eq!(p.level, Level::Standard);
        assert_eq!(namespace(Some(own), &inside, 2, &s), None);
    }
}
