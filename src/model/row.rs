//! One line of `results.csv`: a cell x iteration. Column names are a public interface
//! (users' scripts read them); add columns at the end, never rename. Format 2 took one out,
//! `server_counters`, for counters.csv (`results::legacy` reads format 1).

use serde::{Deserialize, Serialize};

use super::cell::{Cell, CellKey, Dimension};

/// Version of the run-directory layout and of these columns.
/// 2: the server counters moved from results.csv (`server_counters`) to counters.csv.
pub const FORMAT_VERSION: u32 = 2;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)] // rows written before a column was appended still read
pub struct ResultRow {
    pub(crate) server: String,
    pub(crate) config: String,
    pub(crate) engine: String,
    pub(crate) workload: String,
    pub(crate) kind: String,
    pub(crate) concurrency: u32,
    pub(crate) iteration: u32,
    pub status: Status,
    /// Why the cell failed (first error), empty when ok.
    pub(crate) error: String,
    /// Statements completed without error in the measured phase.
    pub queries: Option<u64>,
    /// Wall time of the measured phase, from releasing the clients to the last one finishing.
    pub seconds: Option<f64>,
    pub qps: Option<f64>,
    /// Committed transactions per second, where the workload has transactions.
    pub(crate) tps: Option<f64>,
    pub(crate) lat_avg_ms: Option<f64>,
    pub(crate) lat_p50_ms: Option<f64>,
    pub(crate) lat_p95_ms: Option<f64>,
    pub(crate) lat_p99_ms: Option<f64>,
    pub(crate) lat_max_ms: Option<f64>,
    /// Statements that returned an error (the load goes on).
    pub(crate) errors: Option<u64>,
    pub(crate) commits: Option<u64>,
    /// Server-side counters (SHOW GLOBAL STATUS deltas over the measured phase).
    pub(crate) srv_questions: Option<u64>,
    pub(crate) srv_com_select: Option<u64>,
    pub(crate) srv_com_insert: Option<u64>,
    pub(crate) srv_com_update: Option<u64>,
    pub(crate) srv_com_delete: Option<u64>,
    pub(crate) srv_com_commit: Option<u64>,
    pub(crate) started_at: String,
    /// Read / write / other statements (sysbench's split), where the workload classifies them.
    pub(crate) reads: Option<u64>,
    pub(crate) writes: Option<u64>,
    pub(crate) others: Option<u64>,
    /// Connections re-established after a lost connection.
    pub(crate) reconnects: Option<u64>,
    pub(crate) lat_min_ms: Option<f64>,
    pub(crate) lat_p999_ms: Option<f64>,
    /// Mean and population stddev of events per client connection (thread fairness).
    pub(crate) thread_events_avg: Option<f64>,
    pub(crate) thread_events_stddev: Option<f64>,
    /// CPU seconds the rmatrix process used over the measured phase (its own accounting).
    pub(crate) client_cpu_s: Option<f64>,
    /// Extra latency percentiles as JSON, e.g. `{"p99.9": 4.1}`.
    pub(crate) lat_percentiles: String,
    /// Apdex[T] of the iteration's operations (errors frustrated), where the matrix gives T
    /// (`report.apdex_t`) and the driver has a latency histogram.
    pub(crate) apdex: Option<f64>,
    /// The T of `apdex`, in ms.
    pub(crate) apdex_t_ms: Option<f64>,
    /// CPU seconds the server's container used over the measured phase (its cgroup).
    pub(crate) srv_cpu_s: Option<f64>,
    /// Server CPU microseconds per successful operation (`srv_cpu_s` / `queries`).
    pub(crate) srv_cpu_us_per_op: Option<f64>,
    /// Bytes the server's container read and wrote through block devices over the phase.
    pub(crate) srv_read_bytes: Option<u64>,
    pub(crate) srv_write_bytes: Option<u64>,
    /// Open loop: the cell's target arrivals per second (empty in closed loop).
    pub(crate) rate: Option<u32>,
    /// Open loop: operations completed per second of the measured phase, against `rate`.
    pub(crate) achieved_rate: Option<f64>,
    /// Open loop: arrivals scheduled within the measured phase.
    pub(crate) scheduled: Option<u64>,
    /// Open loop: arrivals started more than 1 ms after their intended start.
    pub(crate) late_starts: Option<u64>,
    /// Open loop: arrivals due but never started when the phase ended (the backlog left).
    pub(crate) missed_starts: Option<u64>,
    /// Open loop: the most due arrivals waiting for a free connection at once.
    pub(crate) max_backlog: Option<u64>,
    /// Open loop: service time (from the request's actual send to its reply), apart from
    /// the latency columns, which run from the intended start.
    pub(crate) svc_avg_ms: Option<f64>,
    pub(crate) svc_p99_ms: Option<f64>,
    /// Context switches of the server container's threads over the measured phase.
    pub(crate) srv_ctx_switches: Option<u64>,
    /// The server's own count of fsyncs over the phase (MariaDB/MySQL `Innodb_data_fsyncs`).
    pub(crate) srv_fsyncs: Option<u64>,
    /// The Docker engine of a pooled run that ran the deployment (empty for one engine).
    pub(crate) docker_engine: String,
    /// Other rmatrix runs with containers running on this cell's engine while it was measured
    /// (the most seen at its start and its end): they share the machine.
    pub(crate) beside_runs: Option<u32>,
    /// Percent of the iteration's wall time in which some task on rmatrix's host waited for
    /// a CPU (`/proc/pressure/cpu`, `some`): the host's own contention, whoever caused it.
    pub(crate) host_cpu_pressure_pct: Option<f64>,
    /// Percent of the cores the client may use (`client_cores`) that its threads ran or
    /// waited runnable for over the measured phase; at `measure::client::BOUND_PCT` or above
    /// the cell is client-bound. Empty where the client is an external tool.
    pub(crate) client_busy_pct: Option<f64>,
    /// The cores the client may use: its CPU affinity, capped by its cgroup's CPU quota.
    pub(crate) client_cores: Option<f64>,
    /// Open loop: arrivals rmatrix's pacer itself released more than 1 ms after their
    /// intended start (the client fell behind; `late_starts` also counts waits for a free
    /// connection, which are the server's). Empty for sysbench.
    pub(crate) pacer_late: Option<u64>,
    /// Counted mode (`counted: callgrind`): every instruction the server executed over the
    /// measured phase, those of its timer work (e.g. Redis's `serverCron`), and the rest per
    /// successful operation.
    pub(crate) srv_instructions: Option<u64>,
    pub(crate) srv_timer_instructions: Option<u64>,
    pub(crate) srv_instr_per_op: Option<f64>,
    /// TPC-C (`tpcc`): New-Orders committed per minute of the measured phase, counted from
    /// the schema's next order ids (HammerDB's NOPM).
    pub(crate) nopm: Option<f64>,
    /// TPC-C: New-Order transactions ended (committed, and the 1% rolled back on purpose)
    /// per minute, as the client counted them (the specification's tpmC).
    pub(crate) tpmc: Option<f64>,
    /// TPC-C: transactions the server counted (committed and rolled back) per minute
    /// (HammerDB's TPM).
    pub(crate) tpm: Option<f64>,
}

