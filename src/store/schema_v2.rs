//! Schema version 2: the store as an analyst reads it. Every results.csv column becomes a
//! typed column (before, p50, p999, client CPU and the rest were only inside
//! `iterations.row_csv`), each cell gets its server's image and version and each run its
//! parameters (before, only inside `runs.manifest_json`), and two views and a `units` table
//! say what is there. The rows a store already holds are filled from their stored line and
//! manifest, read through the same checks as when they are read back.
//!
//! Frozen once released, as every migration: a later change is a migration of its own.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};

use super::db::{Db, Val};
use super::limits::{self, Columns};

/// results.csv's columns `iterations` gains, as `ALTER TABLE ... ADD COLUMN`.
pub(super) const ITERATION_COLUMNS: &[(&str, &str)] = &[
    ("error", "TEXT"),
    ("queries", "BIGINT"),
    ("lat_p50_ms", "DOUBLE PRECISION"),
    ("lat_max_ms", "DOUBLE PRECISION"),
    ("commits", "BIGINT"),
    ("srv_questions", "BIGINT"),
    ("srv_com_select", "BIGINT"),
    ("srv_com_insert", "BIGINT"),
    ("srv_com_update", "BIGINT"),
    ("srv_com_delete", "BIGINT"),
    ("srv_com_commit", "BIGINT"),
    ("reads", "BIGINT"),
    ("writes", "BIGINT"),
    ("others", "BIGINT"),
    ("reconnects", "BIGINT"),
    ("lat_min_ms", "DOUBLE PRECISION"),
    ("lat_p999_ms", "DOUBLE PRECISION"),
    ("thread_events_avg", "DOUBLE PRECISION"),
    ("thread_events_stddev", "DOUBLE PRECISION"),
    ("client_cpu_s", "DOUBLE PRECISION"),
    ("lat_percentiles", "TEXT"),
    ("apdex", "DOUBLE PRECISION"),
    ("apdex_t_ms", "DOUBLE PRECISION"),
    ("srv_cpu_s", "DOUBLE PRECISION"),
    ("srv_cpu_us_per_op", "DOUBLE PRECISION"),
    ("srv_read_bytes", "BIGINT"),
    ("srv_write_bytes", "BIGINT"),
    ("achieved_rate", "DOUBLE PRECISION"),
    ("scheduled", "BIGINT"),
    ("late_starts", "BIGINT"),
    ("missed_starts", "BIGINT"),
    ("max_backlog", "BIGINT"),
    ("svc_avg_ms", "DOUBLE PRECISION"),
    ("svc_p99_ms", "DOUBLE PRECISION"),
    ("srv_ctx_switches", "BIGINT"),
    ("srv_fsyncs", "BIGINT"),
    ("docker_engine", "TEXT"),
    ("beside_runs", "BIGINT"),
    ("host_cpu_pressure_pct", "DOUBLE PRECISION"),
    ("client_busy_pct", "DOUBLE PRECISION"),
    ("client_cores", "DOUBLE PRECISION"),
    ("pacer_late", "BIGINT"),
    ("srv_instructions", "BIGINT"),
    ("srv_timer_instructions", "BIGINT"),
    ("srv_instr_per_op", "DOUBLE PRECISION"),
];

/// What the manifest says of each cell's server (`facts`).
pub(super) const CELL_COLUMNS: &[(&str, &str)] = &[
    ("server_image", "TEXT"),
    ("server_image_id", "TEXT"),
    ("server_version", "TEXT"),
];

/// The run's parameters as one JSON object (`facts`).
pub(super) const RUN_COLUMNS: &[(&str, &str)] = &[("params_json", "TEXT")];

