//! The matrix file as the user writes it: serde types with `deny_unknown_fields` so that a
//! typo is an error with a line and column, never a silently ignored key.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::length::Length;
pub use super::redis_spec::{RedisBenchmarkSpec, RedisSpec};
use super::yaml::Scalar;

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Matrix {
    /// Short name, used in the run directory name and report titles.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    pub servers: IndexMap<String, ServerSpec>,
    #[serde(default = "default_configs")]
    pub configs: IndexMap<String, ConfigSpec>,
    #[serde(default)]
    pub engines: Vec<String>,
    /// Each workload is a one-key map naming its kind: `name: {slap: {...}}`.
    pub workloads: IndexMap<String, WorkloadSpec>,
    #[serde(default = "default_concurrency")]
    pub concurrency: Vec<u32>,
    #[serde(default = "default_iterations")]
    pub iterations: u32,
    /// Load run before each measured iteration and discarded.
    #[serde(default)]
    pub warmup: Option<Length>,
    /// Measured run length: a total statement count (`10000`) or a duration (`30s`).
    pub length: Length,
    #[serde(default)]
    pub exclude: Vec<Selector>,
    #[serde(default)]
    pub include: Vec<Selector>,
    #[serde(default)]
    pub report: ReportSpec,
    /// How the load reaches the server: `host` networking (default, no NAT in the path) or
    /// `bridge` with the port published on 127.0.0.1.
    #[serde(default)]
    pub network: Network,
    /// How long a server may take to answer its first query, e.g. `120s`.
    #[serde(default)]
    pub start_timeout: Option<Length>,
    /// How long an iteration may go without one completed operation before it fails as
    /// stalled (a paused or hung server), e.g. `30s`; default 60 s.
    #[serde(default)]
    pub stall_timeout: Option<Length>,
    /// How iterations are repeated: restarts, order across deployments, adaptive repeats.
    #[serde(default)]
    pub repeat: RepeatSpec,
}

/// Repeats done so that drift does not look like a difference.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RepeatSpec {
    /// A fresh server (new container, empty datadir) for every iteration.
    #[serde(default)]
    pub restart: bool,
    /// `sequential` (all iterations of A, then B), `interleaved` (A B A B ...) or
    /// `shuffled` (each round in a random order drawn from `seed`).
    #[serde(default)]
    pub order: Order,
    /// Seed of the shuffled order (default: drawn at random and recorded in the manifest).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Pause between runs (lets the disk and CPU settle), e.g. `5s`.
    #[serde(default)]
    pub cooldown: Option<Length>,
    /// Adaptive repeats: keep repeating a cell while the coefficient of variation of the
    /// report metric is above this percentage (e.g. `3`), within the limits below.
    #[serde(default)]
    pub until_cv: Option<f64>,
    /// Most iterations per cell with `until_cv` (default 10).
    #[serde(default)]
    pub max_iterations: Option<u32>,
    /// Time budget for the adaptive repeats, e.g. `10m` (default: none).
    #[serde(default)]
    pub max_time: Option<Length>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    #[default]
    Sequential,
    Interleaved,
    Shuffled,
}

fn default_configs() -> IndexMap<String, ConfigSpec> {
    IndexMap::from([("default".to_string(), ConfigSpec::default())])
}
fn default_concurrency() -> Vec<u32> {
    vec![1]
}
fn default_iterations() -> u32 {
    1
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Network {
    #[default]
    Host,
    Bridge,
}

/// Where a server comes from: exactly one of `image`, `build` or `external`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    /// A public image, pulled when missing (e.g. `mariadb:11.4`, `mysql:8.0`).
    #[serde(default)]
    pub image: Option<String>,
    /// A directory under `containers/` with a Dockerfile, built when its content or build
    /// arguments changed: `mariadb-10.11` or `{dir: mariadb, args: {suite: trixie}}`.
    #[serde(default)]
    pub build: Option<BuildSpec>,
    /// A server someone else runs: nothing is started or changed, variables are still read.
    #[serde(default)]
    pub external: Option<ExternalSpec>,
    /// The protocol family; inferred from the image or build name when omitted.
    #[serde(default)]
    pub kind: Option<ServerKind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerKind {
    /// MariaDB or MySQL.
    Mysql,
    /// Redis or Valkey.
    Redis,
}

impl ServerSpec {
    pub fn kind(&self) -> ServerKind {
        if let Some(k) = self.kind {
            return k;
        }
        let name = self
            .image
            .as_deref()
            .or(self.build.as_ref().map(BuildSpec::name))
            .unwrap_or("")
            .to_lowercase();
        if name.contains("redis") || name.contains("valkey") {
            ServerKind::Redis
        } else {
            ServerKind::Mysql
        }
    }
}

/// `build:` as a name, or as a folder with build arguments.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum BuildSpec {
    /// A folder under `containers/`, a name from `containers/builds.yaml` (`mariadb-10.11`),
    /// or, with a `/`, a path relative to the matrix file.
    Name(String),
    /// `{dir: mariadb, args: {suite: trixie}}`: a folder (as above, without the names) and
    /// the values of `ARG`s its Dockerfile declares.
    Dir(BuildDir),
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BuildDir {
    pub dir: String,
    #[serde(default)]
    pub args: IndexMap<String, String>,
}

impl BuildSpec {
    /// The name or folder, which the server family is inferred from.
    pub fn name(&self) -> &str {
        match self {
            BuildSpec::Name(n) => n,
            BuildSpec::Dir(d) => &d.dir,
        }
    }
}

/// A string, or a mapping read as `BuildDir` (so its unknown keys are reported as such).
impl<'de> Deserialize<'de> for BuildSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, IgnoredAny};
        const SHAPE: &str = "a folder under containers/ (e.g. `mariadb-10.11`) or \
                             `{dir: mariadb, args: {suite: trixie}}`";
        // Anything else is consumed and refused after the visitor, where the parser gives the
        // error the value's position.
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Result<BuildSpec, &'static str>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(SHAPE)
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Ok(BuildSpec::Name(v.to_string())))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                a: A,
            ) -> Result<Self::Value, A::Error> {
                BuildDir::deserialize(serde::de::value::MapAccessDeserializer::new(a))
                    .map(|b| Ok(BuildSpec::Dir(b)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Err("a list"))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Err("a boolean"))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Err("a number"))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Err("a number"))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Err("a number"))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Err("empty"))
            }
        }
        d.deserialize_any(V)?
            .map_err(|found| D::Error::custom(format!("must be {SHAPE}, not {found}")))
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalSpec {
    #[serde(default = "default_host")]
    pub host: String,
    pub port: u16,
    #[serde(default = "default_user")]
    pub user: String,
    /// Name of the environment variable that holds the password.
    #[serde(default)]
    pub password_env: Option<String>,
}

