//! Stores made hostile by hand: each is refused quickly, with exit code 2 and a message that
//! says what is wrong, never read for minutes or into gigabytes.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::*;

const BASE: &str = "tests/fixtures/compare/base";

/// A store holding one run (tests/fixtures/compare/base), then `sql` run on it as any
/// program could.
fn store_with(tmp: &Path, sql: &str) -> Location {
    let db = tmp.join("s.db");
    Store::open(&Location::Sqlite(db.clone()))
        .unwrap()
        .import(Path::new(BASE))
        .unwrap();
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(sql)
        .unwrap();
    Location::Sqlite(db)
}

/// Every way of reading its runs (and `store list` when `list`) fails at once as bad
/// input; the messages.
fn refusals(loc: &Location, list: bool) -> Vec<String> {
    let start = Instant::now();
    let mut errors = vec![];
    let mut read = |r: Result<()>| {
        let e = r.unwrap_err();
        assert!(bad_input(&e), "{e:#}");
        errors.push(format!("{e:#}"));
    };
    if list {
        read(Store::read(loc).and_then(|mut s| s.list(None).map(drop)));
    }
    read(Store::read(loc).and_then(|mut s| s.runs(None).map(drop)));
    let mut learned = crate::results::estimate::Learned::default();
    let matrix = crate::compare::input::load_run(Path::new(BASE))
        .unwrap()
        .matrix_name;
    read(Store::read(loc).and_then(|mut s| s.learn(&matrix, &mut learned)));
    let path = PathBuf::from(loc.label());
    read(load_runs(&[path], &[]).map(drop));
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    errors
}

/// A refusal with exit code 2 (a `StoreError` or a usage error in its chain).
fn bad_input(e: &anyhow::Error) -> bool {
    crate::error::error_kind(e) == crate::error::ErrorKind::BadInput
}

const ENDLESS: &str = "WITH RECURSIVE n(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM n) \
                       SELECT id, id AS version, '' AS applied_at, '' AS run_id, \
                       '' AS matrix_name, '' AS started_at, '' AS source FROM n";

#[test]
fn an_endless_view_where_a_table_belongs_is_refused_unread() {
    for table in ["runs", "rmatrix_schema"] {
        let tmp = tempfile::tempdir().unwrap();
        let loc = store_with(
            tmp.path(),
            &format!(
                "PRAGMA foreign_keys = OFF; DROP TABLE {table}; CREATE VIEW {table} AS {ENDLESS};"
            ),
        );
        for e in refusals(&loc, true) {
            assert!(
                e.contains(&format!(
                    "`{table}` is a view, where rmatrix keeps a plain table"
                )),
                "{e}"
            );
            assert!(e.starts_with("failed to open the store "), "{e}");
        }
        // Nor is it written into (`store import`, `run --store`).
        let e = Store::open(&loc).err().unwrap();
        assert!(bad_input(&e), "{e:#}");
    }
}

#[test]
fn a_trigger_on_a_table_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = store_with(
        tmp.path(),
        "CREATE TABLE log (x); CREATE TRIGGER t AFTER INSERT ON Iterations BEGIN \
         INSERT INTO log VALUES (1); END;",
    );
    for e in refusals(&loc, true) {
        assert!(e.contains("`iterations` has a trigger"), "{e}");
    }
    let e = format!("{:#}", Store::open(&loc).err().unwrap());
    assert!(e.contains("`iterations` has a trigger"), "{e}");
}

/// A manifest past manifest.json's cap is refused by its size, before it is loaded: padded
/// with spaces, it would still be valid JSON.
#[test]
fn a_value_over_its_cap_is_refused_unloaded() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = store_with(
        tmp.path(),
        "UPDATE runs SET manifest_json = manifest_json || \
         replace(hex(zeroblob(9000000)), '00', '  ');",
    );
    for e in refusals(&loc, false) {
        assert!(
            e.contains("its manifest_json is larger than 16 MiB, the most rmatrix reads of a manifest.json"),
            "{e}"
        );
        assert!(e.starts_with("failed to read the store "), "{e}");
    }
    // A name past its cap, in `store list` too.
    let tmp = tempfile::tempdir().unwrap();
    let loc = store_with(
        tmp.path(),
        "UPDATE runs SET run_id = replace(hex(zeroblob(40000)), '00', 'ab');",
    );
    for e in refusals(&loc, true) {
        assert!(e.contains("its run_id is larger than 64 KiB"), "{e}");
    }
}

/// A value past SQLite's own limit (64 MiB) is refused by SQLite itself where a query would
/// read it whole; rmatrix's queries never do (see above).
#[test]
fn sqlite_refuses_a_value_past_its_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = store_with(
        tmp.path(),
        "UPDATE runs SET matrix_yaml = hex(zeroblob(34000000));",
    );
    let Location::Sqlite(path) = &loc else {
        unreachable!()
    };
    let mut db = sqlite::Sqlite::open(path, Access::Read).unwrap();
    let e = db::Db::query(&mut db, "SELECT matrix_yaml FROM runs", &[]).unwrap_err();
    assert!(e.to_string().contains("a value larger than 64 MiB"), "{e}");
    // The store reads as usual otherwise: its one run.
    assert_eq!(Store::read(&loc).unwrap().runs(None).unwrap().len(), 1);
}

