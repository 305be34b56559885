//! Run lengths: a statement count (`10000`) or a duration (`30s`, `2m`, `500ms`).

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    Queries(u64),
    Time(Duration),
}

impl Length {
    /// Client `i`'s part of a count split over `n` clients, exactly: the first `total % n`
    /// clients run one more. None for a duration (every client runs until the deadline).
    pub(crate) fn share(self, i: usize, n: usize) -> Option<u64> {
        let (i, n) = (i as u64, n.max(1) as u64);
        match self {
            Length::Queries(total) => Some(total / n + u64::from(i < total % n)),
            Length::Time(_) => None,
        }
    }

    pub(crate) fn parse(text: &str) -> Result<Length, String> {
        let t = text.trim();
        if let Ok(n) = t.parse::<u64>() {
            return Ok(Length::Queries(n));
        }
        parse_duration(t).map(Length::Time)
    }

    pub(crate) fn as_duration(&self) -> Option<Duration> {
        match self {
            Length::Time(d) => Some(*d),
            Length::Queries(_) => None,
        }
    }
}

pub(crate) fn parse_duration(t: &str) -> Result<Duration, String> {
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| {
            format!("`{t}` needs a unit: ms, s, m or h (or give a plain query count)")
        })?;
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{t}` is not a number followed by a unit"))?;
    let secs = match unit.trim() {
        "ms" => n / 1000.0,
        "s" | "sec" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        other => {
            return Err(format!(
                "unknown unit `{other}` in `{t}`: use ms, s, m or h"
            ))
        }
    };
    // Longer than a week is a typo, and much longer would overflow the clock arithmetic.
    if !secs.is_finite() || secs > MAX_SECS {
        return Err(format!(
            "`{t}` is longer than {} days: give a duration up to {}h",
            MAX_SECS / 86400.0,
            MAX_SECS / 3600.0
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The longest duration a matrix may ask for (7 days).
pub(crate) const MAX_SECS: f64 = 7.0 * 86400.0;

impl fmt::Display for Length {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Length::Queries(n) => write!(f, "{n} queries"),
            Length::Time(d) => write!(f, "{}s", d.as_secs_f64()),
        }
    }
}

impl<'de> Deserialize<'de> for Length {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use super::yaml::Scalar;
        use serde::de::Error;
        match Scalar::deserialize(d)? {
            Scalar::Int(n) => u64::try_from(n)
                .map(Length::Queries)
                .map_err(|_| D::Error::custom("a query count must be a whole number >= 0")),
            Scalar::Float(f) => Err(D::Error::custom(format!(
                "`{f}` is not a whole query count: give a count (10000) or a duration (30s, 2m)"
            ))),
            Scalar::Str(s) => Length::parse(&s).map_err(D::Error::custom),
            _ => Err(D::Error::custom(
                "expected a query count (10000) or a duration (30s, 2m)",
            )),
        }
    }
}

/// The schema of what `Deserialize` reads: a count, or a number with one of
/// `parse_duration`'s units.
impl schemars::JsonSchema for Length {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Length".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A statement count (`10000`) or a duration with a unit: ms, s, m \
                            or h (`500ms`, `30s`, `2m`).",
            "anyOf": [
                {"type": "integer", "minimum": 0},
                {"type": "string", "pattern": DURATION_PATTERN}
            ]
        })
    }
}

/// A number and a unit `parse_duration` knows, as a JSON Schema pattern.
pub(crate) const DURATION_PATTERN: &str = r"^\s*[0-9.]+\s*(ms|s|sec|m|min|h)\s*$";

impl Serialize for Length {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Length::Queries(n) => s.serialize_u64(*n),
            Length::Time(d) => s.serialize_str(&format!("{}ms", d.as_millis())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_counts_and_durations() {
        assert_eq!(Length::parse("10000"), Ok(Length::Queries(10000)));
        assert_eq!(
            Length::parse("30s"),
            Ok(Length::Time(Duration::from_secs(30)))
        );
        assert_eq!(
            Length::parse("2m"),
            Ok(Length::Time(Duration::from_secs(120)))
        );
        assert_eq!(
            Length::parse("250ms"),
            Ok(Length::Time(Duration::from_millis(250)))
        );
        assert!(Length::parse("3 weeks")
            .unwrap_err()
            .contains("unknown unit"));
        for huge in [
            "99999999999999999999999h",
            "1000000000000000h",
            "169h",
            "1e400s",
        ] {
            assert!(Length::parse(huge).is_err(), "{huge}");
        }
        assert_eq!(
            Length::parse("168h"),
            Ok(Length::Time(Duration::from_secs(7 * 86400)))
        );
    }

    #[test]
    fn shares_add_up_to_the_total() {
        let shares: Vec<u64> = (0..3)
            .filter_map(|i| Length::Queries(10).share(i, 3))
            .collect();
        assert_eq!(shares, [4, 3, 3]);
        assert_eq!(
            Length::Time(std::time::Duration::from_secs(1)).share(0, 3),
            None
        );
    }
}
