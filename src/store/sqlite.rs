//! A store in a SQLite file, opened as untrusted input: read-only when reading, with no
//! trust in its schema (`trusted_schema=OFF`, defensive mode), SQLite's value limit, and a
//! progress handler that stops a statement past its deadline (an endless recursive view
//! where a table belongs would otherwise never answer).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use rusqlite::{Connection, OpenFlags};

use super::db::{answer_bytes, name_list, Access, Db, Val};
use super::limits;

/// A SQLite file (created when missing, when opened to write).
pub(crate) struct Sqlite {
    c: Connection,
    /// When the running statement must have finished; the progress handler reads it.
    deadline: Arc<Mutex<Instant>>,
    limit: Duration,
}

/// SQLite's virtual machine steps between two looks at the clock (well under a millisecond).
const STEPS: i32 = 10_000;

impl Sqlite {
    pub(crate) fn open(path: &Path, access: Access) -> Result<Sqlite> {
        Sqlite::open_within(path, access, limits::STATEMENT)
    }

    /// `open`, each statement stopped after `limit`.
    pub(crate) fn open_within(path: &Path, access: Access, limit: Duration) -> Result<Sqlite> {
        let flags = match access {
            Access::Read => OpenFlags::SQLITE_OPEN_READ_ONLY,
            Access::Write => OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        } | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut c = Connection::open_with_flags(path, flags)?;
        // Functions and virtual tables named in the file's schema do not run; the schema
        // cannot be written around SQLite's checks.
        c.execute_batch("PRAGMA trusted_schema = OFF")?;
        c.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
        c.set_limit(
            rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH,
            limits::LONGEST_VALUE,
        )?;
        // A second writer (a nightly job beside an import) waits instead of failing at once.
        c.busy_timeout(Duration::from_secs(30))?;
        let deadline = Arc::new(Mutex::new(Instant::now() + limit));
        let watched = Arc::clone(&deadline);
        c.progress_handler(
            STEPS,
            Some(move || watched.lock().is_ok_and(|d| Instant::now() > *d)),
        )?;
        let mut db = Sqlite { c, deadline, limit };
        if access == Access::Write {
            db.batch("PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL;")?;
        }
        Ok(db)
    }

    /// The next statement's deadline starts now.
    fn arm(&self) {
        if let Ok(mut d) = self.deadline.lock() {
            *d = Instant::now() + self.limit;
        }
    }

    /// SQLite's error, or the deadline's when that is what stopped the statement.
    fn failure(&self, e: rusqlite::Error) -> anyhow::Error {
        let late = self.deadline.lock().is_ok_and(|d| Instant::now() > *d);
        let code = e.sqlite_error_code();
        if code == Some(rusqlite::ErrorCode::OperationInterrupted) && late {
            return anyhow::anyhow!(
                "a statement ran longer than {} s, the most rmatrix waits (a view, or a table \
                 far larger than rmatrix writes?)",
                self.limit.as_secs_f64()
            );
        }
        if code == Some(rusqlite::ErrorCode::TooBig) {
            return anyhow::anyhow!(
                "a value larger than {} MiB, the most rmatrix reads of any (docs/store.md)",
                limits::LONGEST_VALUE >> 20
            );
        }
        e.into()
    }

    fn rows(&self, sql: &str, params: &[Val]) -> Result<Vec<Vec<Val>>> {
        let fail = |e| self.failure(e);
        let mut stmt = self.c.prepare_cached(&sqlite_sql(sql)).map_err(fail)?;
        let n = stmt.column_count();
        let mut rows =
            (stmt.query(rusqlite::params_from_iter(sqlite_params(params)))).map_err(fail)?;
        let (mut out, mut bytes) = (Vec::new(), 0u64);
        while let Some(row) = rows.next().map_err(fail)? {
            let mut vals = Vec::with_capacity(n);
            for i in 0..n {
                vals.push(value(row.get_ref(i).map_err(fail)?)?);
            }
            bytes += answer_bytes(&vals);
            if bytes > limits::ANSWER_BYTES {
                bail!(
                    "an answer larger than {} MiB, the most rmatrix reads of one query \
                     (docs/store.md)",
                    limits::ANSWER_BYTES >> 20
                );
            }
            out.push(vals);
        }
        Ok(out)
    }
}

fn value(v: rusqlite::types::ValueRef<'_>) -> Result<Val> {
    use rusqlite::types::ValueRef;
    Ok(match v {
        ValueRef::Null => Val::Null,
        ValueRef::Integer(i) => Val::Int(i),
        ValueRef::Real(f) => Val::Real(f),
        ValueRef::Text(t) => Val::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(_) => bail!("a binary value where the store keeps none"),
    })
}

