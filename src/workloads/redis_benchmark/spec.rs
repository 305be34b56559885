//! `redis_benchmark: {...}`: the redis-benchmark binary itself.

use serde::{Deserialize, Serialize};

use crate::input::bounds::MAX_QUERIES;
use crate::input::yaml::Scalar;
use crate::input::Length;
use crate::measure::measurement::Measurement;
use crate::servers::spec::ServerKind;
use crate::workloads::redis::spec::{MAX_DATA_SIZE, MAX_KEYSPACE, MAX_PIPELINE};
use crate::workloads::redis::{RedisTest, Transport};
use crate::workloads::tools::Tool;
use crate::workloads::{Ctx, Driver, Facts, Problem};

/// The most `--threads` redis-benchmark is given.
const MAX_THREADS: u64 = 256;

/// The redis-benchmark binary itself; its CSV output fills the same columns.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RedisBenchmarkSpec {
    pub(crate) test: RedisTest,
    #[serde(default = "three")]
    pub(crate) data_size: usize,
    #[serde(default)]
    pub(crate) keyspace: Option<u64>,
    #[serde(default = "one")]
    pub(crate) pipeline: u32,
    #[serde(default)]
    pub(crate) transport: Transport,
    /// redis-benchmark `--threads` (0: its single event loop).
    #[serde(default)]
    pub(crate) threads: u32,
    /// Requests per run (`-n`): redis-benchmark has no time limit, so a matrix measured by
    /// duration must give it here.
    #[serde(default)]
    pub(crate) requests: Option<u64>,
    /// Read only to be refused: the program is the user's choice (`REDIS_BENCHMARK`), not
    /// the matrix's.
    #[serde(default, skip_serializing)]
    pub(crate) binary: Option<Scalar>,
}

impl Driver for RedisBenchmarkSpec {
    fn tool(&self) -> Option<crate::workloads::tools::Tool> {
        Some(REDIS_BENCHMARK)
    }

    fn families(&self) -> &'static [ServerKind] {
        &[ServerKind::Redis]
    }

    fn transport(&self) -> &'static str {
        self.transport.name()
    }

    fn counts_live(&self) -> bool {
        false
    }

    fn client_in_process(&self) -> bool {
        false
    }

    fn check(&self, facts: &Facts) -> Result<(), Problem> {
        REDIS_BENCHMARK.refuse_binary(&self.binary)?;
        if facts.pace.is_some() {
            return Err(Problem::at(
                "",
                "redis-benchmark has no open-loop mode (each client sends its next request when \
                 the last one answered): use a `redis` workload with `load.rate`, or exclude \
                 this workload",
            ));
        }
        if self.test == RedisTest::Mixed {
            return Err(Problem::at(
                "test",
                "redis-benchmark has no mixed test: use a `redis` workload",
            ));
        }
        if self.pipeline == 0 {
            return Err(Problem::at("pipeline", "pipeline must be at least 1"));
        }
        if self.keyspace == Some(0) {
            return Err(Problem::at("keyspace", "keyspace must be at least 1"));
        }
        if self.requests.is_none() && matches!(facts.length, Some(Length::Time(_))) {
            return Err(Problem::at(
                "",
                "redis-benchmark cannot run for a duration: give `requests` (its -n) when \
                 `length` is a duration",
            ));
        }
        if self.requests == Some(0) {
            return Err(Problem::at("requests", "requests must be at least 1"));
        }
        Problem::bounded(&[
            ("data_size", self.data_size as u64, 1..=MAX_DATA_SIZE),
            ("keyspace", self.keyspace.unwrap_or(1), 1..=MAX_KEYSPACE),
            ("pipeline", self.pipeline.into(), 1..=MAX_PIPELINE),
            ("threads", self.threads.into(), 0..=MAX_THREADS),
            ("requests", self.requests.unwrap_or(1), 1..=MAX_QUERIES),
        ])?;
        Ok(())
    }

    /// The sizes' ranges, as `check` bounds them, and `binary` refused.
    fn schema_rules() -> Vec<crate::workloads::SchemaRule> {
        let mut rules = crate::workloads::driver::range_rules(&[
            ("data_size", 0, 1..=MAX_DATA_SIZE),
            ("keyspace", 0, 1..=MAX_KEYSPACE),
            ("pipeline", 0, 1..=MAX_PIPELINE),
            ("threads", 0, 0..=MAX_THREADS),
            ("requests", 0, 1..=MAX_QUERIES),
        ]);
        rules.push(REDIS_BENCHMARK.binary_rule());
        rules
    }

    async fn run(&self, ctx: &Ctx<'_>) -> anyhow::Result<Measurement> {
        super::driver::run_iteration(
            ctx.server,
            self,
            ctx.concurrency,
            ctx.warmup,
            ctx.length()?,
            ctx.live.clone(),
            &ctx.window,
        )
        .await
    }
}

fn three() -> usize {
    3
}
fn one() -> u32 {
    1
}

/// The redis-benchmark program: `RMATRIX_REDIS_BENCHMARK`, else `redis-benchmark` from PATH.
pub(crate) const REDIS_BENCHMARK: Tool = Tool {
    env: "RMATRIX_REDIS_BENCHMARK",
    default: "redis-benchmark",
};
