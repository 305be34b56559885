//! One named operation of a suite of them (sqlbench), or one transaction type of a mix
//! (tpcc): what operations.csv records.

use super::counters::Status;

/// One named operation of a suite (sql-bench's `Time for <name> (<loops>)`): its time,
/// its loop count as the suite reports it, and the server's counters around it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Operation {
    /// The test group it belongs to (`insert`, `select`...).
    pub group: String,
    pub name: String,
    pub loops: u64,
    /// Statements (and connections) sent for it.
    pub statements: u64,
    pub seconds: f64,
    /// Counter deltas around the operation (Questions, Connections, `Com_*`).
    pub server: Status,
    /// Each loop's latency, where the driver times every one (a mix's transaction types).
    #[serde(default)]
    pub latency: Option<super::latency::LatencySummary>,
    /// Errors the load went on after (a mix's retried deadlocks), where the driver counts them.
    #[serde(default)]
    pub errors: Option<u64>,
}
