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
                {"type": "string", "pattern": duration_pattern(false)}
            ]
        })
    }
}

/// A number and a unit `parse_duration` knows, as a JSON Schema pattern (above zero where
/// `positive`: a digit other than 0). Each unit's number has at most the digits of the
/// longest duration in it (`MAX_SECS`: 168h, 10080m...), so that a typo's extra digits are
/// refused; the exact bound (`169h`) is the parser's.
pub(crate) fn duration_pattern(positive: bool) -> String {
    let units = [
        (0.001, "ms"),
        (1.0, "(?:s|sec)"),
        (60.0, "(?:m|min)"),
        (3600.0, "h"),
    ];
    let alternatives: Vec<String> = units
        .iter()
        .map(|(secs, unit)| {
            let digits = (MAX_SECS / secs).floor().to_string().len();
            format!(r"0*(?:[0-9]{{1,{digits}}}(?:\.[0-9]*)?|\.[0-9]+)\s*{unit}")
        })
        .collect();
    let above_zero = if positive { "(?=[0-9.]*[1-9])" } else { "" };
    format!(r"^\s*{above_zero}(?:{})\s*$", alternatives.join("|"))
}

/// Schema-only stand-ins for `Length` (`#[schemars(with = ...)]`), for the fields whose checks
/// narrow what a `Length` may be there: a time only, above zero, a count within bounds. The
/// longest duration (`MAX_SECS`) is beyond a pattern: the parser refuses it.
macro_rules! length_schemas {
    ($( $(#[$doc:meta])* $name:ident: $description:literal, $count:expr, $positive:literal; )*) => {$(
        $(#[$doc])*
        #[allow(dead_code)] // never built: only its schema is
        pub(crate) struct $name;

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                length_schema($description, $count, $positive)
            }
        }
    )*};
}

length_schemas! {
    /// A time with its unit, zero allowed (`cooldown`, `max_time`).
    AnyDuration: "A duration with a unit: ms, s, m or h (`500ms`, `30s`, `2m`).", None, false;
    /// A time above zero (the timeouts, `apdex_t`, a shape's period).
    PositiveDuration: "A duration above zero with a unit: ms, s, m or h (`500ms`, `30s`).",
        None, true;
    /// The measured phase: a count from 1 or a time above zero.
    RunLength: "A statement count from 1 (`10000`) or a duration above zero with a unit: ms, \
                s, m or h (`30s`, `2m`).", Some(1), true;
    /// The warm-up: a count or a time, zero allowed.
    WarmupLength: "A statement count (`10000`) or a duration with a unit: ms, s, m or h \
                   (`500ms`, `30s`, `2m`).", Some(0), false;
}

/// A duration (above zero when `positive`), or a statement count from `count_from` up to
/// `MAX_QUERIES` where one is allowed.
fn length_schema(description: &str, count_from: Option<u64>, positive: bool) -> schemars::Schema {
    let duration = serde_json::json!({"type": "string", "pattern": duration_pattern(positive)});
    let alternatives = match count_from {
        Some(min) => {
            let max = super::bounds::MAX_QUERIES;
            let count = serde_json::json!({"type": "integer", "minimum": min, "maximum": max});
            vec![count, duration]
        }
        None => vec![duration],
    };
    schemars::json_schema!({"description": description, "anyOf": alternatives})
}

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

    /// The schema's patterns take what `parse_duration` takes, and refuse what it refuses
    /// but for numbers with no more digits than the longest duration's (`169h`).
    #[test]
    fn the_duration_patterns_follow_the_parser() {
        let matches = |pattern: &str, text: &str| {
            let schema = serde_json::json!({"pattern": pattern});
            jsonschema::is_valid(&schema, &serde_json::json!(text))
        };
        let (any, positive) = (duration_pattern(false), duration_pattern(true));
        let fits = [
            "30s",
            " 2 m ",
            "500ms",
            "1.5h",
            ".5s",
            "5.s",
            "168h",
            "10080m",
            "10080min",
            "604800s",
            "604800sec",
            "604800000ms",
            "0s",
            "0.0ms",
            "000168h",
            "0.001s",
        ];
        for t in fits {
            let parsed = parse_duration(t.trim());
            assert!(parsed.is_ok() && matches(&any, t), "{t}");
            assert_eq!(matches(&positive, t), !parsed.unwrap().is_zero(), "{t}");
        }
        let refused = [
            "1000h",
            "100000m",
            "1000000s",
            "1000000000ms",
            "99999999999999999999999h",
            "10",
            "1.2.3s",
            "s",
            "3 weeks",
            "-1s",
            "1e3s",
            "5 h x",
            "",
        ];
        for t in refused {
            assert!(
                parse_duration(t.trim()).is_err() && !matches(&any, t),
                "{t}"
            );
        }
        // Digits enough, a value too large: the parser's to refuse.
        assert!(matches(&any, "169h") && parse_duration("169h").is_err());
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
