//! The matrix's `load:` block: how load is offered. Closed loop by default (each connection
//! sends its next request when the last one answered); with `rate`, open loop (requests
//! start on a schedule at the target rate, whatever the replies); a `shape` for the rate over
//! time (constant, steps, wave); and `until`, which stops a sweep of rising levels at the knee
//! or at the stress limits. Also the load levels' own syntax: a list, or geometric steps.

use serde::{Deserialize, Serialize};

use crate::input::bounds::MAX_FACTOR;
use crate::input::Length;
use crate::workloads::arrival::{Shape, Spacing};
use crate::workloads::pace::Pace;

/// Most levels a geometric sweep may expand to.
pub(crate) const MAX_LEVELS: usize = 64;
/// Most steps a geometric sweep may take to get there (steps that round to the same level
/// count once as a level).
const MAX_STEPS: usize = 10_000;
/// The highest target rate, in arrivals per second (one pacer thread's reach, and more).
pub(crate) const MAX_RATE: u32 = 10_000_000;
/// The most client connections of one cell.
pub(crate) const MAX_CONCURRENCY: u32 = 10_000;

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LoadSpec {
    /// Open loop: target arrivals per second, one cell per rate (an axis, like concurrency):
    /// a list or geometric steps `{from, factor, to}`.
    #[serde(
        default,
        deserialize_with = "some_levels",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<RateLevels>")]
    pub(crate) rate: Option<Vec<u32>>,
    /// How arrivals are spaced: `poisson` (exponential gaps, the default) or `even`.
    #[serde(default)]
    pub(crate) arrivals: Arrivals,
    /// The rate over time: `constant` (default), `{steps: ...}` or `{wave: ...}`.
    #[serde(default)]
    pub(crate) shape: ShapeSpec,
    /// Stop a sweep: after the `knee`, or at the first level past the stress `limit`
    /// (`report.load_curve` defines both). The swept levels are the rates in open loop,
    /// the concurrency levels otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) until: Option<Until>,
}

impl LoadSpec {
    pub(crate) fn open(&self) -> bool {
        self.rate.is_some()
    }

    /// The pace of a cell at `rate`, its Poisson arrivals drawn from `seed`.
    pub(crate) fn pace(&self, rate: u32, seed: u64) -> Pace {
        let r = f64::from(rate);
        let secs = |l: &Length| l.as_duration().map_or(1.0, |d| d.as_secs_f64());
        let shape = match &self.shape {
            ShapeSpec::Constant => Shape::Constant(r),
            ShapeSpec::Steps(s) => Shape::Steps {
                rates: s.pct.iter().map(|p| r * p / 100.0).collect(),
                hold_s: secs(&s.hold),
            },
            ShapeSpec::Wave(w) => Shape::Wave {
                mean: r,
                amplitude: r * w.amplitude_pct / 100.0,
                period_s: secs(&w.period),
            },
        };
        Pace {
            shape,
            spacing: match self.arrivals {
                Arrivals::Poisson => Spacing::Poisson,
                Arrivals::Even => Spacing::Even,
            },
            seed,
        }
    }
}

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Arrivals {
    #[default]
    Poisson,
    Even,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ShapeSpec {
    #[default]
    Constant,
    /// Each level, in percent of the cell's rate, held for `hold` in turn.
    Steps(Steps),
    /// The cell's rate plus or minus `amplitude_pct` percent, sinusoidal over `period`.
    Wave(Wave),
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Steps {
    #[schemars(transform = super::schema::fields::step_percentages)]
    pub(crate) pct: Vec<f64>,
    #[schemars(with = "crate::input::length::PositiveDuration")]
    pub(crate) hold: Length,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Wave {
    #[schemars(range(min = 0, max = 100))]
    pub(crate) amplitude_pct: f64,
    #[schemars(with = "crate::input::length::PositiveDuration")]
    pub(crate) period: Length,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Until {
    Knee,
    Limit,
}

/// What `levels` reads, for the schema: a list of levels from 1 to `max`, each once, or
/// geometric steps.
fn levels_schema(g: &mut schemars::SchemaGenerator, max: u32) -> schemars::Schema {
    let level = serde_json::json!({"type": "integer", "minimum": 1, "maximum": max});
    schemars::json_schema!({
        "description": "A list of levels, or geometric steps.",
        "anyOf": [
            {
                "description": "The levels themselves, each once, e.g. `[1, 2, 4]`.",
                "type": "array",
                "items": level,
                "uniqueItems": true
            },
            {
                "description": "Geometric steps, e.g. `{from: 1, factor: 2, to: 512}`.",
                "allOf": [g.subschema_for::<Geometric>()]
            }
        ]
    })
}

/// Schema-only stand-ins for the levels `levels` reads: `concurrency` and `load.rate`.
macro_rules! levels_schemas {
    ($( $name:ident: $max:expr; )*) => {$(
        #[allow(dead_code)] // never built: only its schema is
        pub(crate) struct $name;

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
                levels_schema(g, $max)
            }
        }
    )*};
}

levels_schemas! {
    ConcurrencyLevels: MAX_CONCURRENCY;
    RateLevels: MAX_RATE;
}

/// Geometric levels: `from`, then each times `factor`, rounded, up to `to`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Geometric {
    #[schemars(range(min = 1))]
    from: u32,
    #[schemars(transform = super::schema::fields::geometric_factor)]
    factor: f64,
    #[schemars(range(min = 1))]
    to: u32,
}

impl Geometric {
    fn levels(&self) -> Result<Vec<u32>, String> {
        if self.from == 0 {
            return Err("`from` must be at least 1".into());
        }
        if !(self.factor > 1.0 && self.factor <= MAX_FACTOR) {
            return Err(format!(
                "`factor` must be more than 1 and at most {MAX_FACTOR}, not {}",
                self.factor
            ));
        }
        if self.to < self.from {
            return Err(format!(
                "`to` ({}) is below `from` ({})",
                self.to, self.from
            ));
        }
        // Counted before any is made: a factor a hair above 1 would otherwise loop for ages.
        // Steps k = 0..=n, as long as from * factor^k rounds to at most `to`.
        let n = ((f64::from(self.to) + 0.5) / f64::from(self.from)).ln() / self.factor.ln();
        let n = n.floor().max(0.0);
        if n >= MAX_STEPS as f64 {
            return Err(format!(
                "{} to {} by {} is {} steps, more than {MAX_LEVELS} levels: give a larger factor",
                self.from,
                self.to,
                self.factor,
                format_count(n + 1.0)
            ));
        }
        let mut out: Vec<u32> = Vec::new();
        for k in 0..=n as i32 {
            let l = (f64::from(self.from) * self.factor.powi(k)).round();
            let l = l.min(f64::from(self.to)) as u32;
            // Rounding that repeats a level keeps it once.
            if out.last() != Some(&l) {
                out.push(l);
            }
        }
        if out.len() > MAX_LEVELS {
            return Err(format!(
                "{} to {} by {} is {} levels, more than {MAX_LEVELS}: give a larger factor",
                self.from,
                self.to,
                self.factor,
                out.len()
            ));
        }
        Ok(out)
    }
}

/// A level count as a whole number, however large (`1e16` is `10000000000000000`).
fn format_count(n: f64) -> String {
    match n < 1e30 {
        true => format!("{n:.0}"),
        false => "more than 10^30".into(),
    }
}

/// A list of levels, or `{from, factor, to}` expanded to one.
pub(crate) fn levels<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u32>, D::Error> {
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Vec<u32>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of levels, or geometric steps `{from: 1, factor: 2, to: 512}`")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, a: A) -> Result<Vec<u32>, A::Error> {
            Deserialize::deserialize(serde::de::value::SeqAccessDeserializer::new(a))
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, a: A) -> Result<Vec<u32>, A::Error> {
            let g: Geometric =
                Deserialize::deserialize(serde::de::value::MapAccessDeserializer::new(a))?;
            g.levels().map_err(serde::de::Error::custom)
        }
        // A scalar: said here, so that the message points at the value and quotes it.
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Vec<u32>, E> {
            Err(E::custom(format!(
                "give a list of levels (`[1, 2, 4]`) or geometric steps (`{{from: 1, factor: \
                 2, to: 512}}`), not `{}`",
                crate::escape::terminal(v)
            )))
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Vec<u32>, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Vec<u32>, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Vec<u32>, E> {
            self.visit_str(&v.to_string())
        }
        fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Vec<u32>, E> {
            self.visit_str(&v.to_string())
        }
    }
    d.deserialize_any(V)
}

