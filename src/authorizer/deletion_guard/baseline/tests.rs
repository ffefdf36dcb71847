//! The model alone: decay, the sliding window, the prior, and a replayed synthetic week of
//! normal traffic (false positives) with bursts injected (detections). The week's figures are
//! printed by `cargo test --locked --lib unusual_week -- --nocapture`.

use super::*;
use crate::config::model::unusual::UnusualAction;
use chrono::Duration as Span;
use std::collections::BTreeMap;
use std::time::Duration;

fn t0() -> DateTime<Utc> {
    // A Monday.
    DateTime::parse_from_rfc3339("2026-11-30T00:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn settings() -> UnusualDeletions {
    UnusualDeletions::with_action(UnusualAction::Deny)
}

#[test]
fn the_baseline_halves_each_half_life_without_deletions() {
    let s = settings();
    let b = Baseline::new(&s, t0());
    assert!((b.rate_per_hour(&s, t0()) - 6.0).abs() < 1e-9);
    let one = b.rate_per_hour(&s, t0() + Span::hours(24));
    assert!((one - 3.0).abs() < 1e-9, "{one}");
    let two = b.rate_per_hour(&s, t0() + Span::hours(48));
    assert!((two - 1.5).abs() < 1e-9, "{two}");
}

#[test]
fn a_steady_rate_becomes_the_baseline() {
    let s = settings();
    let mut b = Baseline::new(&s, t0());
    // 30 an hour, evenly, for four days.
    let mut now = t0();
    for _ in 0..(30 * 24 * 4) {
        now += Span::seconds(120);
        let (after, j) = b.record(&s, now);
        assert!(!j.burst, "{j:?} at {now}");
        b = after;
    }
    let rate = b.rate_per_hour(&s, now);
    assert!((rate - 30.0).abs() < 2.0, "{rate}");
}

#[test]
fn the_window_counts_the_last_window_across_its_fixed_halves() {
    let s = settings();
    let mut b = Baseline::new(&s, t0());
    for i in 0..4 {
        b = b.record(&s, t0() + Span::seconds(i)).0;
    }
    // Half-way through the next fixed window, half of the four still count, plus this one.
    let j = b.judge(&s, t0() + Span::minutes(15));
    assert!((j.in_window - 3.0).abs() < 1e-9, "{j:?}");
    // Two windows on, nothing does.
    let j = b.judge(&s, t0() + Span::minutes(25));
    assert!((j.in_window - 1.0).abs() < 1e-9, "{j:?}");
}

/// The position (from 1) of the first burst among requests a second apart.
fn first_burst(s: &UnusualDeletions) -> usize {
    let mut b = Baseline::new(s, t0());
    for i in 0..10_000 {
        let (after, j) = b.record(s, t0() + Span::seconds(i));
        if j.burst {
            return usize::try_from(i).unwrap() + 1;
        }
        b = after;
    }
    panic!("no burst in 10,000 requests a second apart");
}

#[test]
fn a_new_principal_starts_from_the_prior() {
    // 10 × 6/h over 10 minutes: 10 in a window pass (the baseline has learnt them by then,
    // 6.29/h, so the threshold is 10.5), the 11th is a burst.
    assert_eq!(first_burst(&settings()), 11);
    // 10 × 60/h: 100, plus the 4 the hundred taught the baseline.
    let mut s = settings();
    s.prior_per_hour = 60;
    s.floor_per_hour = 1;
    assert_eq!(first_burst(&s), 105);
    // Below the floor, the floor rules: a prior of 0 starts at 6/h too.
    let mut s = settings();
    s.prior_per_hour = 0;
    assert_eq!(first_burst(&s), 11);
}

#[test]
fn a_burst_is_counted_in_the_window_but_never_learnt() {
    let s = settings();
    let mut b = Baseline::new(&s, t0());
    for i in 0..200 {
        b = b.record(&s, t0() + Span::seconds(i)).0;
    }
    // The ten before the threshold were learnt, the 190 after it were not.
    let rate = b.rate_per_hour(&s, t0() + Span::seconds(200));
    let expected = 6.0 + 10.0 / (24.0 / std::f64::consts::LN_2);
    // (less what the 200 seconds decayed)
    assert!((rate - expected).abs() < 0.02, "{rate} vs {expected}");
    // Still refused while the loop runs.
    assert!(b.judge(&s, t0() + Span::seconds(300)).burst);
}

#[test]
fn a_clock_behind_the_state_moves_nothing() {
    let s = settings();
    let b = Baseline::new(&s, t0()).record(&s, t0()).0;
    let j = b.judge(&s, t0() - Span::hours(3));
    assert!((j.in_window - 2.0).abs() < 1e-9, "{j:?}");
    assert!((j.baseline_per_hour - b.rate_per_hour(&s, t0())).abs() < 1e-9);
}

// === a synthetic week ===

/// splitmix64: a fixed seed gives the same week on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Poisson arrivals at `per_hour` over `[from, to)`.
    fn arrivals(
        &mut self,
        per_hour: f64,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Vec<DateTime<Utc>> {
        let mut out = Vec::new();
        let mut at = from;
        loop {
            let gap = -(1.0 - self.unit()).ln() / per_hour * 3_600_000.0;
            at += Span::milliseconds(gap as i64);
            if at >= to {
                return out;
            }
            out.push(at);
        }
    }
}

/// One deletion of the replay: who, when, and the injected burst it belongs to.
#[derive(Debug, Clone)]
struct Event {
    at: DateTime<Utc>,
    who: &'static str,
    burst: Option<&'static str>,
}

/// A week of normal traffic: a CI deployer (20/h on working hours, 2/h otherwise), an hourly
/// sweeper (8 deletions within a minute, every hour), five people (a few deletions a day, now
/// and then five at once) and a nightly garbage collector (40 within five minutes at 02:00).
fn normal_week(rng: &mut Rng) -> Vec<Event> {
    let mut out = Vec::new();
    let mut push = |at, who| {
        out.push(Event {
            at,
            who,
            burst: None,
        })
    };
    for day in 0..7 {
        let d = t0() + Span::days(day);
        let workday = day < 5;
        for hour in 0..24 {
            let h = d + Span::hours(hour);
            let busy = workday && (8..20).contains(&hour);
            for at in rng.arrivals(if busy { 20.0 } else { 2.0 }, h, h + Span::hours(1)) {
                push(at, "ci-deployer");
            }
            let start = h + Span::seconds((rng.unit() * 600.0) as i64);
            for i in 0..8 {
                push(start + Span::seconds(i * 5), "hourly-sweeper");
            }
        }
        for person in ["ana", "ben", "chen", "dara", "eli"] {
            let n = if workday { 4 } else { 1 };
            for _ in 0..n {
                let at = d + Span::hours(9) + Span::seconds((rng.unit() * 9.0 * 3600.0) as i64);
                // One time in five, a clean-up of five at once.
                let k = if rng.unit() < 0.2 { 5 } else { 1 };
                for i in 0..k {
                    push(at + Span::seconds(i * 3), person);
                }
            }
        }
        let gc = d + Span::hours(2);
        for i in 0..40 {
            push(gc + Span::milliseconds(i * 7_500), "nightly-gc");
        }
    }
    out
}

/// Bursts on Thursday: the CI token leaked (300 deletions in five minutes), a person's script
/// in a loop (60 in a minute), the CI deployer at ten times its daytime rate for half an hour,
/// the sweeper looping (100 in two minutes), and a principal never seen before deleting 50 in a
/// minute.
fn bursts() -> Vec<Event> {
    let thu = t0() + Span::days(3);
    let mut out = Vec::new();
    let mut burst =
        |name: &'static str, who: &'static str, start: DateTime<Utc>, n: i64, every_ms: i64| {
            for i in 0..n {
                out.push(Event {
                    at: start + Span::milliseconds(i * every_ms),
                    who,
                    burst: Some(name),
                });
            }
        };
    burst(
        "leaked CI token",
        "ci-deployer",
        thu + Span::hours(14),
        300,
        1_000,
    );
    burst("script in a loop", "ben", thu + Span::hours(11), 60, 1_000);
    burst(
        "deployer at 10x for 30m",
        "ci-deployer",
        thu + Span::hours(16),
        100,
        18_000,
    );
    burst(
        "sweeper looping",
        "hourly-sweeper",
        thu + Span::hours(3) + Span::minutes(30),
        100,
        1_200,
    );
    burst(
        "new principal",
        "stranger",
        thu + Span::hours(12),
        50,
        1_200,
    );
    out
}

/// Replays `events` (sorted here) through one baseline per principal; the judgements in order.
fn replay(s: &UnusualDeletions, mut events: Vec<Event>) -> Vec<(Event, Judgement)> {
    events.sort_by_key(|e| e.at);
    let mut baselines: BTreeMap<&str, Baseline> = BTreeMap::new();
    events
        .into_iter()
        .map(|e| {
            let b = *baselines
                .entry(e.who)
                .or_insert_with(|| Baseline::new(s, e.at));
            let (after, j) = b.record(s, e.at);
            baselines.insert(e.who, after);
            (e, j)
        })
        .collect()
}

/// The default settings on a replayed week: no false positive but the nightly job's (a batch
/// of 40 against a floor of 6/h, flagged each night: such a job is a `trusted` principal or
/// needs a higher floor), and every injected burst detected within its first dozen requests.
#[test]
fn unusual_week_of_synthetic_traffic() {
    let s = settings();
    assert_eq!(
        (s.window, s.half_life),
        (Duration::from_secs(600), Duration::from_secs(86_400))
    );
    let mut rng = Rng(0x5eed_2026);
    let week = normal_week(&mut rng);
    let judged = replay(&s, week.clone());
    let mut per: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (e, j) in &judged {
        let row = per.entry(e.who).or_default();
        row.0 += 1;
        row.1 += usize::from(j.burst);
    }
    println!(
        "normal week: {} deletions (window 10m, halfLife 24h, prior 6/h, floor 6/h, factor 10)",
        judged.len()
    );
    println!("{:<16} {:>9} {:>8}", "principal", "deletions", "flagged");
    for (who, (n, flagged)) in &per {
        println!("{who:<16} {n:>9} {flagged:>8}");
    }
    for who in [
        "ci-deployer",
        "hourly-sweeper",
        "ana",
        "ben",
        "chen",
        "dara",
        "eli",
    ] {
        assert_eq!(per[who].1, 0, "{who} is normal traffic");
    }
    // The nightly batch: 40 at once against the floor, every night (30 of 40 flagged).
    assert_eq!(per["nightly-gc"], (280, 210));

    let mut all = week;
    all.extend(bursts());
    let judged = replay(&s, all);
    println!("with bursts injected:");
    println!(
        "{:<26} {:>6} {:>8} {:>14}",
        "burst", "size", "flagged", "first flagged"
    );
    let mut found: BTreeMap<&str, (usize, usize, Option<usize>)> = BTreeMap::new();
    for (e, j) in &judged {
        let Some(name) = e.burst else { continue };
        let row = found.entry(name).or_default();
        row.0 += 1;
        if j.burst {
            row.1 += 1;
            row.2.get_or_insert(row.0);
        }
    }
    for (name, (n, flagged, first)) in &found {
        println!(
            "{name:<26} {n:>6} {flagged:>8} {:>14}",
            first.map_or("-".into(), |f| f.to_string())
        );
    }
    // Normal requests caught in a burst of the same principal are its collateral, not false
    // positives: the week's own are counted above.
    let collateral = judged
        .iter()
        .filter(|(e, j)| e.burst.is_none() && j.burst && e.who != "nightly-gc")
        .count();
    println!("normal deletions refused during a burst of the same principal: {collateral}");
    assert_eq!(found.len(), 5);
    for (name, (_, flagged, first)) in &found {
        assert!(*flagged > 0, "{name} was not detected");
        assert!(
            first.is_some_and(|f| f <= 40),
            "{name} detected late: {first:?}"
        );
    }
}
