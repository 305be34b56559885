//! The store's tables and their migrations. A store records the version it is at in
//! `rmatrix_schema`; opening one applies the migrations it lacks, in one transaction each,
//! and refuses a store a newer rmatrix has migrated past this one.
//!
//! The tables, one row each per:
//! - `environments`: host and servers a run measured on (CPU, kernel, memory, rmatrix's
//!   version, each deployment's image, version and variables), shared by the runs that had
//!   the same (`digest`);
//! - `runs`: a run directory (its manifest and matrix copy as stored, results.csv's header,
//!   the columns of its rows' `row_csv`, a digest of its content);
//! - `cells`: a cell of a run (server, config, engine, workload, concurrency, rate) and its
//!   server's image and version;
//! - `iterations`: a results.csv row, in file order (`ord`), as the line itself (`row_csv`,
//!   which `history` and `compare` read back through results.csv's own checks) and each of
//!   its columns typed, for queries and dashboards;
//! - `samples`: an iteration's per-second line of samples.csv;
//! - `counters`: an iteration's server counter deltas (counters.csv);
//! - `run_params`: a matrix parameter of a run;
//! - `units`: a results.csv column's unit and meaning.
//!
//! And two views for people, which rmatrix itself never reads: `iteration_metrics` (an
//! iteration with its run and cell) and `cell_runs` (a cell with its run, server and host).

use anyhow::{bail, Result};

use super::db::{Access, Db, Val};
use super::{schema_v2, schema_v3};

/// One step of a migration.
enum Step {
    /// Statements; `{id}` is the database's auto-numbered key.
    Sql(&'static str),
    /// Columns added to a table (name, type), one `ALTER TABLE` each, as SQLite takes them.
    AddColumns(&'static str, &'static [(&'static str, &'static str)]),
    /// What the SQL both databases speak cannot do (read a stored line or manifest).
    Rust(fn(&mut dyn Db) -> Result<()>),
}

/// The migrations in order: the store is at version N when the first N have run.
const MIGRATIONS: &[&[Step]] = &[
    // 1: the first layout.
    &[Step::Sql(
        "CREATE TABLE environments (
        id {id},
        digest TEXT NOT NULL UNIQUE,
        rmatrix_version TEXT NOT NULL,
        cpu_model TEXT NOT NULL,
        cpus BIGINT NOT NULL,
        kernel TEXT NOT NULL,
        memory_bytes BIGINT NOT NULL,
        env_json TEXT NOT NULL
    );
    CREATE TABLE runs (
        id {id},
        run_key TEXT NOT NULL UNIQUE,
        instance TEXT NOT NULL,
        run_id TEXT NOT NULL,
        matrix_name TEXT NOT NULL,
        report_metric TEXT NOT NULL,
        started_at TEXT NOT NULL,
        source TEXT NOT NULL,
        environment_id BIGINT NOT NULL REFERENCES environments (id),
        results_header TEXT NOT NULL,
        row_header TEXT NOT NULL,
        manifest_json TEXT NOT NULL,
        matrix_yaml TEXT NOT NULL,
        content_digest TEXT NOT NULL,
        imported_at TEXT NOT NULL
    );
    CREATE INDEX runs_by_matrix ON runs (matrix_name, started_at);
    CREATE TABLE cells (
        id {id},
        run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        server TEXT NOT NULL,
        config TEXT NOT NULL,
        engine TEXT NOT NULL,
        workload TEXT NOT NULL,
        kind TEXT NOT NULL,
        concurrency BIGINT NOT NULL,
        rate BIGINT
    );
    CREATE INDEX cells_by_run ON cells (run_id);
    CREATE TABLE iterations (
        id {id},
        cell_id BIGINT NOT NULL REFERENCES cells (id) ON DELETE CASCADE,
        ord BIGINT NOT NULL,
        iteration BIGINT NOT NULL,
        status TEXT NOT NULL,
        started_at TEXT NOT NULL,
        seconds DOUBLE PRECISION,
        qps DOUBLE PRECISION,
        tps DOUBLE PRECISION,
        lat_avg_ms DOUBLE PRECISION,
        lat_p95_ms DOUBLE PRECISION,
        lat_p99_ms DOUBLE PRECISION,
        errors BIGINT,
        row_csv TEXT NOT NULL
    );
    CREATE INDEX iterations_by_cell ON iterations (cell_id, ord);
    CREATE TABLE samples (
        iteration_id BIGINT NOT NULL REFERENCES iterations (id) ON DELETE CASCADE,
        second BIGINT NOT NULL,
        qps DOUBLE PRECISION,
        tps DOUBLE PRECISION,
        lat_p95_ms DOUBLE PRECISION,
        errors_ps DOUBLE PRECISION,
        values_json TEXT NOT NULL
    );
    CREATE INDEX samples_by_iteration ON samples (iteration_id, second);
    CREATE TABLE counters (
        iteration_id BIGINT NOT NULL REFERENCES iterations (id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        delta BIGINT NOT NULL
    );
    CREATE INDEX counters_by_iteration ON counters (iteration_id);",
    )],
    // 2: every results.csv column typed, each cell's server image and version, the run's
    // parameters; views and units for analysts (`schema_v2`).
    &[
        Step::Rust(schema_v2::names_are_free),
        Step::AddColumns("iterations", schema_v2::ITERATION_COLUMNS),
        Step::AddColumns("cells", schema_v2::CELL_COLUMNS),
        Step::AddColumns("runs", schema_v2::RUN_COLUMNS),
        Step::Sql(schema_v2::SQL),
        Step::Rust(schema_v2::backfill),
    ],
    // 3: TPC-C's rates per minute (`schema_v3`).
    &[
        Step::AddColumns("iterations", schema_v3::ITERATION_COLUMNS),
        Step::Sql(schema_v3::SQL),
    ],
];

/// The version this rmatrix writes.
pub(crate) const VERSION: i64 = MIGRATIONS.len() as i64;

/// Every table rmatrix reads or writes.
pub(crate) const TABLES: [&str; 9] = [
    "rmatrix_schema",
    "environments",
    "runs",
    "cells",
    "iterations",
    "samples",
    "counters",
    "run_params",
    "units",
];

/// The views rmatrix makes for people and dashboards. rmatrix reads none and writes none,
/// so whatever a store holds under their names is never run by rmatrix.
pub(crate) const VIEWS: [&str; 2] = ["iteration_metrics", "cell_runs"];

/// Before a statement touches the store's rows: each of `TABLES` that is there must be a
/// table of its own, without triggers (a view can be an endless recursion, a trigger would
/// run the file's SQL on rmatrix's writes). To read, the store must be one rmatrix made, at
/// this version; to write, an empty one is made by `migrate`.
pub(crate) fn check(db: &mut dyn Db, access: Access) -> Result<()> {
    let objects = db.objects(&TABLES)?;
    if let Some((name, what)) = objects.iter().find(|(_, what)| what != "table") {
        let is = match what.as_str() {
            "trigger" => format!("`{name}` has a trigger"),
            other => format!("`{name}` is a {other}"),
        };
        bail!(
            "{is}, where rmatrix keeps a plain table: rmatrix reads and writes only plain \
             tables without triggers (its views, {}, are for people: rmatrix reads none)",
            VIEWS.join(" and ")
        );
    }
    if access == Access::Write {
        return Ok(());
    }
    if !objects.iter().any(|(name, _)| name == "rmatrix_schema") {
        bail!("no runs stored yet (no table rmatrix_schema): `rmatrix store import` makes a store");
    }
    match current(db)? {
        at if at > VERSION => bail!(newer(at)),
        at if at < VERSION => bail!(
            "the store is at schema version {at}, older than this rmatrix reads ({VERSION}): \
             `rmatrix store import` with this rmatrix migrates it"
        ),
        _ => Ok(()),
    }
}

fn newer(at: i64) -> String {
    format!(
        "the store is at schema version {at}, newer than this rmatrix writes ({VERSION}): \
         use a newer rmatrix"
    )
}

/// Bring the store to `VERSION`, creating it when empty; returns the migrations applied.
pub(crate) fn migrate(db: &mut dyn Db) -> Result<Vec<i64>> {
    db.batch(
        "CREATE TABLE IF NOT EXISTS rmatrix_schema (
            version BIGINT NOT NULL PRIMARY KEY,
            applied_at TEXT NOT NULL
        )",
    )?;
    let at = current(db)?;
    if at > VERSION {
        bail!(newer(at));
    }
    let mut applied = Vec::new();
    for (i, steps) in MIGRATIONS.iter().enumerate().skip(at as usize) {
        let version = i as i64 + 1;
        db.batch("BEGIN")?;
        let step = (|| -> Result<()> {
            for step in *steps {
                run(db, step)?;
            }
            db.execute(
                "INSERT INTO rmatrix_schema (version, applied_at) VALUES ($1, $2)",
                &[Val::Int(version), now().into()],
            )?;
            db.batch("COMMIT")
        })();
        if let Err(e) = step {
            let _ = db.batch("ROLLBACK");
            return Err(e.context(format!("migrating the store to schema version {version}")));
        }
        applied.push(version);
    }
    Ok(applied)
}

