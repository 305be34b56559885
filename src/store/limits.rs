//! How much of a store rmatrix reads, and how long it waits: a store is as untrusted as a run
//! directory (a file someone sent, a server someone runs), so every value it reads has the
//! cap the same thing has as a file, every answer a total, and every statement a deadline.
//! docs/store.md states them.

use std::time::Duration;

use super::db::Val;
use crate::input::file::{self, Cap};

/// The longest one statement may take: a store answers rmatrix's queries in well under a
/// second (a year of nightly runs: docs/store.md), so this is only ever an endless view or a
/// server that stopped answering.
pub(crate) const STATEMENT: Duration = Duration::from_secs(120);

/// The longest connecting to a PostgreSQL server may take (its handshake included) when the
/// URL sets no `connect_timeout`.
pub(crate) const CONNECT: Duration = Duration::from_secs(30);

/// The most text one query's answer may hold, all rows together: a year of nightly runs is
/// ~12 MB of stored rows.
pub(crate) const ANSWER_BYTES: u64 = 512 * MIB;

/// SQLite's own limit on any value (`SQLITE_LIMIT_LENGTH`): past the caps below, so that a
/// value no query reads whole is refused by SQLite before it is loaded.
pub(crate) const LONGEST_VALUE: i32 = 64 << 20;

const MIB: u64 = 1 << 20;

/// A run's manifest_json: as manifest.json.
pub(crate) const MANIFEST: Cap = file::MANIFEST;
/// An environment's env_json: part of a manifest.
pub(crate) const ENVIRONMENT: Cap = Cap {
    what: "a stored environment",
    bytes: 16 * MIB,
    stored: false,
};
/// One stored results.csv row (~1 KB, at most ~15 KB) or header.
pub(crate) const ROW: Cap = Cap {
    what: "a stored results.csv line",
    bytes: MIB,
    stored: false,
};
/// A run id, matrix name, date, digest or source folder.
pub(crate) const NAME: Cap = Cap {
    what: "a stored name",
    bytes: 64 << 10,
    stored: false,
};

/// A query's select list whose text columns are read only within their caps: a column over
/// its cap comes back as NULL, and one more column, last, names the first such column.
pub(crate) struct Columns<'a>(pub(crate) &'a [(&'a str, Option<Cap>)]);

impl Columns<'_> {
    /// `a, CASE WHEN octet_length(b) <= N THEN b END, ..., <the first over its cap>`.
    /// (octet_length reads a value's size, not the value.)
    pub(crate) fn sql(&self) -> String {
        let mut list: Vec<String> = (self.0.iter())
            .map(|(expr, cap)| match cap {
                Some(cap) => format!(
                    "CASE WHEN octet_length({expr}) <= {} THEN {expr} END",
                    cap.bytes
                ),
                None => expr.to_string(),
            })
            .collect();
        let over: String = (self.0.iter())
            .filter_map(|(expr, cap)| {
                let cap = cap.as_ref()?;
                Some(format!(
                    " WHEN octet_length({expr}) > {} THEN '{}'",
                    cap.bytes,
                    short(expr)
                ))
            })
            .collect();
        list.push(match over.is_empty() {
            true => "NULL".to_string(),
            false => format!("CASE{over} END"),
        });
        list.join(", ")
    }

    /// A row of the answer, checked: an error naming the first value over its cap.
    pub(crate) fn check<'r>(&self, row: &'r [Val]) -> Result<&'r [Val], String> {
        let (last, values) = row.split_last().ok_or("a row without columns")?;
        let Some(name) = last.text() else {
            return Ok(values);
        };
        let cap = (self.0.iter())
            .find(|(expr, _)| short(expr) == name)
            .and_then(|(_, cap)| *cap)
            .ok_or("an unknown column over its cap")?;
        Err(format!(
            "its {name} is larger than {}, the most rmatrix reads of {} (docs/store.md)",
            size(cap.bytes),
            cap.what
        ))
    }
}

/// `16 MiB`, `64 KiB`.
fn size(bytes: u64) -> String {
    match bytes % MIB {
        0 => format!("{} MiB", bytes / MIB),
        _ => format!("{} KiB", bytes >> 10),
    }
}

/// `r.manifest_json` -> `manifest_json`.
fn short(expr: &str) -> &str {
    expr.rsplit('.').next().unwrap_or(expr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_over_its_cap_is_selected_as_null_and_named() {
        let cols = Columns(&[("r.id", None), ("r.manifest_json", Some(MANIFEST))]);
        assert_eq!(
            cols.sql(),
            "r.id, CASE WHEN octet_length(r.manifest_json) <= 16777216 THEN r.manifest_json \
             END, CASE WHEN octet_length(r.manifest_json) > 16777216 THEN 'manifest_json' END"
        );
        let ok = [Val::Int(1), "{}".into(), Val::Null];
        assert_eq!(cols.check(&ok).unwrap(), &ok[..2]);
        let e = cols
            .check(&[Val::Int(1), Val::Null, "manifest_json".into()])
            .unwrap_err();
        assert_eq!(
            e,
            "its manifest_json is larger than 16 MiB, the most rmatrix reads of a manifest.json \
             (docs/store.md)"
        );
    }
}