/// `$1` -> `?1`: SQLite's numbered parameters (a `$` inside a string literal does not occur
/// in the store's SQL).
fn sqlite_sql(sql: &str) -> String {
    sql.replace('$', "?")
}

fn sqlite_params(params: &[Val]) -> Vec<rusqlite::types::Value> {
    use rusqlite::types::Value;
    (params.iter())
        .map(|p| match p {
            Val::Null => Value::Null,
            Val::Int(i) => Value::Integer(*i),
            Val::Real(f) => Value::Real(*f),
            Val::Text(s) => Value::Text(s.clone()),
        })
        .collect()
}

impl Db for Sqlite {
    fn batch(&mut self, sql: &str) -> Result<()> {
        self.arm();
        self.c.execute_batch(sql).map_err(|e| self.failure(e))
    }

    fn query(&mut self, sql: &str, params: &[Val]) -> Result<Vec<Vec<Val>>> {
        self.arm();
        self.rows(sql, params)
    }

    fn execute(&mut self, sql: &str, params: &[Val]) -> Result<u64> {
        self.arm();
        let n = (self.c.prepare_cached(&sqlite_sql(sql)))
            .and_then(|mut s| s.execute(rusqlite::params_from_iter(sqlite_params(params))))
            .map_err(|e| self.failure(e))?;
        Ok(n as u64)
    }

    fn id_column(&self) -> &'static str {
        // The rowid itself: numbered on insert.
        "INTEGER PRIMARY KEY"
    }

    fn objects(&mut self, tables: &[&str]) -> Result<Vec<(String, String)>> {
        // SQLite's names are not case-sensitive: `RUNS` is `runs`.
        let names = name_list(tables);
        let rows = self.query(
            &format!(
                "SELECT lower(name), CASE WHEN type = 'table' \
                 AND upper(substr(sql, 1, 14)) = 'CREATE VIRTUAL' THEN 'virtual table' \
                 ELSE type END FROM sqlite_master \
                 WHERE type IN ('table', 'view') AND lower(name) IN ({names}) \
                 UNION ALL SELECT lower(tbl_name), 'trigger' FROM sqlite_master \
                 WHERE type = 'trigger' AND lower(tbl_name) IN ({names})"
            ),
            &[],
        )?;
        Ok(super::db::text_pairs(rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_speaks_the_store_s_sql() {
        let tmp = tempfile::tempdir().unwrap();
        let mut db = Sqlite::open(&tmp.path().join("s.db"), Access::Write).unwrap();
        let id = db.id_column();
        db.batch(&format!(
            "CREATE TABLE t (id {id}, name TEXT NOT NULL, n BIGINT, x DOUBLE PRECISION)"
        ))
        .unwrap();
        let got = db
            .query(
                "INSERT INTO t (name, n, x) VALUES ($1, $2, $3) RETURNING id",
                &["a".into(), Val::Int(7), Val::Null],
            )
            .unwrap();
        assert_eq!(got, vec![vec![Val::Int(1)]]);
        let rows = db
            .query("SELECT name, n, x FROM t WHERE id = $1", &[Val::Int(1)])
            .unwrap();
        assert_eq!(rows, vec![vec!["a".into(), Val::Int(7), Val::Null]]);
    }

    /// An endless query is stopped at its deadline with a message that says so, and the
    /// next statement has a deadline of its own.
    #[test]
    fn a_statement_past_its_deadline_is_stopped() {
        let tmp = tempfile::tempdir().unwrap();
        let limit = Duration::from_millis(300);
        let mut db = Sqlite::open_within(&tmp.path().join("s.db"), Access::Write, limit).unwrap();
        let start = Instant::now();
        let e = db
            .query(
                "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) \
                 SELECT COUNT(*) FROM n",
                &[],
            )
            .unwrap_err()
            .to_string();
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
        assert!(e.contains("ran longer than 0.3 s"), "{e}");
        assert_eq!(db.query("SELECT 1", &[]).unwrap(), vec![vec![Val::Int(1)]]);
    }

    /// A view, a virtual table and a trigger are told apart from a table.
    #[test]
    fn objects_say_what_each_name_is() {
        let tmp = tempfile::tempdir().unwrap();
        let mut db = Sqlite::open(&tmp.path().join("s.db"), Access::Write).unwrap();
        db.batch(
            "CREATE TABLE runs (id INTEGER); CREATE VIEW CELLS AS SELECT 1; \
             CREATE TABLE other (x); CREATE TRIGGER t AFTER INSERT ON runs BEGIN \
             INSERT INTO other VALUES (1); END;",
        )
        .unwrap();
        let mut got = db.objects(&["runs", "cells", "iterations"]).unwrap();
        got.sort();
        let want = [("cells", "view"), ("runs", "table"), ("runs", "trigger")];
        let want: Vec<(String, String)> = (want.iter())
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(got, want);
    }
}
