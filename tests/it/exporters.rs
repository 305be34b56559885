//! The exporters for other tools, through the real binary on stored runs and checked by
//! those tools' own checkers: `--format openmetrics` by `promtool check metrics` (Debian's
//! prometheus package), `compare --junit` by `xmllint` against rmatrix's XSD of Ant's JUnit
//! layout (tests/fixtures/junit/junit.xsd), `--format bmf` against Bencher's published shape.
//! No Docker: the runs are tests/fixtures/compare and reports/examples.

use crate::common::{rmatrix, Out};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const REGRESSION: i32 = 4;
const BAD_INPUT: i32 = 2;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> String {
    let p: PathBuf = root().join("tests/fixtures/compare").join(name);
    p.to_str().expect("utf-8 path").to_string()
}

/// `promtool check metrics` on `text`, panicking with its complaints.
fn promtool(text: &str) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian's prometheus package; scripts/setup.sh installs it)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool refused:\n{}{}\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `xmllint --schema junit.xsd` on `file`, panicking with its complaints.
fn xmllint(file: &Path) {
    let schema = root().join("tests/fixtures/junit/junit.xsd");
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&schema)
        .arg(file)
        .output()
        .expect("xmllint (Debian's libxml2-utils; scripts/setup.sh installs it)");
    assert!(
        out.status.success(),
        "xmllint refused:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn compare(candidate: &str, extra: &[&str]) -> Out {
    let (b, c) = (fixture("base"), fixture(candidate));
    let mut args = vec!["compare", b.as_str(), c.as_str(), "--assume-run-noise", "0"];
    args.extend_from_slice(extra);
    rmatrix(&args)
}

#[test]
fn openmetrics_of_stored_runs_and_of_a_compare_pass_promtool() {
    for example in [
        "binlog-2026-11-29",
        "open-loop-2026-11-30",
        "postgres-durability-2026-12-02",
    ] {
        let dir = root().join("reports/examples").join(example);
        let out = rmatrix(&["report", dir.to_str().unwrap(), "--format", "openmetrics"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stdout.ends_with("\n# EOF\n"));
        promtool(&out.stdout);
    }
    // The samples' labels and stamps are OpenMetrics' own: with another format, a usage error.
    let dir = root().join("reports/examples/binlog-2026-11-29");
    let out = rmatrix(&["report", dir.to_str().unwrap(), "--timestamps"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("with --format openmetrics"),
        "{}",
        out.stderr
    );
    let out = compare(
        "slower",
        &["--metric", "qps,lat_p99_ms", "--format", "openmetrics"],
    );
    assert_eq!(out.code, REGRESSION, "{}", out.stderr);
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("rmatrix_compare_verdict{")
                && l.contains("engine=\"InnoDB\",workload=\"write\"")
                && l.contains("metric=\"qps\"")
                && l.ends_with("verdict=\"regressed\"} 1")),
        "{}",
        out.stdout
    );
    promtool(&out.stdout);
}

#[test]
fn junit_beside_the_format_passes_the_schema_and_keeps_the_exit_code() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("compare.xml");
    let out = compare("slower", &["--junit", file.to_str().unwrap()]);
    assert_eq!(out.code, REGRESSION, "{}", out.stderr);
    // The Markdown is printed as without --junit.
    assert!(out.stdout.contains("regressed"), "{}", out.stdout);
    xmllint(&file);
    let xml = std::fs::read_to_string(&file).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    let cases = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .count();
    let failures = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .count();
    assert_eq!(suite.attribute("tests"), Some(cases.to_string().as_str()));
    assert_eq!(
        suite.attribute("failures"),
        Some(failures.to_string().as_str())
    );
    assert_eq!(failures, 1, "{xml}");
    let failed = doc
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .unwrap();
    let case = failed.parent().unwrap();
    assert_eq!(case.attribute("classname"), Some("rmatrix.fixture"));
    assert_eq!(
        case.attribute("name"),
        Some("mariadb-10.11 / default / InnoDB / write / c2 / qps")
    );

    // No regression: exit 0, every case passes.
    let out = compare(
        "same",
        &["--junit", file.to_str().unwrap(), "--format", "json"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    xmllint(&file);
    let xml = std::fs::read_to_string(&file).unwrap();
    assert!(
        xml.contains("failures=\"0\"") && !xml.contains("<failure"),
        "{xml}"
    );
}

#[test]
fn a_junit_file_that_cannot_be_written_is_exit_2() {
    let out = compare("slower", &["--junit", "/nonexistent-dir/compare.xml"]);
    assert_eq!(out.code, BAD_INPUT, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr
            .starts_with("error: --junit /nonexistent-dir/compare.xml: cannot write the file: "),
        "{}",
        out.stderr
    );
    assert_eq!(out.stdout, "");
}

/// Bencher's published shape (bencher.dev/bmf.json): benchmarks -> measures -> an object
/// with a number `value` and optional number `lower_value` and `upper_value`, nothing else.
fn assert_bmf(json: &str) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let benchmarks = v.as_object().expect("an object of benchmarks");
    assert!(!benchmarks.is_empty(), "{json}");
    for measures in benchmarks.values() {
        for m in measures
            .as_object()
            .expect("an object of measures")
            .values()
        {
            let m = m.as_object().expect("a measure");
            assert!(m["value"].is_number(), "{json}");
            assert!(m
                .iter()
                .all(
                    |(k, v)| ["value", "lower_value", "upper_value"].contains(&k.as_str())
                        && v.is_number()
                ));
        }
    }
    v
}

#[test]
fn bmf_of_a_run_and_of_a_compare_has_bencher_s_shape() {
    let dir = root().join("reports/examples/binlog-2026-11-29");
    let out = rmatrix(&["report", dir.to_str().unwrap(), "--format", "bmf"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = assert_bmf(&out.stdout);
    let m = &v["binlog / mariadb-10.11 / binlog-off / MyISAM / write-guid / c2"];
    assert!(m["throughput"]["value"].is_number(), "{}", out.stdout);
    assert!(m["latency"]["lower_value"].is_number(), "{}", out.stdout);

    let out = compare("slower", &["--format", "bmf"]);
    assert_eq!(out.code, REGRESSION, "{}", out.stderr);
    let v = assert_bmf(&out.stdout);
    assert!(
        v["fixture / mariadb-10.11 / default / InnoDB / write / c2"]["throughput"]["upper_value"]
            .is_number()
    );

    // Two candidates are two Bencher reports, not one.
    let (b, c) = (fixture("base"), fixture("slower"));
    let out = rmatrix(&["compare", &b, &c, &c, "--format", "bmf"]);
    assert_eq!(out.code, BAD_INPUT, "{}", out.stderr);
    assert!(
        out.stderr.contains("--format bmf reports one run"),
        "{}",
        out.stderr
    );
}

#[test]
fn history_names_the_formats_it_has() {
    for format in ["openmetrics", "bmf"] {
        let out = rmatrix(&[
            "history",
            &fixture("base"),
            &fixture("same"),
            "--format",
            format,
        ]);
        assert_eq!(out.code, BAD_INPUT, "{}", out.stderr);
        assert_eq!(
            out.stderr,
            format!("error: history has no {format} output; use --format md, csv, json or html\n")
        );
    }
}
