//! A results store: runs kept in a database a team can query, back up and point a dashboard
//! at, beside the run directories (which stay the unit a user copies and reads). SQLite is
//! the embedded default (`--store runs.db`, one file); PostgreSQL a team's server
//! (`--store postgres://user@host/db`, the password from the URL or `PGPASSWORD`). One
//! schema (`schema`), migrated on open; `import` writes a run directory into it, `load`
//! reads runs back as `compare` and `history` read a folder.
//!
//! Wherever those commands take run directories they take a store too: a SQLite file
//! (recognised by its header) or a `postgres://` URL. A store is untrusted input: what
//! reading one may cost is bounded (`limits`), and one rmatrix will not read is a
//! `StoreError` (exit code 2).

pub(crate) mod db;
mod error;
mod facts;
pub(crate) mod import;
pub(crate) mod limits;
pub(crate) mod load;
mod postgres;
pub(crate) mod schema;
mod schema_v2;
mod schema_v3;
pub(crate) mod sqlite;
mod typed;

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::compare::input::{self, Run};
use crate::error::UsageError;
use crate::input::file::FileError;
use db::Access;
pub(crate) use error::StoreError;
pub(crate) use import::Imported;

/// Where a store is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Location {
    /// `postgres://...` or `postgresql://...` is a server; anything else a SQLite file.
    pub(crate) fn parse(text: &str) -> Location {
        match text.starts_with("postgres://") || text.starts_with("postgresql://") {
            true => Location::Postgres(text.to_string()),
            false => Location::Sqlite(PathBuf::from(text)),
        }
    }

    /// A store among the paths `history` and `compare` take: a URL, or a file that is a
    /// SQLite database (a folder is run directories). A FIFO or a device is refused.
    pub(crate) fn detect(path: &Path) -> Result<Option<Location>, FileError> {
        let text = path.to_string_lossy();
        if let Location::Postgres(url) = Location::parse(&text) {
            return Ok(Some(Location::Postgres(url)));
        }
        if path.is_dir() {
            return Ok(None);
        }
        let sqlite = head(path)?.is_some_and(|h| h == SQLITE_HEADER);
        Ok(sqlite.then(|| Location::Sqlite(path.into())))
    }

    /// For messages: the file, or the URL without its password.
    pub(crate) fn label(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Postgres(url) => without_password(url),
        }
    }
}

const SQLITE_HEADER: &[u8] = b"SQLite format 3\0";

/// The first bytes of the file at `path`, `None` when there is none; a FIFO or a device is
/// refused without waiting on it.
fn head(path: &Path) -> Result<Option<Vec<u8>>, FileError> {
    match crate::input::file::head(path, crate::input::file::STORE_HEADER) {
        Ok(h) => Ok(Some(h)),
        Err(e) if e.is_missing() => Ok(None),
        Err(e) => Err(e),
    }
}

/// A file with content that is not a SQLite database (an empty file becomes a store).
fn is_other_file(path: &Path) -> Result<bool, FileError> {
    Ok(head(path)?.is_some_and(|h| !h.is_empty() && h != SQLITE_HEADER))
}

/// What is at a SQLite store's path when it cannot be one: a folder, a FIFO, a device, a
/// file of something else, or (to read) nothing. `shown` is the path as messages show it.
fn refuse_sqlite_path(path: &Path, shown: &str, access: Access) -> Result<(), UsageError> {
    use std::os::unix::fs::FileTypeExt as _;
    let Ok(meta) = std::fs::metadata(path) else {
        return match access {
            Access::Write => Ok(()), // a new store
            Access::Read => Err(UsageError(format!(
                "--store {shown}: no such file; `rmatrix store import` makes a store"
            ))),
        };
    };
    let t = meta.file_type();
    let kind = match () {
        _ if t.is_dir() => {
            return Err(UsageError(format!(
                "--store {shown}: a folder; a SQLite store is a file (e.g. runs.db)"
            )))
        }
        _ if t.is_file() => None,
        _ if t.is_fifo() => Some("a FIFO"),
        _ if t.is_char_device() => Some("a character device"),
        _ if t.is_block_device() => Some("a block device"),
        _ if t.is_socket() => Some("a socket"),
        _ => Some("not a plain file"),
    };
    if let Some(kind) = kind {
        return Err(UsageError(format!(
            "--store {shown}: {kind}; a SQLite store is a regular file (e.g. runs.db)"
        )));
    }
    if is_other_file(path).map_err(|e| UsageError(format!("--store {shown}: {e}")))? {
        return Err(UsageError(format!(
            "--store {shown}: not a SQLite database; give a store made by rmatrix or the name \
             of a new file"
        )));
    }
    Ok(())
}

