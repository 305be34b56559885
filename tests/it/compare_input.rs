//! Stored runs that cannot be right are refused by `compare`, `history` and `report` (exit 2,
//! the file and line named), and the runs' environments are compared before joining: the
//! real binary on the hand-made runs of tests/fixtures/compare-input (each a copy of
//! tests/fixtures/compare/base with one thing changed; see the file list in the test names).

use crate::common::{rmatrix, Out};
use std::path::{Path, PathBuf};

const BAD_INPUT: i32 = 2;
const ENV_DIFFERS: i32 = 5;

fn fixture(name: &str) -> String {
    let dir = match name {
        "base" | "same" => "compare",
        _ => "compare-input",
    };
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir)
        .join(name);
    path.to_str().expect("utf-8 path").to_string()
}

/// `rmatrix compare base <candidate> <extra>`.
fn compare(baseline: &str, candidate: &str, extra: &[&str]) -> Out {
    let (b, c) = (fixture(baseline), fixture(candidate));
    let mut args = vec!["compare", b.as_str(), c.as_str()];
    args.extend_from_slice(extra);
    rmatrix(&args)
}

fn assert_refused(out: &Out, message: &str) {
    assert_eq!(out.code, BAD_INPUT, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.stderr, format!("error: {message}\n"));
    assert_eq!(out.stdout, "");
}

const MEASURED: &str = "a measured value is a finite number, never negative";

#[test]
fn values_that_cannot_be_measured_are_refused_with_file_and_line() {
    let cases = [
        ("nan", format!("qps is NaN; {MEASURED}")),
        ("inf", format!("lat_p99_ms is inf; {MEASURED}")),
        ("negative", format!("qps is -990; {MEASURED}")),
        (
            "unknown-status",
            "unknown status `skipped`; expected `ok` or `failed`".into(),
        ),
        (
            "duplicate",
            "a second ok row for mariadb-10.11/default/InnoDB/write/c2 iteration 2 (the first \
             is on line 3); an iteration has one result, and --resume only reruns failed ones"
                .into(),
        ),
    ];
    for (name, why) in cases {
        let message = format!("{}/results.csv:4: {why}", fixture(name));
        // As candidate and as baseline, in history, and in report.
        assert_refused(&compare("base", name, &[]), &message);
        assert_refused(&compare(name, "base", &[]), &message);
        assert_refused(
            &rmatrix(&["history", &fixture("base"), &fixture(name)]),
            &message,
        );
        assert_refused(&rmatrix(&["report", &fixture(name)]), &message);
    }
}

