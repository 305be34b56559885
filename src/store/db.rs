//! The two databases a store lives in, behind one small interface: SQLite (one file, the
//! embedded default: `sqlite`) and PostgreSQL (a team's server: `postgres`). The store's SQL
//! is written once, in the subset both speak, with `$1`-style parameters.

use anyhow::Result;

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

/// The first two columns of each row as texts (a NULL or a number as empty): the shape of the
/// "which objects does the store hold" queries.
pub(crate) fn text_pairs(rows: Vec<Vec<Val>>) -> Vec<(String, String)> {
    rows.into_iter()
        .map(|r| {
            let text = |i: usize| r.get(i).and_then(Val::text).unwrap_or_default().to_string();
            (text(0), text(1))
        })
        .collect()
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

/// Whether a store is opened to read runs back (`history`, `list`: SQLite read-only, nothing
/// created or migrated) or to write them (`import`, `run --store`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
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
    /// What each of `tables` is, when there is one of that name: (name, `table`, `view`,
    /// `virtual table`...), and (name, `trigger`) for each trigger on one. The names are
    /// rmatrix's own (no quoting needed).
    fn objects(&mut self, tables: &[&str]) -> Result<Vec<(String, String)>>;
}

/// Rows per multi-row INSERT (samples run to thousands a run).
const BATCH: usize = 200;

/// `INSERT INTO <into> VALUES (...), (...)` in batches.
pub(crate) fn insert_many(db: &mut dyn Db, into: &str, rows: &[Vec<Val>]) -> Result<()> {
    for chunk in rows.chunks(BATCH) {
        let width = chunk.first().map_or(0, Vec::len);
        let mut sql = format!("INSERT INTO {into} VALUES ");
        let mut n = 0;
        for (i, _) in chunk.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            let marks: Vec<String> = (0..width)
                .map(|_| {
                    n += 1;
                    format!("${n}")
                })
                .collect();
            sql.push_str(&format!("({})", marks.join(", ")));
        }
        let params: Vec<Val> = chunk.iter().flatten().cloned().collect();
        db.execute(&sql, &params)?;
    }
    Ok(())
}

/// `$1, $2, ..., $n`.
pub(crate) fn placeholders(n: usize) -> String {
    (1..=n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `'a', 'b'`: rmatrix's own table names as an SQL list.
pub(crate) fn name_list(tables: &[&str]) -> String {
    (tables.iter())
        .map(|t| format!("'{t}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The text of an answer's values, counted against `limits::ANSWER_BYTES`.
pub(crate) fn answer_bytes(row: &[Val]) -> u64 {
    (row.iter())
        .map(|v| v.text().map_or(8, |t| t.len() as u64))
        .sum()
}
