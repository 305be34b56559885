//! `sysbench: {...}`: the sysbench binary itself, any bundled test or Lua script.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// `sysbench: {...}`: run sysbench itself against the cell's server and parse its report.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SysbenchSpec {
    /// A bundled test name (`oltp_read_write`) or a path to a Lua script.
    pub(crate) test: String,
    /// Options passed as `--key=value` to prepare and run (e.g. `tables: 4`).
    #[serde(default)]
    pub(crate) options: IndexMap<String, serde_json::Value>,
    /// The sysbench binary.
    #[serde(default = "d_sysbench")]
    pub(crate) binary: String,
    /// Run `prepare` once per deployment (and `cleanup` never: the server is thrown away).
    #[serde(default = "d_true")]
    pub(crate) prepare: bool,
    #[serde(default = "d_db")]
    pub(crate) db: String,
}

fn d_true() -> bool {
    true
}
fn d_db() -> String {
    "sbtest".into()
}
fn d_sysbench() -> String {
    "sysbench".into()
}
