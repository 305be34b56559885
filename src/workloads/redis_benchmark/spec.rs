//! `redis_benchmark: {...}`: the redis-benchmark binary itself.

use serde::{Deserialize, Serialize};

use crate::workloads::redis::{RedisTest, Transport};

/// The redis-benchmark binary itself; its CSV output fills the same columns.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RedisBenchmarkSpec {
    pub test: RedisTest,
    #[serde(default = "three")]
    pub data_size: usize,
    #[serde(default)]
    pub keyspace: Option<u64>,
    #[serde(default = "one")]
    pub pipeline: u32,
    #[serde(default)]
    pub transport: Transport,
    /// redis-benchmark `--threads` (0: its single event loop).
    #[serde(default)]
    pub threads: u32,
    /// Requests per run (`-n`): redis-benchmark has no time limit, so a matrix measured by
    /// duration must give it here.
    #[serde(default)]
    pub requests: Option<u64>,
    /// The program to run.
    #[serde(default = "default_binary")]
    pub binary: String,
}

fn three() -> usize {
    3
}
fn one() -> u32 {
    1
}
fn default_binary() -> String {
    "redis-benchmark".into()
}