fn some_levels<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<u32>>, D::Error> {
    levels(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo(from: u32, factor: f64, to: u32) -> Result<Vec<u32>, String> {
        Geometric { from, factor, to }.levels()
    }

    #[test]
    fn geometric_levels() {
        assert_eq!(
            geo(1, 2.0, 512).unwrap(),
            [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
        );
        assert_eq!(geo(1000, 2.0, 5000).unwrap(), [1000, 2000, 4000]);
        // Rounding that repeats a level keeps it once.
        assert_eq!(geo(1, 1.5, 5).unwrap(), [1, 2, 3, 5]);
        assert!(geo(0, 2.0, 8).is_err());
        assert!(geo(1, 1.0, 8).unwrap_err().contains("factor"));
        assert!(geo(8, 2.0, 4).unwrap_err().contains("below"));
        assert!(geo(1, 1.01, 1_000_000)
            .unwrap_err()
            .contains("levels, more than 64"));
        // A factor a hair above 1: refused at once, with the count, not looped over.
        let e = geo(1, 1.000_000_000_000_000_2, 100).unwrap_err();
        assert!(e.contains("more than 64") && e.contains("levels"), "{e}");
        assert_eq!(geo(5, 2.0, 5).unwrap(), [5]);
        assert_eq!(geo(3, 2.0, 100).unwrap(), [3, 6, 12, 24, 48, 96]);
        assert_eq!(geo(1, 10.0, 1000).unwrap(), [1, 10, 100, 1000]);
    }

    #[test]
    fn a_cells_pace() {
        let l: LoadSpec = crate::input::yaml::from_str(
            "{rate: {from: 100, factor: 2, to: 400}, arrivals: even, shape: {wave: {amplitude_pct: 50, period: 10s}}, until: knee}",
        )
        .unwrap();
        assert_eq!(l.rate.as_deref(), Some(&[100, 200, 400][..]));
        assert_eq!(
            l.pace(200, 3),
            Pace {
                shape: Shape::Wave {
                    mean: 200.0,
                    amplitude: 100.0,
                    period_s: 10.0
                },
                spacing: Spacing::Even,
                seed: 3
            }
        );
        let s: LoadSpec = crate::input::yaml::from_str(
            "{rate: [50], shape: {steps: {pct: [50, 150], hold: 2s}}}",
        )
        .unwrap();
        assert_eq!(
            s.pace(100, 0).shape,
            Shape::Steps {
                rates: vec![50.0, 150.0],
                hold_s: 2.0
            }
        );
        assert!(!LoadSpec::default().open());
    }
}