/// `postgres://user:secret@host/db?password=secret` -> `postgres://user:***@host/db?password=***`:
/// libpq takes a password in the authority and as a query parameter alike.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) if user.contains(':') => {
            let name = user.split(':').next().unwrap_or_default();
            format!("{name}:***@{host}")
        }
        _ => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let masked: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if percent_decoded(key).eq_ignore_ascii_case("password") => {
                        format!("{key}=***")
                    }
                    _ => pair.to_string(),
                })
                .collect();
            format!("{path}?{}", masked.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// `key` with its `%XX` escapes decoded, as libpq reads a parameter's name.
fn percent_decoded(key: &str) -> String {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An open store, migrated to this rmatrix's schema.
pub(crate) struct Store {
    db: Box<dyn db::Db>,
    label: String,
}

impl Store {
    /// A store to write runs into: created when new, migrated to this rmatrix's schema.
    pub(crate) fn open(location: &Location) -> Result<Store> {
        Store::open_as(location, Access::Write)
    }

    /// A store to read runs from, as it is: a SQLite file read-only, nothing created.
    pub(crate) fn read(location: &Location) -> Result<Store> {
        Store::open_as(location, Access::Read)
    }

    fn open_as(location: &Location, access: Access) -> Result<Store> {
        let label = location.label();
        let shown = crate::escape::terminal(&label);
        if let Location::Sqlite(path) = location {
            refuse_sqlite_path(path, &shown, access)?;
        }
        let opened = (|| -> Result<Box<dyn db::Db>> {
            let mut db: Box<dyn db::Db> = match location {
                Location::Sqlite(path) => Box::new(sqlite::Sqlite::open(path, access)?),
                Location::Postgres(url) => Box::new(postgres::Postgres::connect(url)?),
            };
            schema::check(db.as_mut(), access)?;
            if access == Access::Write {
                schema::migrate(db.as_mut())?;
            }
            Ok(db)
        })();
        let db = opened.map_err(|source| StoreError::Open {
            store: shown,
            source,
        })?;
        Ok(Store { db, label })
    }

    /// A failure to read, with the store it is in.
    fn reading<T>(&self, r: Result<T>) -> Result<T> {
        r.map_err(|source| {
            StoreError::Read {
                store: crate::escape::terminal(&self.label),
                source,
            }
            .into()
        })
    }

    pub(crate) fn label(&self) -> &str {
        &self.label
    }

    /// Store one run directory.
    pub(crate) fn import(&mut self, dir: &Path) -> Result<Imported> {
        import::import_dir(self.db.as_mut(), dir)
    }

    /// The stored runs of `matrix` (all when None), in start order.
    pub(crate) fn runs(&mut self, matrix: Option<&str>) -> Result<Vec<Run>> {
        let r = load::runs(self.db.as_mut(), &self.label, matrix);
        self.reading(r)
    }

    /// Stored runs of `matrix` as a plan's estimate learns from them: each run's path (the
    /// store and run), manifest and rows.
    pub(crate) fn learn(
        &mut self,
        matrix: &str,
        learned: &mut crate::results::estimate::Learned,
    ) -> Result<()> {
        let label = self.label.clone();
        let r = load::each_run(self.db.as_mut(), &label, Some(matrix), |run, manifest| {
            let at = PathBuf::from(format!("{label}#{}", run.run_id));
            learned.add_run(&at, &manifest, &run.rows);
        });
        self.reading(r)
    }

    pub(crate) fn list(&mut self, matrix: Option<&str>) -> Result<Vec<load::Listed>> {
        let r = load::list(self.db.as_mut(), matrix);
        self.reading(r)
    }
}

/// The runs named by `paths`, in start order, each once: run directories, folders of them
/// and stores. Only the runs of `matrices` when given (from a store, only those are read).
pub(crate) fn load_runs(paths: &[PathBuf], matrices: &[String]) -> Result<Vec<Run>> {
    let runs = load_runs_of(paths, matrices)?;
    if matrices.is_empty() {
        return Ok(runs);
    }
    let kept: Vec<Run> = (runs.into_iter())
        .filter(|r| matrices.contains(&r.matrix_name))
        .collect();
    if kept.is_empty() {
        return Err(UsageError(format!(
            "no run of matrix {} in the runs given",
            crate::escape::terminal(&matrices.join(", "))
        ))
        .into());
    }
    Ok(kept)
}

/// As `load_runs`, but a folder's runs of other matrices are kept (`compare --noise-from`
/// learns only from the cells it compares anyway); a store's are not read.
pub(crate) fn load_runs_of(paths: &[PathBuf], matrices: &[String]) -> Result<Vec<Run>> {
    let mut runs = Vec::new();
    let mut folders = Vec::new();
    for p in paths {
        match Location::detect(p)? {
            Some(loc) => {
                let mut store = Store::read(&loc)?;
                match matrices.is_empty() {
                    true => runs.extend(store.runs(None)?),
                    false => {
                        for m in matrices {
                            runs.extend(store.runs(Some(m))?);
                        }
                    }
                }
            }
            None => folders.push(p.clone()),
        }
    }
    if !folders.is_empty() {
        runs.extend(input::load_runs_unsorted(&folders)?);
    }
    Ok(input::in_order(runs, paths)?)
}

/// Everything `store list`, `history` and `plan --learn-from` read of the SQLite store at
/// `path`: the number of runs it holds, or why it is refused. Whatever the file holds, this
/// returns (fuzz/fuzz_targets/store_sqlite.rs holds it to that).
pub fn read_sqlite(path: &Path) -> Result<usize> {
    let mut store = Store::read(&Location::Sqlite(path.into()))?;
    let listed = store.list(None)?;
    let runs = store.runs(None)?;
    let mut learned = crate::results::estimate::Learned::default();
    for run in &runs {
        store.learn(&run.matrix_name, &mut learned)?;
    }
    Ok(listed.len().max(runs.len()))
}

#[cfg(test)]
mod hostile;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_location_is_a_url_or_a_file_and_its_label_hides_the_password() {
        assert_eq!(
            Location::parse("runs.db"),
            Location::Sqlite("runs.db".into())
        );
        let pg = Location::parse("postgres://rm:s3cret@127.0.0.1:5439/store?sslmode=disable");
        assert_eq!(
            pg.label(),
            "postgres://rm:***@127.0.0.1:5439/store?sslmode=disable"
        );
        assert_eq!(
            Location::parse("postgresql://rm@db/store").label(),
            "postgresql://rm@db/store"
        );
        // libpq reads a password from the query too, its name percent-decoded.
        assert_eq!(
            Location::parse("postgres://u@127.0.0.1:1/db?sslmode=disable&PassWord=hunter2").label(),
            "postgres://u@127.0.0.1:1/db?sslmode=disable&PassWord=***"
        );
        assert_eq!(
            Location::parse("postgres://u:a@h/d?%70assword=hunter2&password=x").label(),
            "postgres://u:***@h/d?%70assword=***&password=***"
        );
        // A folder of runs, or a file that is no SQLite database, is no store.
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(Location::detect(tmp.path()).unwrap(), None);
        std::fs::write(tmp.path().join("x.csv"), "a,b\n").unwrap();
        assert_eq!(Location::detect(&tmp.path().join("x.csv")).unwrap(), None);
        let db = tmp.path().join("s.db");
        Store::open(&Location::Sqlite(db.clone())).unwrap();
        assert_eq!(Location::detect(&db).unwrap(), Some(Location::Sqlite(db)));
    }

    /// A file that is something else is a mistake of the command line (exit 2), and stays
    /// as it was; an empty file becomes a store.
    #[test]
    fn a_file_that_is_no_sqlite_database_is_refused_as_usage() {
        let tmp = tempfile::tempdir().unwrap();
        let csv = tmp.path().join("results.csv");
        std::fs::write(&csv, "a,b\n").unwrap();
        let err = Store::open(&Location::Sqlite(csv.clone())).err().unwrap();
        assert_eq!(
            crate::error::error_kind(&err),
            crate::error::ErrorKind::BadInput,
            "{err:#}"
        );
        assert!(format!("{err}").contains("not a SQLite database"), "{err}");
        assert_eq!(std::fs::read_to_string(&csv).unwrap(), "a,b\n");
        let empty = tmp.path().join("new.db");
        std::fs::write(&empty, "").unwrap();
        Store::open(&Location::Sqlite(empty)).unwrap();
    }
}

#[cfg(test)]
mod round_trip {
    use super::*;
    use crate::compare::input::load_run;

    fn sqlite(dir: &Path) -> Store {
        Store::open(&Location::Sqlite(dir.join("s.db"))).unwrap()
    }

    fn same(a: &Run, b: &Run) {
        assert_eq!(
            (&a.run_id, &a.instance, &a.started_at),
            (&b.run_id, &b.instance, &b.started_at)
        );
        assert_eq!(
            (&a.report_metric, &a.matrix_name),
            (&b.report_metric, &b.matrix_name)
        );
        assert_eq!(a.rows, b.rows);
        assert_eq!(a.columns, b.columns);
        assert_eq!(a.env, b.env);
    }

    /// A run read back from the store is the run its folder holds: every row, the columns its
    /// results.csv had, its environment; its samples and counters are in their tables.
    #[test]
    fn a_stored_run_reads_back_as_its_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = sqlite(tmp.path());
        let dir = Path::new("reports/examples/postgres-versions-2026-12-02");
        assert_eq!(s.import(dir).unwrap(), Imported::New);
        assert_eq!(s.import(dir).unwrap(), Imported::Unchanged);
        let folder = load_run(dir).unwrap();
        let stored = s.runs(Some(&folder.matrix_name)).unwrap();
        assert_eq!(stored.len(), 1);
        same(&stored[0], &folder);
        assert!(s.runs(Some("another")).unwrap().is_empty());
        let count = |s: &mut Store, table: &str| {
            let rows =
                s.db.query(&format!("SELECT COUNT(*) FROM {table}"), &[])
                    .unwrap();
            rows[0][0].int().unwrap()
        };
        let sample_lines = std::fs::read_to_string(dir.join("samples.csv"))
            .unwrap()
            .lines()
            .count() as i64
            - 1;
        assert_eq!(count(&mut s, "samples"), sample_lines);
        let counters = crate::results::counters::read(&dir.join("counters.csv")).unwrap();
        let deltas: usize = counters.values().map(|c| c.len()).sum();
        assert_eq!(count(&mut s, "counters"), deltas as i64);
        assert_eq!(count(&mut s, "iterations"), folder.rows.len() as i64);
        let listed = s.list(None).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].iterations, folder.rows.len() as i64);
    }

    /// A resumed run (more rows since it was stored) replaces its stored copy; the two
    /// examples of one store come back in start order, each once beside their folders.
    #[test]
    fn a_changed_run_is_replaced_and_runs_come_back_in_order_once() {
        let tmp = tempfile::tempdir().unwrap();
        let copy = tmp.path().join("run");
        std::fs::create_dir(&copy).unwrap();
        let src = Path::new("tests/fixtures/compare/base");
        for f in ["manifest.json", "matrix.yaml", "results.csv"] {
            std::fs::copy(src.join(f), copy.join(f)).unwrap();
        }
        let mut s = sqlite(tmp.path());
        assert_eq!(s.import(&copy).unwrap(), Imported::New);
        let results = std::fs::read_to_string(copy.join("results.csv")).unwrap();
        let last = results
            .lines()
            .nth(1)
            .unwrap()
            .replacen(",1,ok,", ",9,ok,", 1);
        assert!(last.contains(",9,ok,"), "{last}");
        std::fs::write(copy.join("results.csv"), format!("{results}{last}\n")).unwrap();
        assert_eq!(s.import(&copy).unwrap(), Imported::Updated);
        assert_eq!(s.list(None).unwrap().len(), 1);
        assert_eq!(s.runs(None).unwrap()[0].rows, load_run(&copy).unwrap().rows);
        s.import(Path::new("tests/fixtures/compare/slower"))
            .unwrap();
        let db = tmp.path().join("s.db");
        let paths = [
            db.clone(),
            copy.clone(),
            "tests/fixtures/compare/slower".into(),
        ];
        let runs = load_runs(&paths, &[]).unwrap();
        assert_eq!(
            runs.len(),
            2,
            "a run in the store and in a folder counts once"
        );
        assert!(runs[0].started_at <= runs[1].started_at);
    }

    /// A store is as untrusted as a folder: a stored row that breaks results.csv's rules
    /// (a name no matrix can have, a negative rate, a line break) is refused with where it is.
    #[test]
    fn a_tampered_store_is_refused_like_a_tampered_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = sqlite(tmp.path());
        s.import(Path::new("tests/fixtures/compare/base")).unwrap();
        let rows =
            s.db.query("SELECT id, row_csv FROM iterations LIMIT 1", &[])
                .unwrap();
        let (id, line) = (rows[0][0].clone(), rows[0][1].text().unwrap().to_string());
        for bad in [
            line.replacen("mariadb-10.11", "mariadb\u{1b}[2J", 1),
            line.replacen("mariadb-10.11", "x\nserver", 1),
        ] {
            s.db.execute(
                "UPDATE iterations SET row_csv = $1 WHERE id = $2",
                &[bad.into(), id.clone()],
            )
            .unwrap();
            let e = format!("{:#}", s.runs(None).unwrap_err());
            assert!(
                e.contains(&tmp.path().join("s.db").display().to_string()),
                "{e}"
            );
        }
    }
}