/// After the columns: the parameters' table, the units and the views. Nothing of rmatrix
/// reads the views (`schema::check`): they are for people and dashboards.
pub(super) const SQL: &str = "
    CREATE TABLE run_params (
        run_key TEXT NOT NULL REFERENCES runs (run_key) ON DELETE CASCADE,
        name TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_key, name)
    );
    CREATE TABLE units (
        column_name TEXT NOT NULL PRIMARY KEY,
        unit TEXT NOT NULL,
        meaning TEXT NOT NULL
    );
    INSERT INTO units (column_name, unit, meaning) VALUES
    ('server', 'name', 'the server, as the matrix names it'),
    ('config', 'name', 'the server config, as the matrix names it'),
    ('engine', 'name', 'the storage engine; empty where it does not apply'),
    ('workload', 'name', 'the workload, as the matrix names it'),
    ('kind', 'name', 'the workload kind (slap, oltp, redis, sysbench, pgbench...)'),
    ('concurrency', 'connections', 'client connections'),
    ('rate', 'arrivals/s', 'open loop: the target arrivals per second; NULL in closed loop'),
    ('iteration', 'number', 'the 1-based iteration of the cell'),
    ('status', 'ok or failed', 'whether the iteration measured'),
    ('error', 'text', 'why a failed iteration failed (its first error); empty when ok'),
    ('queries', 'operations', 'operations that succeeded in the measured phase'),
    ('seconds', 's', 'wall time of the measured phase, clients released to the last one done'),
    ('qps', 'operations/s', 'queries / seconds'),
    ('tps', 'transactions/s', 'committed transactions per second, where the workload commits'),
    ('lat_avg_ms', 'ms', 'mean latency of an operation'),
    ('lat_p50_ms', 'ms', 'median latency of an operation'),
    ('lat_p95_ms', 'ms', '95th percentile latency'),
    ('lat_p99_ms', 'ms', '99th percentile latency'),
    ('lat_max_ms', 'ms', 'highest latency'),
    ('errors', 'operations', 'operations that returned an error (the load goes on)'),
    ('commits', 'transactions', 'committed transactions'),
    ('srv_questions', 'statements', 'the server''s Questions delta over the measured phase'),
    ('srv_com_select', 'statements', 'the server''s Com_select delta'),
    ('srv_com_insert', 'statements', 'the server''s Com_insert delta'),
    ('srv_com_update', 'statements', 'the server''s Com_update delta'),
    ('srv_com_delete', 'statements', 'the server''s Com_delete delta'),
    ('srv_com_commit', 'statements', 'the server''s Com_commit delta'),
    ('started_at', 'UTC time (RFC 3339)', 'when the iteration started'),
    ('reads', 'statements', 'read statements, where the workload classifies them'),
    ('writes', 'statements', 'write statements, where the workload classifies them'),
    ('others', 'statements', 'other statements, where the workload classifies them'),
    ('reconnects', 'connections', 'connections re-established after a lost one'),
    ('lat_min_ms', 'ms', 'lowest latency'),
    ('lat_p999_ms', 'ms', '99.9th percentile latency'),
    ('thread_events_avg', 'operations/connection', 'mean operations per client connection'),
    ('thread_events_stddev', 'operations/connection', 'population stddev of operations per connection'),
    ('client_cpu_s', 'CPU s', 'CPU time of the client over the measured phase'),
    ('lat_percentiles', 'JSON of ms', 'extra latency percentiles, e.g. {\"p99.9\": 4.1}'),
    ('apdex', 'ratio 0-1', 'Apdex[T] of the iteration''s operations (errors frustrated)'),
    ('apdex_t_ms', 'ms', 'the T of apdex'),
    ('srv_cpu_s', 'CPU s', 'CPU time of the server''s container over the measured phase'),
    ('srv_cpu_us_per_op', 'CPU us/operation', 'srv_cpu_s per successful operation'),
    ('srv_read_bytes', 'bytes', 'bytes the server''s container read through block devices'),
    ('srv_write_bytes', 'bytes', 'bytes the server''s container wrote through block devices'),
    ('achieved_rate', 'operations/s', 'open loop: operations completed per second of the phase'),
    ('scheduled', 'arrivals', 'open loop: arrivals due within the measured phase'),
    ('late_starts', 'arrivals', 'open loop: arrivals started more than 1 ms after their intended start'),
    ('missed_starts', 'arrivals', 'open loop: arrivals due but never started when the phase ended'),
    ('max_backlog', 'arrivals', 'open loop: the most due arrivals waiting for a connection at once'),
    ('svc_avg_ms', 'ms', 'open loop: mean service time, from the actual send to the reply'),
    ('svc_p99_ms', 'ms', 'open loop: 99th percentile service time'),
    ('srv_ctx_switches', 'context switches', 'context switches of the server container''s threads'),
    ('srv_fsyncs', 'fsyncs', 'the server''s own count of fsyncs (MariaDB/MySQL Innodb_data_fsyncs)'),
    ('docker_engine', 'name', 'the engine of a pooled run that ran the server; empty without a pool'),
    ('beside_runs', 'runs', 'other rmatrix runs with containers on the cell''s engine meanwhile'),
    ('host_cpu_pressure_pct', '%', 'share of the wall time some task on the host waited for a CPU'),
    ('client_busy_pct', '%', 'the client''s threads running or runnable, of client_cores'),
    ('client_cores', 'cores', 'the cores the client may use'),
    ('pacer_late', 'arrivals', 'open loop: arrivals the client itself released more than 1 ms late'),
    ('srv_instructions', 'instructions', 'counted mode: every instruction the server executed'),
    ('srv_timer_instructions', 'instructions', 'counted mode: those of its timer work'),
    ('srv_instr_per_op', 'instructions/operation', 'counted mode: the rest per successful operation');
    CREATE VIEW iteration_metrics AS
    SELECT r.run_key, r.run_id, r.matrix_name AS matrix, r.started_at AS run_started_at,
        c.id AS cell_id, i.id AS iteration_id,
        c.server, c.config, c.engine, c.workload, c.kind, c.concurrency, c.rate,
        i.iteration, i.status, i.error, i.queries, i.seconds, i.qps, i.tps,
        i.lat_avg_ms, i.lat_p50_ms, i.lat_p95_ms, i.lat_p99_ms, i.lat_max_ms,
        i.errors, i.commits, i.srv_questions, i.srv_com_select, i.srv_com_insert,
        i.srv_com_update, i.srv_com_delete, i.srv_com_commit, i.started_at,
        i.reads, i.writes, i.others, i.reconnects, i.lat_min_ms, i.lat_p999_ms,
        i.thread_events_avg, i.thread_events_stddev, i.client_cpu_s, i.lat_percentiles,
        i.apdex, i.apdex_t_ms, i.srv_cpu_s, i.srv_cpu_us_per_op, i.srv_read_bytes,
        i.srv_write_bytes, i.achieved_rate, i.scheduled, i.late_starts, i.missed_starts,
        i.max_backlog, i.svc_avg_ms, i.svc_p99_ms, i.srv_ctx_switches, i.srv_fsyncs,
        i.docker_engine, i.beside_runs, i.host_cpu_pressure_pct, i.client_busy_pct,
        i.client_cores, i.pacer_late, i.srv_instructions, i.srv_timer_instructions,
        i.srv_instr_per_op
    FROM iterations i JOIN cells c ON c.id = i.cell_id JOIN runs r ON r.id = c.run_id;
    CREATE VIEW cell_runs AS
    SELECT r.run_key, r.run_id, r.matrix_name AS matrix, r.started_at AS run_started_at,
        r.params_json, c.id AS cell_id,
        c.server, c.config, c.engine, c.workload, c.kind, c.concurrency, c.rate,
        c.server_image, c.server_image_id, c.server_version,
        e.rmatrix_version, e.cpu_model, e.cpus, e.kernel, e.memory_bytes
    FROM cells c JOIN runs r ON r.id = c.run_id JOIN environments e ON e.id = r.environment_id;