impl ResultRow {
    pub fn for_cell(cell: &Cell, kind: &str, iteration: u32) -> ResultRow {
        ResultRow {
            server: cell.server.clone(),
            config: cell.config.clone(),
            engine: cell.engine.clone().unwrap_or_default(),
            workload: cell.workload.clone(),
            kind: kind.to_string(),
            concurrency: cell.concurrency,
            rate: cell.rate,
            iteration,
            started_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            ..ResultRow::default()
        }
    }

    pub fn failed(mut self, reason: &str) -> ResultRow {
        self.status = Status::Failed;
        // One line, and never a spreadsheet formula: results.csv gets opened in spreadsheets.
        self.error = crate::escape::csv_text(&reason.replace(['\n', '\r'], " "));
        self
    }

    pub(crate) fn is_ok(&self) -> bool {
        self.status == Status::Ok
    }

    /// The value of a dimension column, as `Cell::get` gives it.
    pub(crate) fn dim(&self, dim: Dimension) -> String {
        match dim {
            Dimension::Server => self.server.clone(),
            Dimension::Config => self.config.clone(),
            Dimension::Engine => self.engine.clone(),
            Dimension::Workload => self.workload.clone(),
            Dimension::Concurrency => self.concurrency.to_string(),
            Dimension::Rate => self.rate.map(|r| r.to_string()).unwrap_or_default(),
        }
    }

    /// The cell this row measured.
    pub(crate) fn cell(&self) -> Cell {
        Cell {
            server: self.server.clone(),
            config: self.config.clone(),
            engine: Some(self.engine.clone()).filter(|e| !e.is_empty()),
            workload: self.workload.clone(),
            concurrency: self.concurrency,
            rate: self.rate,
        }
    }

    /// Identity of the cell this row measured (for resume and joins).
    pub(crate) fn cell_key(&self) -> CellKey {
        CellKey::of(|d| self.dim(d))
    }
}

/// Whether an iteration measured (`ok`) or not (`failed`, with the reason in `error`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    #[default]
    Failed,
}

/// Said in the run directory's words: a row with another status is refused, not guessed.
impl<'de> Deserialize<'de> for Status {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        match text.as_str() {
            "ok" => Ok(Status::Ok),
            "failed" => Ok(Status::Failed),
            other => Err(serde::de::Error::custom(format!(
                "unknown status `{}`; expected `ok` or `failed`",
                crate::escape::terminal(other)
            ))),
        }
    }
}
