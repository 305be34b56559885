//! The matrix file as the user writes it: serde types with `deny_unknown_fields` so that a
//! typo is an error with a line and column, never a silently ignored key.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::schema::fields;
use crate::input::length::{AnyDuration, PositiveDuration, RunLength, WarmupLength};
use crate::input::yaml::Scalar;
use crate::input::Length;
pub(crate) use crate::servers::spec::*;
pub(crate) use crate::workloads::{WorkloadSpec, WORKLOAD_KINDS};

/// A benchmark matrix: servers x configs x engines x workloads x concurrency levels, how each
/// cell is measured and how the results are reported (docs/matrix.md).
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Matrix {
    /// Short name, used in the run directory name and report titles.
    #[serde(default)]
    #[schemars(transform = fields::matrix_name)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    #[schemars(transform = fields::description)]
    pub(crate) description: Option<String>,
    /// Values the text refers to as `${name}`, substituted before it is read
    /// (`input::params`); kept as declared in a run's copy, which refers to none.
    #[serde(default)]
    #[schemars(transform = fields::parameter_names)]
    pub(crate) params: IndexMap<String, crate::input::params::ParamSpec>,
    #[schemars(transform = fields::axis_names)]
    pub(crate) servers: IndexMap<String, ServerSpec>,
    #[serde(default = "default_configs")]
    #[schemars(transform = fields::axis_names)]
    pub(crate) configs: IndexMap<String, ConfigSpec>,
    #[serde(default)]
    #[schemars(transform = fields::engines)]
    pub(crate) engines: Vec<String>,
    /// Each workload is a one-key map naming its kind: `name: {slap: {...}}`.
    #[schemars(transform = fields::axis_names)]
    pub(crate) workloads: IndexMap<String, WorkloadSpec>,
    /// Client connections: a list of levels, or geometric steps `{from: 1, factor: 2, to: 512}`.
    #[serde(
        default = "default_concurrency",
        deserialize_with = "super::pacing::levels"
    )]
    #[schemars(with = "super::pacing::ConcurrencyLevels")]
    pub(crate) concurrency: Vec<u32>,
    /// How load is offered: closed loop (default) or open loop at target rates, the rate's
    /// shape over time, and where a sweep of rising levels stops.
    #[serde(default)]
    pub(crate) load: super::pacing::LoadSpec,
    #[serde(default = "default_iterations")]
    #[schemars(range(min = 1, max = MAX_ITERATIONS))]
    pub(crate) iterations: u32,
    /// Load run before each measured iteration and discarded.
    #[serde(default)]
    #[schemars(with = "Option<WarmupLength>")]
    pub warmup: Option<Length>,
    /// Measured run length: a total statement count (`10000`) or a duration (`30s`).
    /// Required unless every workload runs whole (sql-bench's suite), which refuses one.
    #[serde(default)]
    #[schemars(with = "Option<RunLength>")]
    pub length: Option<Length>,
    #[serde(default)]
    #[schemars(transform = fields::rules)]
    pub(crate) exclude: Vec<Selector>,
    #[serde(default)]
    #[schemars(transform = fields::rules)]
    pub(crate) include: Vec<Selector>,
    #[serde(default)]
    pub(crate) report: ReportSpec,
    /// Host CPUs the load runs on (its client threads and the peer tools it starts), as
    /// a server's `cpuset`, e.g. `"1"` with the server's `cpuset: "1"`: each round trip
    /// then wakes a thread on the CPU it ran on (docs/matrix.md#client-cpus).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) client_cpuset: Option<String>,
    /// How the load reaches the server: `host` networking (default, no NAT in the path) or
    /// `bridge` with the port published on 127.0.0.1.
    #[serde(default)]
    pub(crate) network: Network,
    /// How long a server may take to answer its first query, e.g. `120s`.
    #[serde(default)]
    #[schemars(with = "Option<PositiveDuration>")]
    pub(crate) start_timeout: Option<Length>,
    /// How long an iteration may go without one completed operation before it fails as
    /// stalled (a paused or hung server), e.g. `30s`; default 60 s.
    #[serde(default)]
    #[schemars(with = "Option<PositiveDuration>")]
    pub(crate) stall_timeout: Option<Length>,
    /// `profile: {cpu: 99}`: sample the server's stacks 99 times a second during each
    /// measured phase (`perf record -e cpu-clock -g`), a flame graph per cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) profile: Option<ProfileSpec>,
    /// `counted: callgrind`: run each server under callgrind and count the instructions it
    /// executes in each measured phase (`srv_instr_per_op`), the same on every run of a build.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) counted: Option<Counted>,
    /// `datasets: {reuse: true}`: keep the tables a deployment's server prepared in a
    /// Docker volume, and start each later server of the same image, tables and on-disk
    /// settings on a copy of it (`servers::dataset`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) datasets: Option<DataSetsSpec>,
    /// How iterations are repeated: restarts, order across deployments, adaptive repeats.
    #[serde(default)]
    pub(crate) repeat: RepeatSpec,
}

