//! One named operation of a suite of them (sqlbench): what operations.csv records.

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
}