fn default_host() -> String {
    "127.0.0.1".into()
}
fn default_user() -> String {
    "root".into()
}

/// A server variant: my.cnf settings, environment, allocator, extra arguments.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigSpec {
    /// my.cnf `[mysqld]` settings; a null value writes a bare flag (`skip_name_resolve`).
    #[serde(default)]
    pub mycnf: IndexMap<String, Option<CnfValue>>,
    #[serde(default)]
    pub env: IndexMap<String, String>,
    /// Preload an allocator into the server: `system`, `tcmalloc` or `jemalloc`.
    #[serde(default)]
    pub allocator: Option<Allocator>,
    /// Extra server command-line arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// redis.conf settings for Redis-family servers (`appendfsync: always`, `save: ""`).
    #[serde(default)]
    pub redis_conf: IndexMap<String, CnfValue>,
}

impl ConfigSpec {
    /// The server's environment from this config: the allocator preload, then `env`.
    pub fn container_env(&self) -> Vec<(String, String)> {
        let preload = self
            .allocator
            .and_then(|a| a.preload())
            .map(|(lib, _)| ("LD_PRELOAD".to_string(), lib.to_string()));
        preload
            .into_iter()
            .chain(self.env.iter().map(|(k, v)| (k.clone(), v.clone())))
            .collect()
    }

    /// True when the config would change a server (and so cannot apply to an external one).
    pub fn changes_server(&self) -> bool {
        !self.mycnf.is_empty()
            || !self.env.is_empty()
            || !self.args.is_empty()
            || !self.redis_conf.is_empty()
            || matches!(self.allocator, Some(a) if a != Allocator::System)
    }
}

/// A my.cnf value as written in YAML: kept as text, booleans as `ON`/`OFF`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct CnfValue(pub String);