/// Repeats done so that drift does not look like a difference.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RepeatSpec {
    /// A fresh server (new container, empty datadir) for every iteration.
    #[serde(default)]
    pub(crate) restart: bool,
    /// `sequential` (all iterations of A, then B), `interleaved` (A B A B ...) or
    /// `shuffled` (each round in a random order drawn from `seed`).
    #[serde(default)]
    pub(crate) order: Order,
    /// Seed of the shuffled order (default: drawn at random and recorded in the manifest).
    #[serde(default)]
    pub(crate) seed: Option<u64>,
    /// Duet rounds: the matrix's two servers (each with its own `cpuset`, disjoint) run at
    /// the same time, and each cell is measured on both at once, every iteration; their
    /// clients run on their server's CPUs. See docs/ab.md.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) duet: bool,
    /// Pause between runs (lets the disk and CPU settle), e.g. `5s`.
    #[serde(default)]
    #[schemars(with = "Option<AnyDuration>")]
    pub(crate) cooldown: Option<Length>,
    /// Adaptive repeats: keep repeating a cell while the coefficient of variation of the
    /// report metric is above this percentage (e.g. `3`), within the limits below.
    #[serde(default)]
    #[schemars(transform = fields::above_zero)]
    pub(crate) until_cv: Option<f64>,
    /// Adaptive repeats: keep repeating a cell while its change against `report.baseline`
    /// (the summary's, paired over shared rounds) has an interval reaching more than this
    /// many percentage points from its estimate (e.g. `10` for ±10 points), and its
    /// baseline cell with it, within the limits below.
    #[serde(default)]
    #[schemars(transform = fields::above_zero)]
    pub(crate) until_interval: Option<f64>,
    /// Most iterations per cell with `until_cv` or `until_interval` (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_ITERATIONS))]
    pub(crate) max_iterations: Option<u32>,
    /// Time budget for the adaptive repeats, e.g. `10m` (default: none).
    #[serde(default)]
    #[schemars(with = "Option<AnyDuration>")]
    pub(crate) max_time: Option<Length>,
}

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Order {
    #[default]
    Sequential,
    Interleaved,
    Shuffled,
}

/// Most iterations per cell, given or adaptive.
pub(crate) const MAX_ITERATIONS: u32 = 10_000;

fn default_configs() -> IndexMap<String, ConfigSpec> {
    IndexMap::from([("default".to_string(), ConfigSpec::default())])
}
fn default_concurrency() -> Vec<u32> {
    vec![1]
}
fn default_iterations() -> u32 {
    1
}

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Network {
    #[default]
    Host,
    Bridge,
}

/// A rule over dimension values, e.g. `{engine: MyISAM, workload: [read, key]}`.
pub(crate) type Selector = IndexMap<String, OneOrMany>;

/// A YAML scalar or list of scalars, kept as strings for matching.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct OneOrMany(pub Vec<String>);

/// What `Deserialize` reads: one scalar or a list of them.
impl schemars::JsonSchema for OneOrMany {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "OneOrMany".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let scalar = serde_json::json!({"type": ["string", "number", "boolean"]});
        schemars::json_schema!({
            "description": "A value or a list of values.",
            "anyOf": [scalar, {"type": "array", "items": scalar}]
        })
    }
}

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a value or a list of values")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<OneOrMany, A::Error> {
                let mut out = Vec::new();
                while let Some(s) = a.next_element::<Scalar>()? {
                    out.push(
                        s.text().ok_or_else(|| {
                            A::Error::custom("expected a value or a list of values")
                        })?,
                    );
                }
                Ok(OneOrMany(out))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, _: A) -> Result<OneOrMany, A::Error> {
                Err(A::Error::custom(
                    "expected a value or a list of values, not a mapping",
                ))
            }
            fn visit_bool<E>(self, v: bool) -> Result<OneOrMany, E> {
                Ok(OneOrMany(vec![v.to_string()]))
            }
            fn visit_i64<E>(self, v: i64) -> Result<OneOrMany, E> {
                Ok(OneOrMany(vec![v.to_string()]))
            }
            fn visit_u64<E>(self, v: u64) -> Result<OneOrMany, E> {
                Ok(OneOrMany(vec![v.to_string()]))
            }
            fn visit_f64<E>(self, v: f64) -> Result<OneOrMany, E> {
                Ok(OneOrMany(vec![format!("{v:?}")]))
            }
            fn visit_str<E>(self, v: &str) -> Result<OneOrMany, E> {
                Ok(OneOrMany(vec![v.to_string()]))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<OneOrMany, E> {
                Err(E::custom(
                    "expected a value or a list of values, not nothing",
                ))
            }
        }
        d.deserialize_any(V)
    }
}

