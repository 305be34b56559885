//! The results store through the real binary, on a SQLite file and on the real PostgreSQL
//! server the test set-up starts (scripts/store-postgres.sh: 127.0.0.1:5439): a store gives
//! `history` and `compare --noise-from` the same answers as the folders it was filled from,
//! and `run --store` keeps a real run.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::rmatrix;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A folder of the compare fixtures that are runs of one matrix (`newer` is refused on
/// purpose: its format is from the future).
fn fixtures(tmp: &Path) -> String {
    let src = root().join("tests/fixtures/compare");
    let dst = tmp.join("runs");
    for run in [
        "base", "faster", "noisy", "other", "same", "slower", "small",
    ] {
        std::fs::create_dir_all(dst.join(run)).unwrap();
        for f in std::fs::read_dir(src.join(run)).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, dst.join(run).join(f.file_name().unwrap())).unwrap();
        }
    }
    dst.display().to_string()
}

/// The test server's URL (scripts/store-postgres.sh url) for database `db`.
fn pg_url(db: &str) -> String {
    let out = Command::new(root().join("scripts/store-postgres.sh"))
        .arg("url")
        .output()
        .expect("scripts/store-postgres.sh");
    let url = String::from_utf8(out.stdout).unwrap().trim().to_string();
    url.replace("/postgres", &format!("/{db}"))
}

/// A database of its own on the test server, dropped when the test ends.
struct PgDb {
    name: String,
}

