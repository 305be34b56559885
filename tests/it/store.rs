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
