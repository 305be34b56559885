//! `redis_benchmark: {...}`: the redis-benchmark binary itself.

use serde::{Deserialize, Serialize};

use crate::input::yaml::Scalar;
use crate::workloads::redis::{RedisTest, Transport};
use crate::workloads::tools::Tool;

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