";

/// The tables and views `SQL` makes.
const MADE: [&str; 4] = ["run_params", "units", "iteration_metrics", "cell_runs"];

/// Before `SQL`: none of the names it makes is taken (a user's own `units` table, a view
/// planted in the file). The migration stops with what is there, not the database's error.
pub(super) fn names_are_free(db: &mut dyn Db) -> Result<()> {
    let objects = db.objects(&MADE)?;
    if let Some((name, what)) = objects.iter().find(|(_, what)| what != "trigger") {
        bail!(
            "`{name}` is already there (a {what}), where schema version 2 makes its own: \
             rename or drop it, then import again"
        );
    }
    Ok(())
}

/// A stored run, as the back-fill reads it.
const RUN: Columns = Columns(&[
    ("id", None),
    ("run_key", Some(limits::NAME)),
    ("run_id", Some(limits::NAME)),
    ("row_header", Some(limits::ROW)),
]);
const LINES: Columns = Columns(&[("i.id", None), ("i.row_csv", Some(limits::ROW))]);
const MANIFEST: Columns = Columns(&[("manifest_json", Some(limits::MANIFEST))]);

/// Fill the new columns of what a store already holds, one run at a time: each stored line
/// read back through results.csv's checks, each manifest through the manifest's.
pub(super) fn backfill(db: &mut dyn Db) -> Result<()> {
    let runs = db.query(&format!("SELECT {} FROM runs ORDER BY id", RUN.sql()), &[])?;
    for run in runs {
        let run = RUN.check(&run).map_err(|e| anyhow!("a stored run: {e}"))?;
        let text = |i: usize| run[i].text().unwrap_or_default();
        // Where a refusal points: the run in the store.
        let at = PathBuf::from(format!("the stored run {}", text(2)));
        let id = run[0].int().unwrap_or_default();
        fill_rows(db, id, &at, text(3))?;
        fill_facts(db, id, text(1), &at)?;
    }
    Ok(())
}

