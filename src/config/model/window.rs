//! Weekly windows in an IANA time zone (a window whose end is before its start crosses
//! midnight and belongs to the day it starts on) and dated freezes: the time values of the
//! deletion guard's settings. The gate that applies them is `authorizer::deletion_guard::windows`.

use chrono::{DateTime, Datelike, Duration, NaiveTime, Utc, Weekday};
use chrono_tz::Tz;

/// A weekly window.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Weekly {
    /// The days it starts on.
    pub days: Vec<Weekday>,
    /// Local start time (inclusive).
    pub start: NaiveTime,
    /// Local end time (exclusive); before `start` means the next day.
    pub end: NaiveTime,
    /// Its time zone.
    pub(crate) time_zone: Tz,
}

impl Weekly {
    /// Whether `t` falls inside the window.
    pub fn contains(&self, t: DateTime<Utc>) -> bool {
        let local = t.with_timezone(&self.time_zone);
        let (day, time) = (local.weekday(), local.time());
        if self.start < self.end {
            self.days.contains(&day) && time >= self.start && time < self.end
        } else {
            let yesterday = (local - Duration::days(1)).weekday();
            (self.days.contains(&day) && time >= self.start)
                || (self.days.contains(&yesterday) && time < self.end)
        }
    }
}

/// A dated freeze: `[start, end)` blocks everything above LOW.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Freeze {
    /// Start (inclusive).
    pub start: DateTime<Utc>,
    /// End (exclusive).
    pub end: DateTime<Utc>,
    /// Why (shown in the reason).
    pub reason: String,
}

impl Freeze {
    /// Whether `t` is inside.
    pub fn contains(&self, t: DateTime<Utc>) -> bool {
        t >= self.start && t < self.end
    }
}

/// Parses a day name (`Mon`, `monday`).
pub(crate) fn parse_day(s: &str) -> Option<Weekday> {
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn crossing_midnight_belongs_to_its_start_day() {
        let w = Weekly {
            days: vec![Weekday::Fri],
            start: NaiveTime::from_hms_opt(22, 0, 0).unwrap(),
            end: NaiveTime::from_hms_opt(2, 0, 0).unwrap(),
            time_zone: chrono_tz::Europe::Berlin,
        };
        // 2026-12-04 is a Friday; Berlin is UTC+1 in December.
        assert!(w.contains(at("2026-12-04T21:30:00Z")));
        assert!(w.contains(at("2026-12-05T00:30:00Z")));
        assert!(!w.contains(at("2026-12-05T01:00:00Z")));
        assert!(!w.contains(at("2026-12-04T20:59:00Z")));
        assert!(!w.contains(at("2026-12-04T00:30:00Z")));
    }
}