impl<'de> Deserialize<'de> for CnfValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Scalar::deserialize(d)? {
            Scalar::Bool(b) => Ok(CnfValue(if b { "ON" } else { "OFF" }.into())),
            Scalar::Other(kind) => Err(D::Error::custom(format!(
                "a config value must be a string, number, boolean or empty, not {kind}"
            ))),
            s => s.text().map(CnfValue).ok_or_else(|| {
                D::Error::custom("a config value must be a string, number, boolean or empty")
            }),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Allocator {
    System,
    Tcmalloc,
    Jemalloc,
}

impl Allocator {
    /// The library to preload (Debian's paths) and the word `version_malloc_library` shows.
    pub fn preload(self) -> Option<(&'static str, &'static str)> {
        match self {
            Allocator::System => None,
            Allocator::Tcmalloc => Some((
                "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",
                "tcmalloc",
            )),
            Allocator::Jemalloc => Some(("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "jemalloc")),
        }
    }
}

/// The workload kinds as a matrix names them (the variants of `WorkloadSpec`).
pub const WORKLOAD_KINDS: [&str; 5] = ["slap", "oltp", "sysbench", "redis", "redis_benchmark"];

/// One workload, tagged by its kind: `slap: {...}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadSpec {
    /// mysqlslap's auto-generated workloads.
    Slap(SlapSpec),
    /// redis-benchmark's tests and memtier's mix, driven by rmatrix's own client.
    Redis(RedisSpec),
    /// The redis-benchmark binary itself.
    RedisBenchmark(RedisBenchmarkSpec),
    /// sysbench 1.0's OLTP tests, driven by rmatrix's own client.
    Oltp(super::oltp::OltpSpec),
    /// The sysbench binary itself (any test or Lua script).
    Sysbench(super::oltp::SysbenchSpec),
}

impl WorkloadSpec {
    pub fn kind(&self) -> &'static str {
        match self {
            WorkloadSpec::Slap(_) => "slap",
            WorkloadSpec::Redis(_) => "redis",
            WorkloadSpec::RedisBenchmark(_) => "redis_benchmark",
            WorkloadSpec::Oltp(_) => "oltp",
            WorkloadSpec::Sysbench(_) => "sysbench",
        }
    }
    /// Whether the storage-engine axis applies (the workload creates its own tables).
    pub fn uses_engine(&self) -> bool {
        matches!(self, WorkloadSpec::Slap(_))
    }
}

/// `{kind: {options}}` with exactly one kind; said in the matrix's words when it is not.
impl<'de> Deserialize<'de> for WorkloadSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = WorkloadSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(
                    f,
                    "one driver with its options, e.g. `{{slap: {{}}}}`; valid drivers: {}",
                    WORKLOAD_KINDS.join(", ")
                )
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Self::Value, A::Error> {
                use serde::de::Error;
                let Some(kind) = a.next_key::<String>()? else {
                    return Err(A::Error::custom(format!(
                        "name one driver with its options, e.g. `{{slap: {{}}}}`; valid \
                         drivers: {}",
                        WORKLOAD_KINDS.join(", ")
                    )));
                };
                let spec = match kind.as_str() {
                    "slap" => WorkloadSpec::Slap(a.next_value()?),
                    "redis" => WorkloadSpec::Redis(a.next_value()?),
                    "redis_benchmark" => WorkloadSpec::RedisBenchmark(a.next_value()?),
                    "oltp" => WorkloadSpec::Oltp(a.next_value()?),
                    "sysbench" => WorkloadSpec::Sysbench(a.next_value()?),
                    other => return Err(A::Error::unknown_variant(other, &WORKLOAD_KINDS)),
                };
                if let Some(second) = a.next_key::<String>()? {
                    return Err(A::Error::custom(format!(
                        "name one driver, not both `{kind}` and `{}`: define two workloads",
                        crate::report::escape::terminal(&second)
                    )));
                }
                Ok(spec)
            }
        }
        d.deserialize_map(V)
    }
}

/// mysqlslap `--auto-generate-sql` options, with mysqlslap's defaults.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SlapSpec {
    #[serde(default)]
    pub load_type: LoadType,
    #[serde(default = "one")]
    pub number_int_cols: u32,
    #[serde(default = "one")]
    pub number_char_cols: u32,
    #[serde(default)]
    pub primary_key: PrimaryKey,
    #[serde(default)]
    pub secondary_indexes: u32,
    #[serde(default = "ten")]
    pub unique_query_number: u32,
    #[serde(default = "ten")]
    pub unique_write_number: u32,
    /// Rows inserted before the load (mysqlslap's `--auto-generate-sql-write-number` - 1).
    #[serde(default = "ninety_nine")]
    pub preload_rows: u32,
    /// `COMMIT` every N statements (autocommit off); 0 keeps autocommit.
    #[serde(default)]
    pub commit: u32,
}

impl Default for SlapSpec {
    fn default() -> Self {
        super::yaml::from_str("{}").expect("invariant: every SlapSpec field has a default")
    }
}

fn one() -> u32 {
    1
}
fn ten() -> u32 {
    10
}
fn ninety_nine() -> u32 {
    99
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadType {
    Write,
    Key,
    Read,
    Update,
    #[default]
    Mixed,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PrimaryKey {
    #[default]
    None,
    Guid,
    Autoincrement,
}

/// A rule over dimension values, e.g. `{engine: MyISAM, workload: [read, key]}`.
pub type Selector = IndexMap<String, OneOrMany>;

/// A YAML scalar or list of scalars, kept as strings for matching.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct OneOrMany(pub Vec<String>);

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

/// What the summary tables show.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReportSpec {
    #[serde(default = "default_metric")]
    pub metric: String,
    #[serde(default = "default_rows")]
    pub rows: Vec<String>,
    #[serde(default = "default_columns")]
    pub columns: Vec<String>,
    /// Dimension values of the reference cells, e.g. `{config: binlog-off}`.
    #[serde(default)]
    pub baseline: IndexMap<String, String>,
    /// Confidence level of every interval and test in the summary, in percent (default 95).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Draw SVG charts into the run directory's `charts/` and link them from summary.md.
    #[serde(default = "yes")]
    pub charts: bool,
}

fn yes() -> bool {
    true
}

impl ReportSpec {
    /// The checked confidence level (`check_report` refuses a bad one before any run).
    pub fn confidence(&self) -> crate::stats::Confidence {
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