/// The typed columns of the run `run`'s rows, from their lines (`header` their columns).
fn fill_rows(db: &mut dyn Db, run: i64, at: &Path, header: &str) -> Result<()> {
    let lines = db.query(
        &format!(
            "SELECT {} FROM iterations i JOIN cells c ON c.id = i.cell_id \
             WHERE c.run_id = $1 ORDER BY i.ord",
            LINES.sql()
        ),
        &[Val::Int(run)],
    )?;
    let mut ids = Vec::with_capacity(lines.len());
    let mut bytes = format!("{header}\n").into_bytes();
    for line in &lines {
        let line = (LINES.check(line)).map_err(|e| anyhow!("{}: a row: {e}", at.display()))?;
        let csv = line[1].text().unwrap_or_default();
        // A line break inside a stored line would make two rows of one.
        if csv.contains(['\n', '\r']) {
            bail!("{}: a stored row spans lines", at.display());
        }
        ids.push(line[0].clone());
        bytes.extend_from_slice(csv.as_bytes());
        bytes.push(b'\n');
    }
    let rows = crate::results::check::parse_results(at, &bytes)?.rows;
    if rows.len() != ids.len() {
        bail!(
            "{}: {} stored rows read as {}",
            at.display(),
            ids.len(),
            rows.len()
        );
    }
    let columns: Vec<&str> = ITERATION_COLUMNS.iter().map(|(name, _)| *name).collect();
    let set: Vec<String> = (columns.iter().enumerate())
        .map(|(i, c)| format!("{c} = ${}", i + 1))
        .collect();
    let update = format!(
        "UPDATE iterations SET {} WHERE id = ${}",
        set.join(", "),
        columns.len() + 1
    );
    for (id, row) in ids.into_iter().zip(&rows) {
        let mut values = super::typed::values(row, &columns)?;
        values.push(id);
        db.execute(&update, &values)?;
    }
    Ok(())
}

