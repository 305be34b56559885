//! The two databases a store lives in, behind one small interface: SQLite (one file, the
//! embedded default) and PostgreSQL (a team's server). The store's SQL is written once, in
//! the subset both speak, with `$1`-style parameters; SQLite gets them as `?1`.

use std::path::Path;

use anyhow::{Context, Result};

/// One value going in or coming out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl Val {
    pub(crate) fn text(&self) -> Option<&str> {
        match self {
            Val::Text(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn int(&self) -> Option<i64> {
        match self {
            Val::Int(i) => Some(*i),
            _ => None,
        }
    }
}

impl From<&str> for Val {
    fn from(s: &str) -> Val {
        Val::Text(s.to_string())
    }
}

impl From<String> for Val {
    fn from(s: String) -> Val {
        Val::Text(s)
    }
}

impl From<i64> for Val {
    fn from(i: i64) -> Val {
        Val::Int(i)
    }
}

impl From<Option<f64>> for Val {
    fn from(v: Option<f64>) -> Val {
        v.map_or(Val::Null, Val::Real)
    }
}

impl From<Option<u64>> for Val {
    fn from(v: Option<u64>) -> Val {
        // Counts beyond i64 do not occur; saturate rather than wrap if one did.
        v.map_or(Val::Null, |v| {
            Val::Int(i64::try_from(v).unwrap_or(i64::MAX))
        })
    }
}

impl From<Option<u32>> for Val {
    fn from(v: Option<u32>) -> Val {
        v.map_or(Val::Null, |v| Val::Int(i64::from(v)))
    }
}

/// What the store asks of a database.
pub(crate) trait Db {
    /// Statements without parameters or results (DDL, BEGIN, COMMIT).
    fn batch(&mut self, sql: &str) -> Result<()>;
    /// Rows of a query (or of `INSERT ... RETURNING`).
    fn query(&mut self, sql: &str, params: &[Val]) -> Result<Vec<Vec<Val>>>;
    /// A statement's affected rows.
    fn execute(&mut self, sql: &str, params: &[Val]) -> Result<u64>;
    /// The column type of an auto-numbered primary key, in this database's words.
    fn id_column(&self) -> &'static str;
}

/// A SQLite file (created when missing).
pub(crate) struct Sqlite(rusqlite::Connection);

impl Sqlite {
    pub(crate) fn open(path: &Path) -> Result<Sqlite> {
        let c = rusqlite::Connection::open(path)?;
        // A second writer (a nightly job beside an import) waits instead of failing at once.
        c.busy_timeout(std::time::Duration::from_secs(30))?;
        c.execute_batch("PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL;")?;
        Ok(Sqlite(c))
    }
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
        Ok(self.0.execute_batch(sql)?)
    }

    fn query(&mut self, sql: &str, params: &[Val]) -> Result<Vec<Vec<Val>>> {
        use rusqlite::types::ValueRef;
        let mut stmt = self.0.prepare_cached(&sqlite_sql(sql))?;
        let n = stmt.column_count();
        let mut rows = stmt.query(rusqlite::params_from_iter(sqlite_params(params)))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let mut vals = Vec::with_capacity(n);
            for i in 0..n {
                vals.push(match row.get_ref(i)? {
                    ValueRef::Null => Val::Null,
                    ValueRef::Integer(i) => Val::Int(i),
                    ValueRef::Real(f) => Val::Real(f),
                    ValueRef::Text(t) => Val::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(_) => anyhow::bail!("a binary value where the store keeps none"),
                });
            }
            out.push(vals);
        }
        Ok(out)
    }

    fn execute(&mut self, sql: &str, params: &[Val]) -> Result<u64> {
        let mut stmt = self.0.prepare_cached(&sqlite_sql(sql))?;
        Ok(stmt.execute(rusqlite::params_from_iter(sqlite_params(params)))? as u64)
    }

    fn id_column(&self) -> &'static str {
        // The rowid itself: numbered on insert.
        "INTEGER PRIMARY KEY"
    }
}