fn run(db: &mut dyn Db, step: &Step) -> Result<()> {
    match step {
        Step::Sql(sql) => db.batch(&sql.replace("{id}", db.id_column())),
        Step::AddColumns(table, columns) => {
            for (name, ty) in *columns {
                db.batch(&format!("ALTER TABLE {table} ADD COLUMN {name} {ty}"))?;
            }
            Ok(())
        }
        Step::Rust(f) => f(db),
    }
}

/// The version the store is at (0: empty).
pub(crate) fn current(db: &mut dyn Db) -> Result<i64> {
    let rows = db.query("SELECT MAX(version) FROM rmatrix_schema", &[])?;
    Ok(rows
        .first()
        .and_then(|r| r.first())
        .and_then(Val::int)
        .unwrap_or(0))
}

pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sqlite::Sqlite;

    #[test]
    fn a_new_store_is_migrated_once_and_a_newer_one_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let mut db = Sqlite::open(&tmp.path().join("s.db"), Access::Write).unwrap();
        assert_eq!(migrate(&mut db).unwrap(), (1..=VERSION).collect::<Vec<_>>());
        assert!(migrate(&mut db).unwrap().is_empty());
        assert_eq!(current(&mut db).unwrap(), VERSION);
        db.execute(
            "INSERT INTO rmatrix_schema (version, applied_at) VALUES ($1, $2)",
            &[Val::Int(VERSION + 1), now().into()],
        )
        .unwrap();
        let e = migrate(&mut db).unwrap_err().to_string();
        assert!(e.contains("newer than this rmatrix writes"), "{e}");
    }
}
