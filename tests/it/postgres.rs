//! The PostgreSQL family and the pgbench kind on real servers, through the real binary: a
//! variant verified from pg_settings (and the allocator in the server's maps), a setting
//! the server refuses fails its cell with the server's own message, pgbench's transactions
//! are the server's xact_commit, and open loop achieves a rate below capacity.

use crate::common::{csv_rows, result_rows, run_ok};

fn num(r: &std::collections::BTreeMap<String, String>, k: &str) -> f64 {
    r[k].parse().unwrap_or_else(|_| panic!("{k}: {:?}", r[k]))
}

#[test]
fn postgres_variants_are_verified_and_a_refused_setting_fails_its_cell() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = "servers:\n  pg: {build: postgres-15}\n\
         configs:\n  tuned: {allocator: jemalloc, postgresql_conf: {synchronous_commit: \"off\", shared_buffers: 256MB}}\n  \
         refused: {postgresql_conf: {fsync: maybe}}\n\
         workloads:\n  sel: {pgbench: {builtin: select-only}}\n\
         concurrency: [2]\nlength: 200\n";
    let file = tmp.path().join("pg-variants.yaml");
    std::fs::write(&file, matrix).unwrap();
    let dir = tmp.path().join("pg-variants");
    let _guard = crate::common::Cleanup("pg-variants".into());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args(["run", file.to_str().unwrap(), "--quiet", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    // One cell failed: the run says so in its exit code and keeps the other's results.
    assert_ne!(out.status.code(), Some(0));
    let rows = result_rows(&dir);
    let by = |c: &str| rows.iter().find(|r| r["config"] == c).unwrap().clone();
    assert_eq!(by("tuned")["status"], "ok");
    let refused = by("refused");
    assert_eq!(refused["status"], "failed");
    assert!(
        refused["error"].contains("parameter \"fsync\" requires a Boolean value"),
        "{}",
        refused["error"]
    );
    let checks = std::fs::read_to_string(dir.join("servers/pg__tuned/verified.json")).unwrap();
    let checks: serde_json::Value = serde_json::from_str(&checks).unwrap();
    let status = |s: &str| {
        checks
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["setting"] == s)
            .map(|c| {
                (
                    c["status"].as_str().unwrap().to_string(),
                    c["actual"].to_string(),
                )
            })
            .unwrap()
    };
    assert_eq!(status("synchronous_commit").0, "ok");
    assert_eq!(
        status("shared_buffers"),
        ("ok".into(), "\"32768 8kB\"".into())
    );
    assert_eq!(status("allocator").0, "ok", "{:?}", status("allocator"));
}

#[test]
fn pgbench_transactions_are_the_servers_commits() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = "servers:\n  pg: {build: postgres-15}\n\
         workloads:\n  tpcb: {pgbench: {builtin: tpcb-like}}\n  \
         sel: {pgbench: {builtin: select-only, protocol: prepared}}\n\
         concurrency: [2]\nlength: 400\n";
    let (dir, _guard) = run_ok(tmp.path(), "pg-counts", matrix);
    for r in result_rows(&dir) {
        assert_eq!(r["commits"], "400", "{r:?}");
        // Besides its transactions the server counts one per session start (each client's
        // and pgbench's own), pgbench's two queries of its own session (the scale, the
        // partitions) and, with `-M prepared`, one per client's statement preparation.
        let extra = match r["workload"].as_str() {
            "tpcb" => 2 + 1 + 2,
            _ => 2 + 1 + 2 + 2,
        };
        assert_eq!(num(&r, "srv_com_commit"), (400 + extra) as f64, "{r:?}");
        assert!(num(&r, "lat_p95_ms") > 0.0, "{r:?}");
    }
    let counters = csv_rows(&dir.join("counters.csv"));
    assert!(counters.iter().any(|c| c["counter"] == "wal.wal_bytes"));
}

#[test]
fn pgbench_below_capacity_achieves_its_rate() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = "servers:\n  pg: {build: postgres-15}\n\
         workloads:\n  sel: {pgbench: {builtin: select-only, latency_limit_ms: 50}}\n\
         concurrency: [4]\nload: {rate: [300]}\nlength: 4s\n";
    let (dir, _guard) = run_ok(tmp.path(), "pg-open", matrix);
    let r = &result_rows(&dir)[0];
    let achieved = num(r, "tps");
    // 1,200 Poisson arrivals: a standard deviation of 2.9%.
    assert!((achieved - 300.0).abs() < 30.0, "{r:?}");
    assert_eq!(r["rate"], "300");
    // pgbench's progress seconds, their latency from its transaction log.
    let samples = csv_rows(&dir.join("samples.csv"));
    assert!(samples.len() >= 3, "{samples:?}");
    assert!(samples
        .iter()
        .all(|s| s["lat_p95_ms"].parse::<f64>().unwrap() > 0.0));
}