/// A FIFO, a device, a folder and (to read) a missing file are no store; a FIFO is not
/// opened (that would wait for a writer).
#[test]
fn what_is_no_file_is_no_store() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("fifo.db");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // Named where a run folder or store is read, a FIFO is refused, never waited on.
    assert!(Location::detect(&fifo).is_err());
    let cases = [
        (fifo, "a FIFO; a SQLite store is a regular file"),
        ("/dev/null".into(), "a character device"),
        (tmp.path().into(), "a folder"),
    ];
    for (path, want) in cases {
        for open in [Store::open, Store::read] {
            let e = open(&Location::Sqlite(path.clone())).err().unwrap();
            assert_eq!(
                crate::error::error_kind(&e),
                crate::error::ErrorKind::BadInput,
                "{e:#}"
            );
            assert!(e.to_string().contains(want), "{e}");
        }
    }
    let missing = Location::Sqlite(tmp.path().join("none.db"));
    let e = Store::read(&missing).err().unwrap().to_string();
    assert!(e.contains("no such file"), "{e}");
    assert!(!tmp.path().join("none.db").exists());
    // An empty file is a store to write, and to read one with no runs yet.
    let empty = tmp.path().join("empty.db");
    std::fs::write(&empty, "").unwrap();
    let e = format!("{:#}", Store::read(&Location::Sqlite(empty)).err().unwrap());
    assert!(e.contains("no runs stored yet"), "{e}");
}

/// A store damaged byte by byte (a few hundred bytes changed at random places, over and
/// over): each is read or refused, never a panic or a wait.
#[test]
fn a_damaged_store_file_is_read_or_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let Location::Sqlite(good) = store_with(tmp.path(), "PRAGMA journal_mode = DELETE;") else {
        unreachable!()
    };
    let bytes = std::fs::read(&good).unwrap();
    let path = tmp.path().join("damaged.db");
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let start = Instant::now();
    let mut refused = 0;
    for _ in 0..150 {
        let mut damaged = bytes.clone();
        for _ in 0..1 + next() % 8 {
            let at = (next() as usize) % damaged.len();
            damaged[at] = next() as u8;
        }
        std::fs::write(&path, &damaged).unwrap();
        refused += usize::from(read_sqlite(&path).is_err());
    }
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
    assert!(refused > 0, "no damage was noticed");
}

/// What a store holds under the names of rmatrix's views is never run by rmatrix: one
/// planted before version 2 stops the migration that would make the view (nothing written,
/// nothing of the file run); one planted after it (an endless view, a table with a trigger)
/// is neither read nor written.
#[test]
fn an_object_where_a_view_belongs_is_never_run() {
    let planted = format!(
        "CREATE TABLE log (x); CREATE VIEW iteration_metrics AS {ENDLESS}; \
         CREATE TRIGGER t INSTEAD OF INSERT ON iteration_metrics BEGIN \
         INSERT INTO log VALUES (1); END;"
    );
    let logged = |db: &Path| -> (i64, i64) {
        let c = rusqlite::Connection::open(db).unwrap();
        let one = |sql: &str| c.query_row(sql, [], |r| r.get(0)).unwrap();
        (
            one("SELECT COUNT(*) FROM log"),
            one("SELECT MAX(version) FROM rmatrix_schema"),
        )
    };
    // Before: a version-1 store (as rmatrix made it) with a view planted.
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("v1.db");
    let v1 = std::fs::read_to_string("tests/fixtures/store/v1-sqlite.sql").unwrap();
    (rusqlite::Connection::open(&db).unwrap())
        .execute_batch(&format!("{v1}\n{planted}"))
        .unwrap();
    let e = format!(
        "{:#}",
        Store::open(&Location::Sqlite(db.clone())).err().unwrap()
    );
    assert!(
        e.contains(
            "migrating the store to schema version 2: `iteration_metrics` is already \
             there (a view), where schema version 2 makes its own"
        ),
        "{e}"
    );
    assert_eq!(logged(&db), (0, 1), "the migration was rolled back");

    // After: the views of a version-2 store replaced, one by a table with a trigger.
    let tmp = tempfile::tempdir().unwrap();
    let loc = store_with(
        tmp.path(),
        &format!(
            "DROP VIEW iteration_metrics; DROP VIEW cell_runs; {planted} \
             CREATE TABLE cell_runs (x); CREATE TRIGGER u AFTER INSERT ON cell_runs BEGIN \
             INSERT INTO log VALUES (2); END;"
        ),
    );
    let start = Instant::now();
    let mut s = Store::open(&loc).unwrap();
    s.import(Path::new("tests/fixtures/compare/slower"))
        .unwrap();
    assert_eq!(s.runs(None).unwrap().len(), 2);
    assert_eq!(s.list(None).unwrap().len(), 2);
    assert!(start.elapsed() < Duration::from_secs(10));
    let Location::Sqlite(db) = loc else {
        unreachable!()
    };
    assert_eq!(logged(&db), (0, schema::VERSION));
}
