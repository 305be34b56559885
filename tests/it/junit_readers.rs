//! `compare --junit` read by two real JUnit readers, as CI systems read it: Debian's
//! python3-junitparser and junit2html (PyPI, its report model and the HTML it draws), through
//! tests/ref/read_junit.py. Each must see the cell in every case's name and no dot from the
//! data in a classname (Jenkins splits a classname at its last dot into package and class), a
//! regression as a failure, a change that cannot be told from noise as skipped with its
//! interval, and the counts the suites declare. A reader that is missing fails the test: run
//! scripts/setup.sh. No Docker: the runs are tests/fixtures/compare.

use std::path::{Path, PathBuf};

use crate::common::{python, rmatrix};

const REGRESSION: i32 = 4;
const READERS: [&str; 2] = ["junitparser", "junit2html"];
/// The case of the cell that regressed (fixture `slower`) and could not be told (`noisy`).
const CELL: &str = "mariadb-10.11 / default / InnoDB / write / c2 / qps";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// junit2html as scripts/setup.sh unpacks it (its pinned version, under target/readers/).
fn junit2html() -> PathBuf {
    let readers = root().join("target/readers");
    std::fs::read_dir(&readers)
        .into_iter()
        .flatten()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("junit2html-") && p.is_dir()
        })
        .unwrap_or_else(|| {
            panic!(
                "junit2html is missing under {}: run scripts/setup.sh",
                readers.display()
            )
        })
}

/// A copy of the fixture run `name` whose matrix is called `matrix`.
fn renamed(tmp: &Path, name: &str, matrix: &str) -> PathBuf {
    let from = root().join("tests/fixtures/compare").join(name);
    let to = tmp.join(name);
    std::fs::create_dir_all(&to).unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let entry = entry.unwrap();
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let text = text.replace("\nname: fixture\n", &format!("\nname: {matrix}\n"));
        std::fs::write(to.join(entry.file_name()), text).unwrap();
    }
    to
}

fn cases(suite: &serde_json::Value) -> &Vec<serde_json::Value> {
    suite["cases"].as_array().unwrap()
}

fn count(suite: &serde_json::Value, outcome: &str) -> usize {
    cases(suite)
        .iter()
        .filter(|c| c["outcome"] == outcome)
        .count()
}

#[test]
fn two_junit_readers_see_the_cells_the_regression_and_the_cannot_tell() {
    let tmp = tempfile::tempdir().unwrap();
    // Dots in the matrix's name, which Jenkins would read as packages.
    let slower = renamed(tmp.path(), "slower", "binlog.v2.1");
    let noisy = renamed(tmp.path(), "noisy", "binlog.v2.1");
    let file = tmp.path().join("compare.xml");
    let (base, file_arg) = (
        root().join("tests/fixtures/compare/base"),
        file.to_str().unwrap(),
    );
    let (b, s, n) = (
        base.to_str().unwrap(),
        slower.to_str().unwrap(),
        noisy.to_str().unwrap(),
    );
    let out = rmatrix(&[
        "compare",
        b,
        s,
        n,
        "--assume-run-noise",
        "0",
        "--junit",
        file_arg,
    ]);
    assert_eq!(out.code, REGRESSION, "{}", out.stderr);
    let path = junit2html().into_os_string();
    let text = python::reference("read_junit.py", [&file], &[("PYTHONPATH", &path)]);
    let seen: serde_json::Value = serde_json::from_str(&text).unwrap();

    for reader in READERS {
        let suites = seen[reader].as_array().unwrap();
        assert_eq!(suites.len(), 2, "{reader}: one suite per candidate");
        for suite in suites {
            for case in cases(suite) {
                assert_eq!(case["classname"], "rmatrix.binlog_v2_1", "{reader}: {case}");
                let name = case["name"].as_str().unwrap();
                assert!(
                    name.starts_with("mariadb-10.11 / default / "),
                    "{reader}: {name}"
                );
            }
            // The counts the suite declares are the cases' outcomes.
            let tests = cases(suite).len();
            assert_eq!(suite["tests"], tests, "{reader}: {suite}");
            assert_eq!(
                suite["failures"],
                count(suite, "failed"),
                "{reader}: {suite}"
            );
            assert_eq!(
                suite["skipped"],
                count(suite, "skipped"),
                "{reader}: {suite}"
            );
            assert_eq!(suite["errors"], 0, "{reader}: {suite}");
        }
        let case = |suite: usize| {
            let found = cases(&suites[suite]).iter().find(|c| c["name"] == CELL);
            found
                .unwrap_or_else(|| panic!("{reader}: no case {CELL} in suite {suite}"))
                .clone()
        };
        let regressed = case(0);
        assert_eq!(regressed["outcome"], "failed", "{reader}: {regressed}");
        assert!(
            regressed["message"]
                .as_str()
                .unwrap()
                .starts_with("qps regressed -20.00%"),
            "{reader}: {regressed}"
        );
        let cannot_tell = case(1);
        assert_eq!(cannot_tell["outcome"], "skipped", "{reader}: {cannot_tell}");
        assert_eq!(
            cannot_tell["message"],
            "cannot tell: qps -12.61% (95% interval -37.48% to +22.14%), threshold 5%",
            "{reader}"
        );
        assert_eq!(count(&suites[0], "failed"), 1, "{reader}");
        assert_eq!(count(&suites[1], "failed"), 0, "{reader}");
    }
    // Both readers read the same cases the same way.
    assert_eq!(seen["junitparser"], seen["junit2html"]);
    // junit2html's HTML report names the failure and the cannot-tell.
    let html = seen["junit2html_html"].as_str().unwrap();
    assert!(html.contains("qps regressed -20.00%") && html.contains("cannot tell: qps"));
}