#[test]
fn an_iteration_retried_by_resume_is_one_result() {
    // Line 4 is iteration 3 failed, line 5 the same iteration ok: what --resume writes.
    let out = compare("base", "resumed", &["--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let values = &v[0]["changes"][0]["candidate"]["values"];
    assert_eq!(values.as_array().map(Vec::len), Some(5), "{values}");
    assert_eq!(rmatrix(&["report", &fixture("resumed")]).code, 0);
}

#[test]
fn a_metric_asked_for_needs_its_column() {
    // An older results.csv without lat_p99_ms still compares on the metrics it has ...
    let out = compare("base", "missing-column", &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(rmatrix(&["report", &fixture("missing-column")]).code, 0);
    // ... but asking for the missing one is an error, not "no values".
    let message = format!(
        "{}/results.csv has no `lat_p99_ms` column, so metric `lat_p99_ms` cannot be read \
         from it (written by an older rmatrix?)",
        fixture("missing-column")
    );
    assert_refused(
        &compare("base", "missing-column", &["--metric", "qps,lat_p99_ms"]),
        &message,
    );
    assert_refused(
        &compare("missing-column", "base", &["--metric", "lat_p99_ms"]),
        &message,
    );
    assert_refused(
        &rmatrix(&[
            "history",
            &fixture("base"),
            &fixture("missing-column"),
            "--metric",
            "lat_p99_ms",
        ]),
        &message,
    );
    // report: the matrix's report metric is the one asked for.
    let tmp = tempfile::tempdir().unwrap();
    for f in ["results.csv", "manifest.json", "matrix.yaml"] {
        let text = std::fs::read_to_string(Path::new(&fixture("missing-column")).join(f)).unwrap();
        let text = text.replace("metric: qps", "metric: lat_p99_ms");
        std::fs::write(tmp.path().join(f), text).unwrap();
    }
    let dir = tmp.path().to_str().unwrap();
    assert_refused(
        &rmatrix(&["report", dir]),
        &format!(
            "{dir}/results.csv has no `lat_p99_ms` column, so metric `lat_p99_ms` cannot be \
             read from it (written by an older rmatrix?)"
        ),
    );
}

#[test]
fn manifests_must_be_json_of_a_known_version() {
    let bad = format!(
        "{}/manifest.json: format_version `1.0` is not a version this rmatrix knows (it reads 1 to 2)",
        fixture("bad-format")
    );
    assert_refused(&compare("base", "bad-format", &[]), &bad);
    assert_refused(&rmatrix(&["report", &fixture("bad-format")]), &bad);
    let not_json = format!(
        "failed to parse {}/manifest.json as JSON: EOF while parsing a value at line 2 column 0",
        fixture("manifest-not-json")
    );
    assert_refused(&compare("base", "manifest-not-json", &[]), &not_json);
    assert_refused(
        &rmatrix(&["history", &fixture("manifest-not-json")]),
        &not_json,
    );
    assert_refused(
        &rmatrix(&["report", &fixture("manifest-not-json")]),
        &not_json,
    );
    let newer = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compare/newer");
    let newer = newer.to_str().unwrap();
    assert_refused(
        &rmatrix(&["compare", &fixture("base"), newer]),
        &format!(
            "{newer}/manifest.json: format_version 99 is newer than this rmatrix understands \
             (2); use a newer rmatrix"
        ),
    );
}

#[test]
fn comparing_nothing_is_an_error() {
    // Every cell the candidate shares with the baseline failed.
    assert_refused(
        &compare("base", "failed-shared", &[]),
        &format!(
            "nothing was compared between {} and {}: no cell they share has a value of qps on \
             both sides",
            fixture("base"),
            fixture("failed-shared")
        ),
    );
    // The metric has a column but no value in any cell.
    assert_refused(
        &compare("base", "same", &["--metric", "tps"]),
        &format!(
            "nothing was compared between {} and {}: no cell they share has a value of tps on \
             both sides",
            fixture("base"),
            fixture("same")
        ),
    );
    // One metric with values is enough.
    assert_eq!(compare("base", "same", &["--metric", "tps,qps"]).code, 0);
}

const VARIABLE: &str =
    "- `mariadb-10.11` / `default`: variable `innodb_flush_log_at_trx_commit`: `1` -> `2`\n";

#[test]
fn a_changed_server_variable_is_shown_above_the_tables() {
    // On the iterations, as the fixture was written (an assumed run noise makes them too
    // noisy to tell).
    let out = compare("env-base", "env-variable", &["--assume-run-noise", "0"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (env, rest) = out.stdout.split_once("## rmatrix compare").unwrap();
    assert_eq!(
        env,
        format!(
            "**Environment differs** between `env-base-run` and `env-variable-run`:\n\n\
             {VARIABLE}\n"
        )
    );
    assert!(rest.contains("3 unchanged"), "compared as before: {rest}");
    // The verdicts of the deployment whose variable changed are marked, with the legend.
    assert!(
        rest.starts_with(
            ": `env-variable-run` against baseline `env-base-run`\n\n\
             **The environments differ** (see above)"
        ),
        "{rest}"
    );
    assert!(rest.contains("| unchanged † |"), "{rest}");
    assert!(
        rest.contains("†: the two runs' environments differ for this cell"),
        "{rest}"
    );

    let out = compare("env-base", "env-variable", &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let c = &v[0];
    assert_eq!(
        c["environment"]["deployments"][0]["variables"][0]["what"],
        "innodb_flush_log_at_trx_commit"
    );
    assert!(c["changes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|ch| ch["env_differs"] == true));
    let out = compare("env-base", "env-variable", &["--format", "csv"]);
    let mut r = csv::Reader::from_reader(out.stdout.as_bytes());
    let col = r
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "env_differs")
        .unwrap();
    assert!(r.records().all(|rec| &rec.unwrap()[col] == "true"));
    // Identical environments: nothing marked, no environment in the JSON.
    let out = compare("env-base", "env-base", &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert!(v[0]["environment"].is_null(), "{}", out.stdout);
    assert!(v[0]["changes"][0]["env_differs"] == false);

    let out = compare("env-base", "env-variable", &["--require-same-env"]);
    assert_eq!(out.code, ENV_DIFFERS, "{}", out.stderr);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        "error: the runs' environments differ (--require-same-env); without that option the \
         differences are shown above the tables\n  env-base-run -> env-variable-run:\n    \
         mariadb-10.11 / default: variable innodb_flush_log_at_trx_commit: 1 -> 2\n"
    );
}

#[test]
fn a_changed_host_is_shown_and_refused_on_request() {
    let out = compare("env-base", "env-host", &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.starts_with(
        "**Environment differs** between `env-base-run` and `env-host-run`:\n\n\
         - cpus: `2` -> `4`\n\
         - kernel: `6.18.44-fc-v669` -> `6.1.0-28-amd64`\n\n## rmatrix compare"
    ));
    let out = compare("env-base", "env-host", &["--require-same-env"]);
    assert_eq!(out.code, ENV_DIFFERS);
    assert!(
        out.stderr
            .ends_with("\n    cpus: 2 -> 4\n    kernel: 6.18.44-fc-v669 -> 6.1.0-28-amd64\n"),
        "{}",
        out.stderr
    );
    // Exit 5 wins over exit 4: nothing is compared when the environments must match.
    let slower = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compare/slower");
    let out = rmatrix(&[
        "compare",
        &fixture("env-base"),
        &fixture("env-host"),
        slower.to_str().unwrap(),
        "--require-same-env",
    ]);
    assert_eq!(out.code, ENV_DIFFERS, "{}", out.stderr);
}

#[test]
fn identical_environments_print_nothing_and_pass() {
    // Only per-instance variables (port, server_uid) differ: a fresh server, same setup.
    for extra in [&[][..], &["--require-same-env"][..]] {
        let out = compare("env-base", "env-same", extra);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(
            out.stdout.starts_with("## rmatrix compare"),
            "{}",
            out.stdout
        );
    }
    // Runs whose manifests record no environment (older rmatrix) are not called different.
    let out = compare("base", "env-base", &["--require-same-env"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.starts_with("## rmatrix compare"),
        "{}",
        out.stdout
    );
}

#[test]
fn history_lists_each_change_of_environment() {
    let dirs = ["env-base", "env-same", "env-variable", "env-host"].map(fixture);
    let mut args = vec!["history"];
    args.extend(dirs.iter().map(String::as_str));
    let out = rmatrix(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (env, _) = out.stdout.split_once("## rmatrix history").unwrap();
    assert_eq!(
        env,
        format!(
            "**Environment differs** between `env-same-run` and `env-variable-run`:\n\n\
             {VARIABLE}\n\
             **Environment differs** between `env-variable-run` and `env-host-run`:\n\n\
             - cpus: `2` -> `4`\n\
             - kernel: `6.18.44-fc-v669` -> `6.1.0-28-amd64`\n\
             - `mariadb-10.11` / `default`: variable `innodb_flush_log_at_trx_commit`: `2` -> \
             `1`\n\n"
        )
    );
    // With --require-same-env every run is held to the first one's environment.
    args.push("--require-same-env");
    let out = rmatrix(&args);
    assert_eq!(out.code, ENV_DIFFERS);
    assert_eq!(
        out.stderr,
        "error: the runs' environments differ (--require-same-env); without that option the \
         differences are shown above the tables\n  env-base-run -> env-variable-run:\n    \
         mariadb-10.11 / default: variable innodb_flush_log_at_trx_commit: 1 -> 2\n  \
         env-base-run -> env-host-run:\n    cpus: 2 -> 4\n    kernel: 6.18.44-fc-v669 -> \
         6.1.0-28-amd64\n"
    );
    let out = rmatrix(&[
        "history",
        &fixture("env-base"),
        &fixture("env-same"),
        "--require-same-env",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.starts_with("## rmatrix history"),
        "{}",
        out.stdout
    );
}

#[test]
fn stored_examples_still_load_and_render_byte_identical() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/examples");
    for entry in std::fs::read_dir(&examples).unwrap() {
        let dir = entry.unwrap().path();
        let dir = dir.to_str().unwrap();
        let out = rmatrix(&["report", dir]);
        assert_eq!(out.code, 0, "{dir}: {}", out.stderr);
        // The stored summary is what `report` renders from the stored files, byte for byte:
        // a change of the code that renders it must not change a published table.
        let stored = std::fs::read_to_string(Path::new(dir).join("summary.md")).unwrap();
        assert!(
            out.stdout == stored,
            "{dir}: report differs from summary.md"
        );
        let out = rmatrix(&["compare", dir, dir, "--require-same-env"]);
        assert_eq!(out.code, 0, "{dir}: {}", out.stderr);
    }
}
