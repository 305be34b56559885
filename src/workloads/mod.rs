//! Workload kinds, one folder each: its matrix spec and checks, what it sends, and its
//! driver. This file is the registry: the `WorkloadSpec` enum names every kind once.

pub mod arrival;
pub mod driver;
pub mod oltp;
pub mod redis;
pub mod redis_benchmark;
pub mod slap;
pub mod stall;
pub mod sysbench;

use serde::{Deserialize, Serialize};

pub use driver::run_iteration;

/// The workload kinds as a matrix names them (the variants of `WorkloadSpec`).
pub const WORKLOAD_KINDS: [&str; 5] = ["slap", "oltp", "sysbench", "redis", "redis_benchmark"];

/// One workload, tagged by its kind: `slap: {...}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadSpec {
    /// mysqlslap's auto-generated workloads.
    Slap(slap::SlapSpec),
    /// redis-benchmark's tests and memtier's mix, driven by rmatrix's own client.
    Redis(redis::RedisSpec),
    /// The redis-benchmark binary itself.
    RedisBenchmark(redis_benchmark::RedisBenchmarkSpec),
    /// sysbench 1.0's OLTP tests, driven by rmatrix's own client.
    Oltp(oltp::OltpSpec),
    /// The sysbench binary itself (any test or Lua script).
    Sysbench(sysbench::SysbenchSpec),
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
                        crate::escape::terminal(&second)
                    )));
                }
                Ok(spec)
            }
        }
        d.deserialize_map(V)
    }
}
