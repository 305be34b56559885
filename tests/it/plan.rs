//! `rmatrix plan`'s estimate, learned from the shipped example runs, and its JSON.

use crate::common::rmatrix;

/// The binlog matrix as the 2026-11-29 example ran it.
const OLD_BINLOG: &str = "reports/examples/binlog-2026-11-29/matrix.yaml";

fn plan_json(args: &[&str]) -> serde_json::Value {
    let out = rmatrix(&[&["plan", "--format", "json"], args].concat());
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).expect("plan --format json prints JSON")
}

/// Learned from a shipped example of matrices/binlog.yaml, every cell and server start is
/// learned and the estimate is within 25% of how long that run took (299 s, its manifest);
/// planned from the matrix that run measured (3 iterations, before its rounds were paired).
/// From the examples folder, it learns from the binlog runs there, newest first.
#[test]
fn the_estimate_learns_from_a_stored_run_of_the_matrix() {
    let folder = plan_json(&["matrices/binlog.yaml", "--learn-from", "reports/examples"]);
    let from = folder["estimate"]["learned_from"].as_array().unwrap();
    assert!(!from.is_empty() && from.len() <= 3, "{from:?}");
    let newest = from[0].as_str().unwrap();
    assert!(newest.starts_with("reports/examples/binlog-"), "{from:?}");
    let j = plan_json(&[
        OLD_BINLOG,
        "--learn-from",
        "reports/examples/binlog-2026-11-29",
    ]);
    let e = &j["estimate"];
    assert_eq!(j["matrix"], "binlog");
    assert_eq!(
        (e["cells_learned"].as_u64(), e["cells"].as_u64()),
        (Some(40), Some(40))
    );
    assert_eq!(e["starts_learned"], e["server_starts"]);
    assert_eq!(e["learned_from"][0], "reports/examples/binlog-2026-11-29");
    let seconds = e["seconds"].as_f64().unwrap();
    assert!((seconds / 299.0 - 1.0).abs() < 0.25, "{seconds}");
    let cells: usize = (j["deployments"].as_array().unwrap().iter())
        .map(|d| d["cells"].as_array().unwrap().len())
        .sum();
    assert_eq!(cells, 40);
    assert!(
        j["deployments"][0]["cells"][0]["estimate_seconds_per_iteration"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

/// With no stored run the estimate is assumed, and says what it assumed.
#[test]
fn without_stored_runs_the_estimate_says_what_it_assumes() {
    let j = plan_json(&["matrices/binlog.yaml", "--learn-from", "/nonexistent"]);
    let e = &j["estimate"];
    assert_eq!(e["cells_learned"], 0);
    assert!(e["learned_from"].as_array().unwrap().is_empty());
    assert!(
        e["assumed"]
            .as_str()
            .unwrap()
            .contains("10s per server start"),
        "{e}"
    );
    let text = rmatrix(&[
        "plan",
        "matrices/binlog.yaml",
        "--learn-from",
        "/nonexistent",
    ]);
    assert!(
        text.stdout
            .contains("estimate assumes 10s per server start"),
        "{}",
        text.stdout
    );
    // --noise-from's table is text only.
    let both = rmatrix(&[
        "plan",
        "matrices/binlog.yaml",
        "--format",
        "json",
        "--noise-from",
        "reports/examples",
    ]);
    assert_eq!(both.code, 2, "{}", both.stderr);
}

/// The same estimate from a results store that holds the example run.
#[test]
fn the_estimate_learns_from_a_results_store() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("runs.db");
    let store = store.to_str().unwrap();
    let out = rmatrix(&[
        "store",
        "import",
        "--store",
        store,
        "reports/examples/binlog-2026-11-29",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let from_store = plan_json(&[OLD_BINLOG, "--learn-from", store]);
    let from_folder = plan_json(&[
        OLD_BINLOG,
        "--learn-from",
        "reports/examples/binlog-2026-11-29",
    ]);
    let (s, f) = (&from_store["estimate"], &from_folder["estimate"]);
    assert_eq!(s["cells_learned"], 40);
    assert_eq!(s["starts_learned"], s["server_starts"]);
    assert_eq!(s["seconds"], f["seconds"]);
    assert_eq!(
        s["learned_from"][0].as_str(),
        Some(format!("{store}#binlog-2").as_str())
    );
}