impl PgDb {
    fn new(name: &str) -> PgDb {
        let admin = pg_url("postgres");
        let psql = |sql: &str| {
            let out = Command::new("psql")
                .args([admin.as_str(), "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
                .output()
                .expect("psql (postgresql-client)");
            assert!(
                out.status.success(),
                "{sql}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        psql(&format!("DROP DATABASE IF EXISTS {name}"));
        psql(&format!("CREATE DATABASE {name}"));
        PgDb { name: name.into() }
    }

    fn url(&self) -> String {
        pg_url(&self.name)
    }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        let _ = Command::new("psql")
            .args([
                pg_url("postgres").as_str(),
                "-q",
                "-c",
                &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
            ])
            .output();
    }
}

/// Fill `store` from the compare fixtures and check that it answers as the folders do.
fn answers_as_the_folders(store: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let fixtures = || fixtures(tmp.path());
    let out = rmatrix(&["store", "import", "--store", store, &fixtures()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let stored = out.stderr.matches("stored: ").count();
    assert!(stored >= 5, "{}", out.stderr);
    // Again: nothing changed, nothing is written.
    let again = rmatrix(&["store", "import", "--store", store, &fixtures()]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stderr.matches("already stored: ").count(), stored);

    let list = rmatrix(&["store", "list", "--store", store, "--format", "json"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    let listed: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), stored);

    // history: the same series, change points and Markdown.
    let from_folders = rmatrix(&["history", &fixtures(), "--format", "csv"]);
    let from_store = rmatrix(&["history", store, "--format", "csv"]);
    assert_eq!(from_folders.code, 0, "{}", from_folders.stderr);
    assert_eq!(from_store.code, 0, "{}", from_store.stderr);
    assert_eq!(from_store.stdout, from_folders.stdout);

    // compare --noise-from: the same noise learned, the same verdicts and exit code.
    let base = format!("{}/base", fixtures());
    let slower = format!("{}/slower", fixtures());
    let cmp = |noise: &str| {
        rmatrix(&[
            "compare",
            &base,
            &slower,
            "--noise-from",
            noise,
            "--format",
            "json",
        ])
    };
    let (a, b) = (cmp(&fixtures()), cmp(store));
    assert_eq!(b.code, a.code, "{}", b.stderr);
    let strip = |text: &str| {
        let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
        // Only where the noise came from differs.
        strip_noise_sources(&mut v);
        v
    };
    assert_eq!(strip(&b.stdout), strip(&a.stdout));
    // The noise really was learned, from the other runs of the cell.
    let b: serde_json::Value = serde_json::from_str(&b.stdout).unwrap();
    assert!(b[0]["changes"][0]["noise_runs"].as_u64() >= Some(3), "{b}");

    // A refused run is said, and keeps no other out (exit code 2).
    let newer = root().join("tests/fixtures/compare/newer");
    let out = rmatrix(&[
        "store",
        "import",
        "--store",
        store,
        newer.to_str().unwrap(),
        &base,
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("refused: ") && out.stderr.contains("format_version 99"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("already stored: "), "{}", out.stderr);
}

/// Drop `noise_runs`-like path lists, which name the folders or the store the noise was
/// learned from.
fn strip_noise_sources(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.retain(|k, _| !k.contains("path"));
            m.values_mut().for_each(strip_noise_sources);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_noise_sources),
        _ => {}
    }
}

#[test]
fn a_sqlite_store_answers_history_and_compare_as_its_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("runs.db");
    answers_as_the_folders(store.to_str().unwrap());
    // A folder given as the store is refused, with exit code 2.
    let out = rmatrix(&["store", "list", "--store", tmp.path().to_str().unwrap()]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("a SQLite store is a file"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_postgres_store_answers_history_and_compare_as_its_folders() {
    let db = PgDb::new("rmatrix_store_it");
    answers_as_the_folders(&db.url());
    // The password never reaches a message.
    let bad = db.url().replace("rmatrix-store-test", "wrong-password");
    let out = rmatrix(&["store", "list", "--store", &bad]);
    assert_ne!(out.code, 0);
    assert!(!out.stderr.contains("wrong-password"), "{}", out.stderr);
    assert!(
        out.stderr.contains("rmatrix:***@127.0.0.1:5439"),
        "{}",
        out.stderr
    );
    // Without a password in the URL, PGPASSWORD's: none has to be on a command line.
    let bare = db.url().replace(":rmatrix-store-test@", "@");
    let out = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args(["store", "list", "--store", &bare])
        .env("PGPASSWORD", "rmatrix-store-test")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("run(s) in postgres://rmatrix@"));
}

/// A real run (Redis, one deployment) kept in the store as it ends, found by its matrix.
#[test]
fn run_store_keeps_a_real_run() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("runs.db");
    let matrix = "name: store-run\nservers:\n  redis-7.0: {build: redis-7.0}\n\
                  workloads:\n  get: {redis: {test: get, keyspace: 1000}}\n\
                  concurrency: [2]\niterations: 2\nlength: 2000\n";
    let file = tmp.path().join("m.yaml");
    std::fs::write(&file, matrix).unwrap();
    let dir = tmp.path().join("store-run");
    let _guard = crate::common::Cleanup("store-run".into());
    let out = rmatrix(&[
        "run",
        file.to_str().unwrap(),
        "--quiet",
        "--out",
        dir.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("stored: "), "{}", out.stderr);
    let list = rmatrix(&[
        "store",
        "list",
        "--store",
        store.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let listed: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(listed[0]["matrix"], "store-run");
    assert_eq!(listed[0]["ok"], 2);
    assert_eq!(
        Path::new(listed[0]["source"].as_str().unwrap()),
        dir.canonicalize().unwrap()
    );
    let h = rmatrix(&["history", store.to_str().unwrap(), "--matrix", "store-run"]);
    assert_eq!(h.code, 0, "{}", h.stderr);
    let none = rmatrix(&["history", store.to_str().unwrap(), "--matrix", "other"]);
    assert_eq!(none.code, 2, "{}", none.stderr);
}

/// The runs docs/store.md's queries are tried on: three nights of a matrix with a parameter
/// and a failed iteration (hand-made), and a real run of three PostgreSQL versions.
fn analyst_runs() -> Vec<PathBuf> {
    let nightly = root().join("tests/fixtures/store/nightly");
    let mut runs: Vec<PathBuf> = ["2026-11-20", "2026-11-21", "2026-11-22"]
        .iter()
        .map(|day| nightly.join(format!("{day}T02-00-00-nightly")))
        .collect();
    runs.push(root().join("reports/examples/postgres-versions-2026-12-02"));
    runs
}

/// Each ```sql block of docs/store.md: one statement each.
fn doc_queries() -> Vec<String> {
    let doc = std::fs::read_to_string(root().join("docs/store.md")).unwrap();
    let mut queries = Vec::new();
    let mut block: Option<String> = None;
    for line in doc.lines() {
        match (&mut block, line.trim_start()) {
            (None, "```sql") => block = Some(String::new()),
            (Some(q), "```") => {
                queries.push(std::mem::take(q));
                block = None;
            }
            (Some(q), _) => {
                q.push_str(line);
                q.push('\n');
            }
            (None, _) => {}
        }
    }
    queries
}

/// One value of an answer as the databases are compared: a number where it reads as one,
/// and NULL as an empty text (psql's CSV writes both alike).
#[derive(Debug, Clone)]
enum Cell {
    Num(f64),
    Text(String),
}

impl Cell {
    fn of_text(s: &str) -> Cell {
        s.parse().map_or_else(|_| Cell::Text(s.into()), Cell::Num)
    }

    fn key(&self) -> String {
        match self {
            Cell::Num(n) => format!("{n:.6e}"),
            Cell::Text(t) => t.clone(),
        }
    }

    fn same(&self, other: &Cell) -> bool {
        match (self, other) {
            (Cell::Num(a), Cell::Num(b)) => (a - b).abs() <= 1e-9 * a.abs().max(b.abs()),
            (Cell::Text(a), Cell::Text(b)) => a == b,
            _ => false,
        }
    }
}

/// `sql`'s rows in a SQLite database, sorted (ties in an ORDER BY may come in any order).
fn sqlite_answer(c: &rusqlite::Connection, sql: &str) -> Vec<Vec<Cell>> {
    use rusqlite::types::ValueRef;
    let mut s = c.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let n = s.column_count();
    let rows = s
        .query_map([], |r| {
            (0..n)
                .map(|i| {
                    Ok(match r.get_ref(i)? {
                        ValueRef::Null => Cell::Text(String::new()),
                        ValueRef::Integer(i) => Cell::Num(i as f64),
                        ValueRef::Real(f) => Cell::Num(f),
                        ValueRef::Text(t) => Cell::of_text(&String::from_utf8_lossy(t)),
                        ValueRef::Blob(_) => panic!("a blob"),
                    })
                })
                .collect()
        })
        .unwrap();
    sorted(rows.map(Result::unwrap).collect())
}

/// `sql`'s rows on the PostgreSQL database at `url` (psql's CSV), sorted.
fn pg_answer(url: &str, sql: &str) -> Vec<Vec<Cell>> {
    let out = Command::new("psql")
        .args([url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "--csv", "-c", sql])
        .output()
        .expect("psql (postgresql-client)");
    assert!(
        out.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut csv = csv::Reader::from_reader(out.stdout.as_slice());
    let rows = csv
        .records()
        .map(|r| r.unwrap().iter().map(Cell::of_text).collect());
    sorted(rows.collect())
}

fn sorted(mut rows: Vec<Vec<Cell>>) -> Vec<Vec<Cell>> {
    rows.sort_by_cached_key(|r| r.iter().map(Cell::key).collect::<Vec<_>>());
    rows
}

fn assert_same(what: &str, sql: &str, got: &[Vec<Cell>], want: &[Vec<Cell>]) {
    let same = got.len() == want.len()
        && (got.iter().zip(want))
            .all(|(g, w)| g.len() == w.len() && g.iter().zip(w).all(|(a, b)| a.same(b)));
    assert!(same, "{what} answers\n{sql}\nwith {got:?}\nnot {want:?}");
}

/// A value of results.csv as the reference keeps it: a number where it reads as one, NULL
/// where it is empty.
fn csv_value(s: &str) -> rusqlite::types::Value {
    use rusqlite::types::Value;
    match (s.is_empty(), s.parse::<i64>(), s.parse::<f64>()) {
        (true, _, _) => Value::Null,
        (_, Ok(i), _) => Value::Integer(i),
        (_, _, Ok(f)) => Value::Real(f),
        _ => txt(s),
    }
}

fn txt(s: &str) -> rusqlite::types::Value {
    rusqlite::types::Value::Text(s.into())
}

/// What docs/store.md's queries read, built apart from rmatrix straight from the runs'
/// files: an in-memory SQLite database whose tables `iteration_metrics`, `cell_runs` and
/// `run_params` hold results.csv's rows and the manifests' facts, in the columns (names
/// only) of the store's views; `units` is copied from `store`, being data and no run's.
fn reference(runs: &[PathBuf], store: &rusqlite::Connection) -> rusqlite::Connection {
    use rusqlite::types::Value;
    let columns = |table: &str| -> Vec<String> {
        let s = store.prepare(&format!("SELECT * FROM {table}")).unwrap();
        s.column_names().map(str::to_string).collect()
    };
    let (metrics, cells) = (columns("iteration_metrics"), columns("cell_runs"));
    let r = rusqlite::Connection::open_in_memory().unwrap();
    for (table, cols) in [("iteration_metrics", &metrics), ("cell_runs", &cells)] {
        r.execute_batch(&format!("CREATE TABLE {table} ({})", cols.join(", ")))
            .unwrap();
    }
    r.execute_batch(
        "CREATE TABLE run_params (run_key, name, value); \
         CREATE TABLE units (column_name, unit, meaning)",
    )
    .unwrap();
    let mut units = store.prepare("SELECT * FROM units").unwrap();
    for u in units
        .query_map([], |u| Ok([u.get::<_, Value>(0)?, u.get(1)?, u.get(2)?]))
        .unwrap()
    {
        r.execute("INSERT INTO units VALUES (?1, ?2, ?3)", u.unwrap())
            .unwrap();
    }
    let insert = |table: &str, values: Vec<Value>| {
        let marks = vec!["?"; values.len()].join(", ");
        r.execute(
            &format!("INSERT INTO {table} VALUES ({marks})"),
            rusqlite::params_from_iter(values),
        )
        .unwrap();
    };
    let (mut cell_ids, mut iteration_id) = (std::collections::HashMap::new(), 0);
    for dir in runs {
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap())
                .unwrap();
        let text = |v: &serde_json::Value| v.as_str().map_or(Value::Null, txt);
        let matrix = std::fs::read_to_string(dir.join("matrix.yaml")).unwrap();
        let matrix = matrix
            .lines()
            .find_map(|l| l.strip_prefix("name: "))
            .unwrap();
        let (run_id, started) = (
            m["run_id"].as_str().unwrap(),
            m["started_at"].as_str().unwrap(),
        );
        let run_key = m["instance"]
            .as_str()
            .map_or_else(|| format!("{run_id}@{started}"), str::to_string);
        let params = match &m["params"] {
            serde_json::Value::Object(p) => p.clone(),
            _ => serde_json::Map::new(),
        };
        for (name, value) in &params {
            let value = value.as_str().unwrap().to_string();
            insert(
                "run_params",
                vec![run_key.clone().into(), name.clone().into(), value.into()],
            );
        }
        let run_fact = |c: &str| -> Option<Value> {
            Some(match c {
                "run_key" => run_key.clone().into(),
                "run_id" => txt(run_id),
                "matrix" => txt(matrix),
                "run_started_at" => txt(started),
                "params_json" => serde_json::Value::Object(params.clone()).to_string().into(),
                // As the environment of a manifest without them: empty, 0.
                "rmatrix_version" => txt(m["rmatrix_version"].as_str().unwrap_or("")),
                "cpu_model" | "kernel" => txt(m["host"][c].as_str().unwrap_or("")),
                "cpus" | "memory_bytes" => m["host"][c].as_i64().unwrap_or(0).into(),
                _ => return None,
            })
        };
        let mut results = csv::Reader::from_path(dir.join("results.csv")).unwrap();
        let header = results.headers().unwrap().clone();
        for row in results.records() {
            let row = row.unwrap();
            let get = |c: &str| header.iter().position(|h| h == c).map(|i| &row[i]);
            let key: Vec<String> = [
                "server",
                "config",
                "engine",
                "workload",
                "concurrency",
                "rate",
            ]
            .iter()
            .map(|c| get(c).unwrap_or_default().to_string())
            .collect();
            let known = cell_ids.len() as i64 + 1;
            let cell_id = *cell_ids.entry((run_key.clone(), key)).or_insert(known);
            iteration_id += 1;
            let value = |c: &str| match c {
                "cell_id" => Value::Integer(cell_id),
                "iteration_id" => Value::Integer(iteration_id),
                _ => run_fact(c).unwrap_or_else(|| get(c).map_or(Value::Null, csv_value)),
            };
            insert(
                "iteration_metrics",
                metrics.iter().map(|c| value(c)).collect(),
            );
            if cell_id == known {
                let (server, config) = (get("server").unwrap(), get("config").unwrap());
                let image = &m["images"][server];
                let deployment = (m["deployments"].as_array().into_iter().flatten())
                    .find(|d| d["server"] == server && d["config"] == config);
                let cell = |c: &str| match c {
                    "server_image" => text(&image["reference"]),
                    "server_image_id" => text(&image["id"]),
                    "server_version" => deployment.map_or(Value::Null, |d| text(&d["version"])),
                    _ => value(c),
                };
                insert("cell_runs", cells.iter().map(|c| cell(c)).collect());
            }
        }
    }
    r
}

/// Every query of docs/store.md answers rows, the same on the SQLite store, on the
/// PostgreSQL store and on `reference` (the runs' own files).
fn docs_queries_answer_as_the_runs(sqlite: &Path, pg: &str, runs: &[PathBuf]) {
    let store = rusqlite::Connection::open(sqlite).unwrap();
    let reference = reference(runs, &store);
    let queries = doc_queries();
    assert!((3..=8).contains(&queries.len()), "{queries:?}");
    for sql in &queries {
        let want = sqlite_answer(&reference, sql);
        assert!(!want.is_empty(), "no rows from the runs' files:\n{sql}");
        assert_same("the SQLite store", sql, &sqlite_answer(&store, sql), &want);
        assert_same("the PostgreSQL store", sql, &pg_answer(pg, sql), &want);
    }
}

/// docs/store.md's example queries, run on a SQLite store and a PostgreSQL store the same
/// runs were imported into, answer what the runs' results.csv and manifest.json say.
#[test]
fn the_docs_queries_answer_as_results_csv_on_sqlite_and_postgres() {
    let tmp = tempfile::tempdir().unwrap();
    let sqlite = tmp.path().join("runs.db");
    let pg = PgDb::new("rmatrix_store_docs");
    let runs = analyst_runs();
    for store in [sqlite.to_str().unwrap(), &pg.url()] {
        let mut args = vec!["store", "import", "--store", store];
        args.extend(runs.iter().map(|r| r.to_str().unwrap()));
        let out = rmatrix(&args);
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
    docs_queries_answer_as_the_runs(&sqlite, &pg.url(), &runs);
}

/// A store rmatrix made at schema version 1 (tests/fixtures/store: a SQLite file and a
/// PostgreSQL database, dumped) is refused to read as older, then migrated by an import,
/// which takes a new run too: the views then answer as the runs' files say.
#[test]
fn a_version_1_store_is_migrated_by_an_import_on_sqlite_and_postgres() {
    let tmp = tempfile::tempdir().unwrap();
    let sqlite = tmp.path().join("v1.db");
    let fixtures = root().join("tests/fixtures/store");
    let dump = std::fs::read_to_string(fixtures.join("v1-sqlite.sql")).unwrap();
    rusqlite::Connection::open(&sqlite)
        .unwrap()
        .execute_batch(&dump)
        .unwrap();
    let pg = PgDb::new("rmatrix_store_v1");
    let load = Command::new("psql")
        .args([pg.url().as_str(), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f"])
        .arg(fixtures.join("v1-postgres.sql"))
        .output()
        .expect("psql (postgresql-client)");
    assert!(
        load.status.success(),
        "{}",
        String::from_utf8_lossy(&load.stderr)
    );
    // The runs the dumps hold, and one more.
    let mut runs = analyst_runs();
    runs.insert(3, root().join("tests/fixtures/compare/base"));
    for store in [sqlite.to_str().unwrap(), &pg.url()] {
        let list = rmatrix(&["store", "list", "--store", store]);
        assert_eq!(list.code, 2, "{}", list.stderr);
        assert!(
            list.stderr
                .contains("schema version 1, older than this rmatrix reads (3)"),
            "{}",
            list.stderr
        );
        let mut args = vec!["store", "import", "--store", store];
        args.extend(runs.iter().map(|r| r.to_str().unwrap()));
        let out = rmatrix(&args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(
            out.stderr.matches("already stored: ").count(),
            4,
            "{}",
            out.stderr
        );
        let list = rmatrix(&["store", "list", "--store", store, "--format", "json"]);
        let listed: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
        assert_eq!(listed.as_array().map(Vec::len), Some(runs.len()));
    }
    docs_queries_answer_as_the_runs(&sqlite, &pg.url(), &runs);
}
