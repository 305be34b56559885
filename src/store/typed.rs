//! results.csv's columns as the store's typed columns, each under its results.csv name: a
//! cell's in `cells`, the rest in `iterations` (beside the line itself, `row_csv`, which
//! `history` and `compare` read back). An analyst's query reads p999 or client CPU as a
//! number, not out of a line of text.

use anyhow::{bail, Context as _, Result};
use serde_json::Value;

use super::db::Val;
use crate::model::ResultRow;

/// The columns of results.csv that name the cell: kept once per cell, in `cells`.
pub(crate) const CELL_COLUMNS: [&str; 7] = [
    "server",
    "config",
    "engine",
    "workload",
    "kind",
    "concurrency",
    "rate",
];

/// The columns of results.csv that `iterations` holds, in results.csv's order: all but the
/// cell's. Their names are rmatrix's own (`check::known_columns`), never a file's.
pub(crate) fn iteration_columns() -> Vec<String> {
    (crate::results::check::known_columns().iter())
        .filter(|c| !CELL_COLUMNS.contains(c))
        .map(str::to_string)
        .collect()
}

/// The values of `columns` in `row`, typed as results.csv's columns are: a whole number, a
/// real, a text, or NULL where the row has none.
pub(crate) fn values(row: &ResultRow, columns: &[impl AsRef<str>]) -> Result<Vec<Val>> {
    let Value::Object(fields) = serde_json::to_value(row)? else {
        bail!("invariant: a results.csv row is a record");
    };
    (columns.iter())
        .map(|c| {
            let c = c.as_ref();
            let v = (fields.get(c)).with_context(|| format!("results.csv has no column `{c}`"))?;
            Ok(value(v))
        })
        .collect()
}

fn value(v: &Value) -> Val {
    match v {
        Value::Null => Val::Null,
        // A count past i64 does not occur; saturate rather than store a real where a whole
        // number belongs.
        Value::Number(n) if n.is_u64() || n.is_i64() => Val::Int(n.as_i64().unwrap_or(i64::MAX)),
        Value::Number(n) => n.as_f64().map_or(Val::Null, Val::Real),
        Value::String(s) => Val::Text(s.clone()),
        other => Val::Text(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::db::Access;
    use crate::store::{schema, sqlite::Sqlite};

    /// A results.csv row with every column set: each number 1, each name a name.
    fn full_row() -> ResultRow {
        let header = crate::results::check::known_columns();
        let line: Vec<&str> = (header.iter())
            .map(|c| match c {
                "server" | "config" | "workload" => "a",
                "engine" => "InnoDB",
                "kind" => "oltp",
                "status" => "ok",
                "started_at" => "2026-12-01T00:00:00Z",
                _ => "1",
            })
            .collect();
        csv::StringRecord::from(line)
            .deserialize(Some(&header))
            .unwrap()
    }

    /// Each results.csv column is a column of `cells` or `iterations` of the store this
    /// rmatrix makes, of the type its values have: a column added to results.csv needs a
    /// migration that adds it to the store (and to the views and `units`).
    #[test]
    fn every_results_csv_column_is_a_typed_column_of_the_store() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("s.db");
        schema::migrate(&mut Sqlite::open(&file, Access::Write).unwrap()).unwrap();
        let c = rusqlite::Connection::open(&file).unwrap();
        let declared = |table: &str| -> Vec<(String, String)> {
            let mut s = c
                .prepare(&format!(
                    "SELECT name, type FROM pragma_table_info('{table}')"
                ))
                .unwrap();
            let rows = s.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
            rows.map(Result::unwrap).collect()
        };
        let (cells, iterations) = (declared("cells"), declared("iterations"));
        let columns = iteration_columns();
        let typed = values(&full_row(), &columns).unwrap();
        for (column, value) in columns.iter().zip(&typed) {
            let ty = (iterations.iter().find(|(n, _)| n == column))
                .map(|(_, t)| t.as_str())
                .unwrap_or_else(|| panic!("results.csv's `{column}` is no column of iterations"));
            let want = match value {
                Val::Int(_) => "BIGINT",
                Val::Real(_) => "DOUBLE PRECISION",
                Val::Text(_) => "TEXT",
                Val::Null => panic!("`{column}` has no value in a full row"),
            };
            assert_eq!(ty, want, "{column}");
        }
        let header = crate::results::check::known_columns();
        for column in CELL_COLUMNS {
            assert!(header.iter().any(|h| h == column), "{column}");
            assert!(cells.iter().any(|(n, _)| n == column), "{column}");
        }
        // The view has each under its results.csv name, and `units` says its unit.
        let view = c.prepare("SELECT * FROM iteration_metrics").unwrap();
        let view: Vec<&str> = view.column_names().collect();
        for column in header.iter() {
            assert!(view.contains(&column), "iteration_metrics lacks `{column}`");
            let unit: Option<String> = c
                .query_row(
                    "SELECT unit FROM units WHERE column_name = ?1",
                    [column],
                    |r| r.get(0),
                )
                .ok();
            assert!(
                unit.is_some_and(|u| !u.is_empty()),
                "no unit for `{column}`"
            );
        }
    }

    #[test]
    fn a_row_s_values_keep_their_types() {
        let mut row = full_row();
        row.queries = Some(u64::MAX);
        row.qps = None;
        row.error = "lost connection".into();
        let got = values(&row, &["queries", "qps", "seconds", "status", "error"]).unwrap();
        assert_eq!(
            got,
            [
                Val::Int(i64::MAX),
                Val::Null,
                Val::Real(1.0),
                "ok".into(),
                "lost connection".into()
            ]
        );
        let e = values(&row, &["nonesuch"]).unwrap_err().to_string();
        assert!(e.contains("no column `nonesuch`"), "{e}");
    }
}