/// The run's server images, versions and parameters, from its stored manifest.
fn fill_facts(db: &mut dyn Db, run: i64, run_key: &str, at: &Path) -> Result<()> {
    let rows = db.query(
        &format!("SELECT {} FROM runs WHERE id = $1", MANIFEST.sql()),
        &[Val::Int(run)],
    )?;
    let text = match rows.first() {
        Some(r) => MANIFEST
            .check(r)
            .map_err(|e| anyhow!("{}: {e}", at.display()))?[0]
            .text()
            .unwrap_or_default()
            .to_string(),
        None => String::new(),
    };
    // A run stored without a manifest.json has none.
    let manifest = match text.is_empty() {
        true => serde_json::Value::Null,
        false => crate::results::check::parse_manifest(at, &text)?,
    };
    super::facts::write(db, run, run_key, &manifest)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use rusqlite::types::Value;

    use crate::store::{Location, Store};

    /// The runs tests/fixtures/store/v1-sqlite.sql holds, in the order it stored them.
    const RUNS: [&str; 4] = [
        "tests/fixtures/store/nightly/2026-11-20T02-00-00-nightly",
        "tests/fixtures/store/nightly/2026-11-21T02-00-00-nightly",
        "tests/fixtures/store/nightly/2026-11-22T02-00-00-nightly",
        "tests/fixtures/compare/base",
    ];

    /// Every row of `sql`'s answer, its columns but the store's own ids.
    fn answer(db: &Path, sql: &str) -> Vec<Vec<(String, Value)>> {
        let c = rusqlite::Connection::open(db).unwrap();
        let mut s = c.prepare(sql).unwrap();
        let names: Vec<String> = s.column_names().map(str::to_string).collect();
        let rows = s
            .query_map([], |r| {
                (names.iter().enumerate())
                    .filter(|(_, n)| !matches!(n.as_str(), "cell_id" | "iteration_id"))
                    .map(|(i, n)| Ok((n.clone(), r.get::<_, Value>(i)?)))
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .unwrap();
        rows.map(Result::unwrap).collect()
    }

    /// A store rmatrix made at version 1 is refused to read ("older"), and migrated when
    /// written: its views then answer as those of a store the same runs were imported into.
    #[test]
    fn a_version_1_store_migrates_to_what_an_import_writes() {
        let tmp = tempfile::tempdir().unwrap();
        let old = tmp.path().join("v1.db");
        let dump = std::fs::read_to_string("tests/fixtures/store/v1-sqlite.sql").unwrap();
        rusqlite::Connection::open(&old)
            .unwrap()
            .execute_batch(&dump)
            .unwrap();
        let e = format!(
            "{:#}",
            Store::read(&Location::Sqlite(old.clone())).err().unwrap()
        );
        let older = format!(
            "the store is at schema version 1, older than this rmatrix reads ({})",
            crate::store::schema::VERSION
        );
        assert!(e.contains(&older), "{e}");
        let mut migrated = Store::open(&Location::Sqlite(old.clone())).unwrap();
        let fresh = tmp.path().join("fresh.db");
        let mut imported = Store::open(&Location::Sqlite(fresh.clone())).unwrap();
        for run in RUNS {
            imported.import(Path::new(run)).unwrap();
        }
        assert_eq!(migrated.runs(None).unwrap().len(), RUNS.len());
        for sql in [
            "SELECT * FROM iteration_metrics ORDER BY run_started_at, iteration_id",
            "SELECT * FROM cell_runs ORDER BY run_started_at, cell_id",
            "SELECT * FROM run_params ORDER BY run_key, name",
            "SELECT * FROM units ORDER BY column_name",
        ] {
            let (got, want) = (answer(&old, sql), answer(&fresh, sql));
            assert!(!want.is_empty(), "{sql}");
            assert_eq!(got.len(), want.len(), "{sql}");
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(g, w, "{sql}");
            }
        }
        // The facts are there: p999 and client CPU typed, each night's MariaDB version.
        let versions = answer(
            &old,
            "SELECT DISTINCT run_id, server_version FROM cell_runs WHERE server = 'mariadb' \
             ORDER BY run_id",
        );
        let versions: Vec<&Value> = versions.iter().map(|r| &r[1].1).collect();
        let text = |v: &str| Value::Text(v.into());
        assert_eq!(
            versions,
            [
                &text("11.4.4-MariaDB-ubu2404"),
                &text("11.4.4-MariaDB-ubu2404"),
                &text("11.4.5-MariaDB-ubu2404")
            ]
        );
        let typed = answer(
            &old,
            "SELECT lat_p999_ms, client_cpu_s FROM iteration_metrics \
             WHERE run_id = '2026-11-20T02-00-00-nightly' ORDER BY iteration_id LIMIT 1",
        );
        assert_eq!(typed[0][0].1, Value::Real(0.57));
        assert_eq!(typed[0][1].1, Value::Real(2.57));
    }
}