/// `report.metric`: one of the metrics a run records.
fn metric_names(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "description": "The metric the summary's tables show (default qps).",
        "type": "string",
        "enum": crate::model::metric::Metric::names()
    })
}

/// What the summary tables show.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReportSpec {
    #[serde(default = "default_metric")]
    #[schemars(schema_with = "metric_names")]
    pub(crate) metric: String,
    #[serde(default = "default_rows")]
    #[schemars(transform = fields::dimensions)]
    pub(crate) rows: Vec<String>,
    #[serde(default = "default_columns")]
    #[schemars(transform = fields::dimensions)]
    pub(crate) columns: Vec<String>,
    /// Dimension values of the reference cells, e.g. `{config: binlog-off}`.
    #[serde(default)]
    #[schemars(transform = fields::baseline)]
    pub(crate) baseline: IndexMap<String, String>,
    /// Confidence level of every interval and test in the summary, in percent (default 95).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = fields::confidence)]
    pub(crate) confidence: Option<f64>,
    /// Draw SVG charts into the run directory's `charts/` and link them from summary.md.
    #[serde(default = "yes")]
    pub(crate) charts: bool,
    /// Apdex T: one duration for every workload (`2ms`), or one per workload name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) apdex_t: Option<ApdexT>,
    /// Seed 003's load-test table: each curve over the concurrency levels, its knee and the
    /// maximum sustainable load under stress limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) load_curve: Option<LoadCurveSpec>,
    /// A stability check in summary.md: each iteration's throughput and p95 in its first
    /// third against its last third (from samples.csv).
    #[serde(default)]
    pub(crate) drift: bool,
    /// Server counters (server_seconds.csv) the per-second charts draw under the client's
    /// throughput and latency, one panel each (at most 4), e.g. `[Innodb_data_fsyncs,
    /// Threads_running]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = fields::timeline_counters)]
    pub(crate) timeline_counters: Vec<String>,
}

/// `profile:`: how the server is profiled.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProfileSpec {
    /// Samples per second of each of the server's threads on a CPU (perf's `-F`).
    #[schemars(range(min = *PROFILE_HZ.start(), max = *PROFILE_HZ.end()))]
    pub(crate) cpu: u32,
}

/// `counted:`: how the server's instructions are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Counted {
    /// valgrind's callgrind, on any machine (no hardware counters needed); the server runs
    /// tens of times slower while a phase is counted.
    Callgrind,
    /// The CPU's own instruction counter (`perf stat -e instructions:u`), at full speed:
    /// only where the machine has one (bare metal, most whole-host cloud machines).
    Perf,
}

/// `datasets:`: whether prepared tables are kept across servers, and how a copy is checked.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DataSetsSpec {
    pub(crate) reuse: bool,
    /// `checksum` (default: every table's checksum against the seal's) or `seal` (the
    /// seal's key and tables only: no full read of a large set).
    #[serde(default)]
    pub(crate) verify: crate::servers::dataset::Verify,
}

/// Profiling rates a matrix may ask for: perf's own default is 4000 Hz, which costs the
/// server several percent; 99 Hz is what flame-graph studies use.
pub(crate) const PROFILE_HZ: std::ops::RangeInclusive<u32> = 1..=1000;

/// `report.load_curve: {min_gain_pct: 5, p99: 100ms, error_pct: 1}`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LoadCurveSpec {
    /// Past the knee: a step up that gains at most this many percent of throughput while
    /// p99 rises (default 5).
    #[serde(default = "five")]
    #[schemars(range(min = 0))]
    pub(crate) min_gain_pct: f64,
    /// Stress limit on the p99 latency, e.g. `100ms`.
    #[serde(default)]
    #[schemars(with = "Option<PositiveDuration>")]
    pub(crate) p99: Option<Length>,
    /// Stress limit on failed operations, in percent of all.
    #[serde(default)]
    #[schemars(range(min = 0, max = 100))]
    pub(crate) error_pct: Option<f64>,
    /// Measurements of one level the knee and limit rules may ask for, when a step is too
    /// noisy to tell, before the sweep goes on (default 4).
    #[serde(default = "four")]
    #[schemars(range(min = *MEASUREMENTS.start(), max = *MEASUREMENTS.end()))]
    pub(crate) max_measurements: u32,
}

