//! Workload kinds, one folder each: its matrix spec and checks, what it sends, and its
//! driver (`driver::Driver`). This file is the registry: adding a kind is one line in
//! `kinds!` below.

pub(crate) mod arrival;
pub(crate) mod child;
pub(crate) mod driver;
pub mod oltp;
pub(crate) mod pace;
pub(crate) mod pgbench;
pub(crate) mod phases;
pub(crate) mod redis;
pub(crate) mod redis_benchmark;
pub(crate) mod slap;
pub(crate) mod sql_family;
pub mod sqlbench;
pub(crate) mod stall;
pub mod sysbench;
pub(crate) mod threads;
pub(crate) mod tools;
pub mod tpcc;

use std::time::Duration;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::measure::measurement::Measurement;
use crate::servers::spec::ServerKind;
pub use driver::Iteration;
pub(crate) use driver::{Ctx, Driver, Facts, Problem, SchemaRule};

/// The registry: each kind's variant, its options type (a `Driver`) and its name in a
/// matrix, in the order messages list them.
macro_rules! kinds {
    ($( $(#[$doc:meta])* $variant:ident($spec:ty) = $name:literal, )*) => {
        /// One workload, tagged by its kind: `slap: {...}`.
        #[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
        #[serde(rename_all = "snake_case")]
        pub(crate) enum WorkloadSpec {
            $( $(#[$doc])* $variant($spec), )*
        }

        /// The workload kinds as a matrix names them.
        pub(crate) const WORKLOAD_KINDS: &[&str] = &[$($name),*];

        impl WorkloadSpec {
            pub(crate) fn kind(&self) -> &'static str {
                match self { $( WorkloadSpec::$variant(_) => $name, )* }
            }

            /// The server families this workload speaks to.
            pub(crate) fn families(&self) -> &'static [ServerKind] {
                match self { $( WorkloadSpec::$variant(s) => s.families(), )* }
            }

            /// Why a family outside `families` is refused (`Driver::refuses`).
            pub(crate) fn refuses(&self, kind: ServerKind) -> Option<String> {
                match self { $( WorkloadSpec::$variant(s) => s.refuses(kind), )* }
            }

            /// Whether the storage-engine axis applies (the workload creates its own tables).
            pub(crate) fn uses_engine(&self) -> bool {
                match self { $( WorkloadSpec::$variant(s) => s.uses_engine(), )* }
            }

            /// What the kind does to a server's data before each iteration (`Driver::resets`).
            pub(crate) fn resets(&self) -> Option<&'static str> {
                match self { $( WorkloadSpec::$variant(s) => s.resets(), )* }
            }

            /// Whether a timed `length` bounds the measured phase (`Driver::runs_for_length`).
            pub(crate) fn runs_for_length(&self) -> bool {
                match self { $( WorkloadSpec::$variant(s) => s.runs_for_length(), )* }
            }

            /// How the kind's clients reach the server (`Driver::transport`).
            pub(crate) fn transport(&self) -> &'static str {
                match self { $( WorkloadSpec::$variant(s) => s.transport(), )* }
            }

            /// The external program the kind runs (`Driver::tool`).
            pub(crate) fn tool(&self) -> Option<tools::Tool> {
                match self { $( WorkloadSpec::$variant(s) => s.tool(), )* }
            }

            /// Whether the kind's clients are this process's threads (`Driver::client_in_process`).
            pub(crate) fn client_in_process(&self) -> bool {
                match self { $( WorkloadSpec::$variant(s) => s.client_in_process(), )* }
            }

            /// Whether the server's counters are read once a second (`Driver::reads_server_seconds`).
            pub(crate) fn reads_server_seconds(&self) -> bool {
                match self { $( WorkloadSpec::$variant(s) => s.reads_server_seconds(), )* }
            }

            /// The tables the kind loads before it measures (`Driver::data_layout`).
            pub(crate) fn data_layout(&self, engine: Option<&str>) -> Option<crate::servers::dataset::Layout> {
                match self { $( WorkloadSpec::$variant(s) => s.data_layout(engine), )* }
            }

            /// Load them on a server that has none (`Driver::prepare`).
            pub(crate) async fn prepare(
                &self,
                kind: ServerKind,
                endpoint: &crate::servers::Endpoint,
                engine: Option<&str>,
                live: &std::sync::atomic::AtomicU64,
            ) -> Result<()> {
                match self { $( WorkloadSpec::$variant(s) => s.prepare(kind, endpoint, engine, live).await, )* }
            }

            /// The kind's own checks (`Driver::check`).
            pub(crate) fn check(&self, facts: &Facts) -> Result<(), Problem> {
                match self { $( WorkloadSpec::$variant(s) => s.check(facts), )* }
            }

            /// One iteration under the stall watchdog (`driver::run_iteration`).
            pub(crate) async fn run(&self, ctx: &Ctx<'_>, stall_timeout: Duration) -> Result<Measurement> {
                match self {
                    $( WorkloadSpec::$variant(s) => driver::run_iteration(s, ctx, stall_timeout).await, )*
                }
            }

            /// Each kind's name and what of its checks a schema states (`Driver::schema_rules`).
            pub(crate) fn schema_rules() -> Vec<(&'static str, Vec<SchemaRule>)> {
                vec![$( ($name, <$spec as Driver>::schema_rules()), )*]
            }

            /// The options of the kind called `kind`, read from the map being deserialised.
            fn named<'de, A: serde::de::MapAccess<'de>>(kind: &str, a: &mut A) -> Result<Self, A::Error> {
                match kind {
                    $( $name => Ok(WorkloadSpec::$variant(a.next_value()?)), )*
                    other => Err(serde::de::Error::unknown_variant(other, WORKLOAD_KINDS)),
                }
            }
        }
    };
}

kinds! {
    /// mysqlslap's auto-generated workloads.
    Slap(slap::SlapSpec) = "slap",
    /// sysbench 1.0's OLTP tests, driven by rmatrix's own client.
    Oltp(oltp::OltpSpec) = "oltp",
    /// The sysbench binary itself (any test or Lua script).
    Sysbench(sysbench::SysbenchSpec) = "sysbench",
    /// redis-benchmark's tests and memtier's mix, driven by rmatrix's own client.
    Redis(redis::RedisSpec) = "redis",
    /// The redis-benchmark binary itself.
    RedisBenchmark(redis_benchmark::RedisBenchmarkSpec) = "redis_benchmark",
    /// sql-bench's test groups and per-operation times, driven by rmatrix's own client.
    Sqlbench(sqlbench::SqlbenchSpec) = "sqlbench",
    /// The pgbench binary itself (its built-in scripts or a script of the matrix's).
    Pgbench(pgbench::PgbenchSpec) = "pgbench",
    /// TPC-C's five transactions on any SQL family (TPROC-C style).
    Tpcc(tpcc::TpccSpec) = "tpcc",
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
                    "one driver with its options, e.g. `{{{}: {{}}}}`; valid drivers: {}",
                    WORKLOAD_KINDS[0],
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
                        "name one driver with its options, e.g. `{{{}: {{}}}}`; valid \
                         drivers: {}",
                        WORKLOAD_KINDS[0],
                        WORKLOAD_KINDS.join(", ")
                    )));
                };
                let spec = WorkloadSpec::named(&kind, &mut a)?;
                if let Some(second) = a.next_key::<String>()? {
                    return Err(A::Error::custom(format!(
                        "name one driver, not both `{kind}` and `{}`: define two workloads",
                        crate::escape::terminal(&second)
                    )));
                }
                Ok(spec)
            }
        }
        d.deserialize_map(V)
    }
}