/// A PostgreSQL server. The `postgres` crate's blocking client runs a runtime of its own,
/// which panics inside rmatrix's: every call goes to a thread outside it.
pub(crate) struct Postgres(Option<postgres::Client>);

impl Postgres {
    /// Connect to `url`; without a password in it, `PGPASSWORD`'s (as libpq's tools do),
    /// so that none has to be on a command line.
    pub(crate) fn connect(url: &str) -> Result<Postgres> {
        let mut config: postgres::Config = url
            .parse()
            .map_err(|e| anyhow::anyhow!("not a PostgreSQL URL: {e}"))?;
        if config.get_password().is_none() {
            if let Some(p) = std::env::var_os("PGPASSWORD") {
                config.password(p.as_encoded_bytes());
            }
        }
        let client = off_runtime(move || config.connect(postgres::NoTls))?;
        Ok(Postgres(Some(client)))
    }

    fn with<T: Send>(
        &mut self,
        f: impl FnOnce(&mut postgres::Client) -> Result<T> + Send,
    ) -> Result<T> {
        let client = self
            .0
            .as_mut()
            .context("the store's connection is closed")?;
        off_runtime(move || f(client))
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        // Closing runs the client's runtime too.
        if let Some(c) = self.0.take() {
            off_runtime(move || drop(c));
        }
    }
}

/// Run `f` on a thread of its own, outside any tokio runtime.
fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| match s.spawn(f).join() {
        Ok(v) => v,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

impl postgres::types::ToSql for Val {
    fn to_sql(
        &self,
        ty: &postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>>
    {
        use postgres::types::Type;
        match self {
            Val::Null => Ok(postgres::types::IsNull::Yes),
            Val::Int(i) if *ty == Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
            Val::Int(i) if *ty == Type::FLOAT8 => (*i as f64).to_sql(ty, out),
            Val::Int(i) => i.to_sql(ty, out),
            Val::Real(f) => f.to_sql(ty, out),
            Val::Text(s) => s.to_sql(ty, out),
        }
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

fn pg_row(row: &postgres::Row) -> Result<Vec<Val>> {
    use postgres::types::Type;
    let mut vals = Vec::with_capacity(row.len());
    for (i, col) in row.columns().iter().enumerate() {
        let t = col.type_();
        let v = if *t == Type::INT8 {
            row.try_get::<_, Option<i64>>(i)?.map(Val::Int)
        } else if *t == Type::INT4 {
            row.try_get::<_, Option<i32>>(i)?
                .map(|v| Val::Int(i64::from(v)))
        } else if *t == Type::FLOAT8 {
            row.try_get::<_, Option<f64>>(i)?.map(Val::Real)
        } else {
            row.try_get::<_, Option<String>>(i)?.map(Val::Text)
        };
        vals.push(v.unwrap_or(Val::Null));
    }
    Ok(vals)
}

fn refs(params: &[Val]) -> Vec<&(dyn postgres::types::ToSql + Sync)> {
    params
        .iter()
        .map(|p| p as &(dyn postgres::types::ToSql + Sync))
        .collect()
}

impl Db for Postgres {
    fn batch(&mut self, sql: &str) -> Result<()> {
        self.with(|c| Ok(c.batch_execute(sql)?))
    }

    fn query(&mut self, sql: &str, params: &[Val]) -> Result<Vec<Vec<Val>>> {
        self.with(|c| {
            let rows = c.query(sql, &refs(params))?;
            rows.iter().map(pg_row).collect()
        })
    }

    fn execute(&mut self, sql: &str, params: &[Val]) -> Result<u64> {
        self.with(|c| Ok(c.execute(sql, &refs(params))?))
    }

    fn id_column(&self) -> &'static str {
        "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_speaks_the_store_s_sql() {
        let tmp = tempfile::tempdir().unwrap();
        let mut db = Sqlite::open(&tmp.path().join("s.db")).unwrap();
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
}
