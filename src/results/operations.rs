//! `operations.csv`: one line per named operation of a suite (sqlbench) or per transaction
//! type of a mix (tpcc) per cell iteration, keyed like samples.csv, appended as each
//! iteration finishes. Columns are appended at the end, as results.csv's.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::matrix::Cell;
use crate::measure::operation::Operation;
use crate::model::{CellKey, Dimension};

pub(crate) const OPERATIONS_CSV: &str = "operations.csv";

/// Where an iteration's operation lines go.
#[derive(Debug, Clone)]
pub(crate) struct OperationSink {
    path: PathBuf,
    cell: Cell,
    iteration: u32,
}

/// One line of operations.csv.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct OperationRow {
    pub(crate) server: String,
    pub(crate) config: String,
    pub(crate) engine: String,
    pub(crate) workload: String,
    pub(crate) concurrency: u32,
    pub(crate) iteration: u32,
    /// The operation's place in the suite (names repeat: test-insert has two
    /// `select_range_prefix`, and groups share `insert`).
    pub(crate) seq: u32,
    pub(crate) group: String,
    pub(crate) operation: String,
    pub(crate) loops: u64,
    pub(crate) statements: u64,
    pub(crate) seconds: f64,
    /// `loops / seconds`.
    pub(crate) ops_per_s: f64,
    pub(crate) srv_questions: Option<u64>,
    /// The server's counter deltas around the operation (JSON: Questions, Connections and
    /// every `Com_*` that moved).
    pub(crate) srv_counters: String,
    /// A mix's transaction type: its latency over the loops (empty for a suite's operation).
    #[serde(default)]
    pub(crate) lat_p50_ms: Option<f64>,
    #[serde(default)]
    pub(crate) lat_p95_ms: Option<f64>,
    #[serde(default)]
    pub(crate) lat_p99_ms: Option<f64>,
    #[serde(default)]
    pub(crate) lat_max_ms: Option<f64>,
    /// A mix's transaction type: deadlocks and serialization failures it was retried after.
    #[serde(default)]
    pub(crate) errors: Option<u64>,
}

impl OperationRow {
    /// A transaction type of a mix (timed loop by loop), not an operation of a suite.
    pub(crate) fn of_a_mix(&self) -> bool {
        self.lat_p95_ms.is_some()
    }

    /// The key of the cell it belongs to, as `ResultRow::cell_key` gives it (sqlbench runs
    /// in closed loop only: operations.csv has no rate).
    pub(crate) fn cell_key(&self) -> CellKey {
        CellKey::of(|d| match d {
            Dimension::Server => self.server.clone(),
            Dimension::Config => self.config.clone(),
            Dimension::Engine => self.engine.clone(),
            Dimension::Workload => self.workload.clone(),
            Dimension::Concurrency => self.concurrency.to_string(),
            Dimension::Rate => String::new(),
        })
    }
}

impl OperationSink {
    pub(crate) fn new(dir: &super::RunDir, cell: &Cell, iteration: u32) -> OperationSink {
        OperationSink {
            path: dir.file(OPERATIONS_CSV),
            cell: cell.clone(),
            iteration,
        }
    }

    /// Append the lines in one write (a kill leaves all of them or none); no operations,
    /// no file.
    pub(crate) fn write(&self, ops: &[Operation]) -> Result<()> {
        if ops.is_empty() {
            return Ok(());
        }
        let fresh = !self.path.exists();
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .with_context(|| format!("failed to open {}", self.path.display()))?;
        let c = &self.cell;
        let rows: Vec<OperationRow> = ops
            .iter()
            .enumerate()
            .map(|(i, o)| OperationRow {
                server: c.server.clone(),
                config: c.config.clone(),
                engine: c.engine.clone().unwrap_or_default(),
                workload: c.workload.clone(),
                concurrency: c.concurrency,
                iteration: self.iteration,
                seq: i as u32 + 1,
                group: o.group.clone(),
                operation: o.name.clone(),
                loops: o.loops,
                statements: o.statements,
                seconds: round6(o.seconds),
                ops_per_s: if o.seconds > 0.0 {
                    round2(o.loops as f64 / o.seconds)
                } else {
                    0.0
                },
                srv_questions: o.server.get("Questions").copied(),
                srv_counters: serde_json::to_string(&o.server).unwrap_or_default(),
                lat_p50_ms: o.latency.map(|l| round6(l.p50_ms)),
                lat_p95_ms: o.latency.map(|l| round6(l.p95_ms)),
                lat_p99_ms: o.latency.map(|l| round6(l.p99_ms)),
                lat_max_ms: o.latency.map(|l| round6(l.max_ms)),
                errors: o.errors,
            })
            .collect();
        super::files::write_once(file, &self.path, fresh, &rows)
    }
}

/// The lines of a run's operations.csv (none when there is no file); a damaged line is an
/// error naming the file and line.
pub(crate) fn read(path: &Path) -> Result<Vec<OperationRow>> {
    let Some(bytes) = super::stored_csv::bytes(path, crate::input::file::OPERATIONS)? else {
        return Ok(Vec::new());
    };
    Ok(super::stored_csv::deserialize(path, &bytes)?
        .into_iter()
        .map(|(_, row)| row)
        .collect())
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}
fn round6(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let run = super::super::RunDir {
            path: dir.path().to_path_buf(),
        };
        let m: crate::matrix::model::Matrix = crate::input::yaml::from_str(
            "servers: {s: {image: x}}\nconfigs: {c: {}}\nengines: [InnoDB]\n\
             workloads: {w: {sqlbench: {}}}\n",
        )
        .unwrap();
        let plan = crate::matrix::expand(&m, &[]);
        let cell = plan.cells().next().unwrap();
        let op = |name: &str, seconds| Operation {
            group: "insert".into(),
            name: name.into(),
            loops: 300,
            statements: 300,
            seconds,
            server: [
                ("Questions".to_string(), 302),
                ("Com_insert".to_string(), 300),
            ]
            .into(),
            latency: None,
            errors: None,
        };
        OperationSink::new(&run, cell, 1)
            .write(&[op("insert", 1.5), op("select_key", 0.25)])
            .unwrap();
        OperationSink::new(&run, cell, 2).write(&[]).unwrap();
        OperationSink::new(&run, cell, 2)
            .write(&[op("insert", 1.0)])
            .unwrap();
        let text = std::fs::read_to_string(dir.path().join(OPERATIONS_CSV)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(
            lines[0],
            "server,config,engine,workload,concurrency,iteration,seq,group,operation,loops,\
             statements,seconds,ops_per_s,srv_questions,srv_counters,lat_p50_ms,lat_p95_ms,\
             lat_p99_ms,lat_max_ms,errors"
        );
        assert_eq!(
            lines[2],
            r#"s,c,InnoDB,w,1,1,2,insert,select_key,300,300,0.25,1200.0,302,"{""Com_insert"":300,""Questions"":302}",,,,,"#
        );
        let rows = read(&dir.path().join(OPERATIONS_CSV)).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2].iteration, 2);
        assert_eq!(rows[0].cell_key().as_str(), "s|c|InnoDB|w|1");
    }
}
