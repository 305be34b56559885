//! `sysbench: {...}`: the sysbench binary itself, a bundled test or a Lua script from the
//! folder the user allows (`script`).

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use crate::input::yaml::Scalar;
use crate::workloads::tools::Tool;

/// `sysbench: {...}`: run sysbench itself against the cell's server and parse its report.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SysbenchSpec {
    /// A bundled test name (`oltp_read_write`), or the file name of a Lua script in the
    /// folder `RMATRIX_SYSBENCH_SCRIPTS` names (`script`).
    pub(crate) test: String,
    /// Options passed as `--key=value` to prepare and run (e.g. `tables: 4`).
    #[serde(default)]
    pub(crate) options: IndexMap<String, serde_json::Value>,
    /// Read only to be refused: the program is the user's choice (`SYSBENCH`), not the
    /// matrix's.
    #[serde(default, skip_serializing)]
    pub(crate) binary: Option<Scalar>,
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

/// The sysbench program: `RMATRIX_SYSBENCH`, else `sysbench` from PATH.
pub(crate) const SYSBENCH: Tool = Tool {
    env: "RMATRIX_SYSBENCH",
    default: "sysbench",
};
