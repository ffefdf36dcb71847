//! Go duration strings (`metav1.Duration`, parsed by Go's `time.ParseDuration`): `3s`, `1m30s`,
//! `500ms`, `1.5h`, `-30s`. Units `ns`, `us`, `µs`, `ms`, `s`, `m`, `h`; a bare `0` is zero.

use std::time::Duration;
use thiserror::Error;

/// Why a string is not a Go duration, worded as Go's `time.ParseDuration` words it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub(crate) enum DurationError {
    /// Not a duration at all (no number, a bad number, out of range).
    #[error("time: invalid duration {input:?}")]
    Invalid {
        /// The string as given.
        input: String,
    },
    /// A number without a unit.
    #[error("time: missing unit in duration {input:?}")]
    MissingUnit {
        /// The string as given.
        input: String,
    },
    /// A unit Go does not know.
    #[error("time: unknown unit {unit:?} in duration {input:?}")]
    UnknownUnit {
        /// The unit as written.
        unit: String,
        /// The string as given.
        input: String,
    },
}

/// A parsed Go duration, signed, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct GoDuration(i128);

impl GoDuration {
    /// Parses a Go duration string.
    pub fn parse(s: &str) -> Result<Self, DurationError> {
        let bad = || DurationError::Invalid {
            input: s.to_owned(),
        };
        let (neg, mut rest) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        if rest == "0" {
            return Ok(Self(0));
        }
        if rest.is_empty() {
            return Err(bad());
        }
        let mut total: f64 = 0.0;
        while !rest.is_empty() {
            let num_len = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            let (num, tail) = rest.split_at(num_len);
            if num.is_empty() || num == "." {
                return Err(bad());
            }
            let value: f64 = num.parse().map_err(|_| bad())?;
            let unit_len = tail
                .find(|c: char| c.is_ascii_digit() || c == '.')
                .unwrap_or(tail.len());
            let (unit, next) = tail.split_at(unit_len);
            let scale = match unit {
                "ns" => 1.0,
                "us" | "µs" | "μs" => 1e3,
                "ms" => 1e6,
                "s" => 1e9,
                "m" => 60e9,
                "h" => 3600e9,
                "" => {
                    return Err(DurationError::MissingUnit {
                        input: s.to_owned(),
                    });
                }
                _ => {
                    return Err(DurationError::UnknownUnit {
                        unit: unit.to_owned(),
                        input: s.to_owned(),
                    });
                }
            };
            total += value * scale;
            rest = next;
        }
        if total > i64::MAX as f64 {
            return Err(bad());
        }
        let nanos = total.round() as i128;
        Ok(Self(if neg { -nanos } else { nanos }))
    }

    /// Whether the duration is above zero.
    pub(crate) fn is_positive(self) -> bool {
        self.0 > 0
    }

    /// The duration when it is not negative.
    pub(crate) fn to_std(self) -> Option<Duration> {
        u64::try_from(self.0).ok().map(Duration::from_nanos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_durations() {
        let ms = |n: u64| Duration::from_millis(n);
        let rows: &[(&str, Duration)] = &[
            ("0", ms(0)),
            ("3s", ms(3000)),
            ("500ms", ms(500)),
            ("1m30s", ms(90_000)),
            ("1.5h", ms(5_400_000)),
            ("100us", Duration::from_micros(100)),
            ("5m", ms(300_000)),
        ];
        for (s, want) in rows {
            assert_eq!(GoDuration::parse(s).unwrap().to_std(), Some(*want), "{s}");
        }
        assert!(!GoDuration::parse("-30s").unwrap().is_positive());
        assert_eq!(GoDuration::parse("-30s").unwrap().to_std(), None);
        for bad in ["", "s", "3", "3x", "1..2s", "-"] {
            assert!(GoDuration::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn errors_read_as_go_words_them() {
        let rows = [
            ("1..2s", "time: invalid duration \"1..2s\""),
            ("3", "time: missing unit in duration \"3\""),
            ("3x", "time: unknown unit \"x\" in duration \"3x\""),
        ];
        for (input, want) in rows {
            assert_eq!(GoDuration::parse(input).unwrap_err().to_string(), want);
        }
    }
}