/// What `max_measurements` may be.
pub(crate) const MEASUREMENTS: std::ops::RangeInclusive<u32> = 1..=20;

fn five() -> f64 {
    5.0
}

fn four() -> u32 {
    4
}

impl Default for LoadCurveSpec {
    fn default() -> Self {
        LoadCurveSpec {
            min_gain_pct: five(),
            p99: None,
            error_pct: None,
            max_measurements: four(),
        }
    }
}

impl LoadCurveSpec {
    pub(crate) fn p99_limit_ms(&self) -> Option<f64> {
        self.p99
            .and_then(|l| l.as_duration())
            .map(|d| d.as_secs_f64() * 1000.0)
    }

    /// `p99 <= 100 ms, errors <= 1%`.
    pub(crate) fn limits_text(&self) -> String {
        let mut parts = Vec::new();
        if let Some(p) = self.p99_limit_ms() {
            parts.push(format!("p99 <= {p} ms"));
        }
        if let Some(e) = self.error_pct {
            parts.push(format!("errors <= {e}%"));
        }
        parts.join(", ")
    }
}

/// `apdex_t: 2ms` or `apdex_t: {read: 1ms, write: 5ms}`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum ApdexT {
    All(#[schemars(with = "PositiveDuration")] Length),
    PerWorkload(#[schemars(with = "IndexMap<String, PositiveDuration>")] IndexMap<String, Length>),
}

impl<'de> Deserialize<'de> for ApdexT {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, IgnoredAny};
        const SHAPE: &str = "a duration (`2ms`) or one per workload (`{read: 1ms}`)";
        // What is neither is consumed and refused after the visitor, where the parser gives
        // the error the value's position.
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Result<ApdexT, String>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(SHAPE)
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Length::parse(v).map(ApdexT::All))
            }
            fn visit_u64<E: Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Ok(ApdexT::All(Length::Queries(v))))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                a: A,
            ) -> Result<Self::Value, A::Error> {
                IndexMap::deserialize(serde::de::value::MapAccessDeserializer::new(a))
                    .map(|m| Ok(ApdexT::PerWorkload(m)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Err(format!("must be {SHAPE}, not a list")))
            }
            fn visit_bool<E: Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Err(format!("must be {SHAPE}, not a boolean")))
            }
            fn visit_i64<E: Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Err(format!("must be {SHAPE}, not a negative number")))
            }
            fn visit_f64<E: Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Err(format!("must be {SHAPE}, not a fraction")))
            }
            fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
                Ok(Err(format!("must be {SHAPE}, not empty")))
            }
        }
        d.deserialize_any(V)?.map_err(D::Error::custom)
    }
}

impl ReportSpec {
    /// T of `workload` in ms, where the matrix gives one.
    pub(crate) fn apdex_t_ms(&self, workload: &str) -> Option<f64> {
        let t = match self.apdex_t.as_ref()? {
            ApdexT::All(t) => t,
            ApdexT::PerWorkload(map) => map.get(workload)?,
        };
        t.as_duration().map(|d| d.as_secs_f64() * 1000.0)
    }
}

fn yes() -> bool {
    true
}

impl ReportSpec {
    /// The checked confidence level (`check_report` refuses a bad one before any run).
    pub(crate) fn confidence(&self) -> crate::stats::Confidence {
        self.confidence
            .and_then(|c| crate::stats::Confidence::parse(&c.to_string()))
            .unwrap_or_default()
    }
}

impl Default for ReportSpec {
    fn default() -> Self {
        ReportSpec {
            metric: default_metric(),
            rows: default_rows(),
            columns: default_columns(),
            baseline: IndexMap::new(),
            confidence: None,
            charts: true,
            apdex_t: None,
            load_curve: None,
            drift: false,
            timeline_counters: Vec::new(),
        }
    }
}

fn default_metric() -> String {
    "qps".into()
}
fn default_rows() -> Vec<String> {
    vec!["workload".into()]
}
fn default_columns() -> Vec<String> {
    vec!["config".into()]
}
