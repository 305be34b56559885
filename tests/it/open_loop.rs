//! Open loop and sweeps on real servers through the real binary: a rate below capacity is
//! achieved within 2% (Redis; MariaDB with slap and oltp, the server counting every
//! statement), a rate far above capacity shows latency growing second by second and the
//! backlog left behind (and is marked behind its target, never reported as achieved), and a
//! sweep on a server pinned to one core stops at its knee. Run with `--test-threads=1`.

use crate::common::Cleanup;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

type Row = BTreeMap<String, String>;

fn containers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("containers")
}

/// Run `matrix` into a fresh directory named `name` (also the run id); its rows.
fn run(tmp: &Path, name: &str, matrix: &str) -> (PathBuf, Vec<Row>, Cleanup) {
    let file = tmp.join(format!("{name}.yaml"));
    std::fs::write(&file, matrix).unwrap();
    let dir = tmp.join(name);
    let guard = Cleanup(name.to_string());
    let out = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args(["run", file.to_str().unwrap(), "--out"])
        .arg(&dir)
        .arg("--quiet")
        .output()
        .expect("run rmatrix");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{name}: {}{}",
        String::from_utf8_lossy(&out.stderr),
        crate::common::failed_rows(&dir)
    );
    let rows = crate::common::result_rows(&dir);
    (dir, rows, guard)
}

fn num(r: &Row, k: &str) -> f64 {
    r[k].parse()
        .unwrap_or_else(|_| panic!("{k} = `{}` is not a number", r[k]))
}

fn redis_server(cpuset: &str) -> String {
    format!(
        "servers:\n  redis:\n    build: {{dir: {}, args: {{suite: bookworm, package: redis-server}}}}\n{cpuset}\
         configs:\n  default: {{redis_conf: {{save: \"\", appendonly: \"no\"}}}}\n",
        containers().join("redis").display()
    )
}

/// Every row within 2% of its target, nothing left behind, the server's own counts equal
/// the client's (checked by the drivers; a mismatch fails the cell).
fn assert_achieved(rows: &[Row]) {
    for r in rows {
        assert_eq!(r["status"], "ok", "{r:?}");
        let (target, achieved) = (num(r, "rate"), num(r, "achieved_rate"));
        assert!(
            (achieved / target - 1.0).abs() <= 0.02,
            "{}: achieved {achieved}/s of {target}/s",
            r["workload"]
        );
        assert!(num(r, "missed_starts") <= target * 0.01, "{r:?}");
        // Latency runs from the intended start, service time from the send: never less.
        assert!(num(r, "lat_avg_ms") >= num(r, "svc_avg_ms"), "{r:?}");
    }
}

#[test]
fn redis_below_capacity_achieves_its_rate() {
    let tmp = tempfile::tempdir().unwrap();
    let m = format!(
        "{}workloads:\n  get: {{redis: {{test: get, keyspace: 10000, data_size: 32}}}}\n\
         concurrency: [4]\nload: {{rate: [4000], arrivals: even}}\nwarmup: 1s\nlength: 5s\n",
        redis_server("")
    );
    let (dir, rows, _g) = run(tmp.path(), "ol-redis-below", &m);
    assert_eq!(rows.len(), 1);
    assert_achieved(&rows);
    let r = &rows[0];
    // 5 s at 4000/s, evenly spaced: the arrivals at 0.25 ms .. 4999.75 ms.
    assert_eq!(num(r, "scheduled"), 19_999.0, "{r:?}");
    // Per-second samples carry the rate and run at it.
    let samples = crate::common::csv_rows(&dir.join("samples.csv"));
    assert!(samples.len() >= 4, "{samples:?}");
    for s in &samples {
        assert_eq!(s["rate"], "4000");
        assert!((num(s, "qps") - 4000.0).abs() < 200.0, "{s:?}");
    }
}

#[test]
fn redis_far_above_capacity_shows_latency_growing_and_the_backlog() {
    let tmp = tempfile::tempdir().unwrap();
    let m = format!(
        "{}workloads:\n  get: {{redis: {{test: get, keyspace: 10000, data_size: 32}}}}\n\
         concurrency: [4]\nload: {{rate: [2000, 1000000], arrivals: poisson}}\nlength: 4s\n\
         report: {{load_curve: {{p99: 50ms}}}}\n",
        redis_server("")
    );
    let (dir, rows, _g) = run(tmp.path(), "ol-redis-above", &m);
    assert_eq!(rows.len(), 2);
    let r = &rows[1];
    assert_eq!(r["rate"], "1000000");
    assert_eq!(r["status"], "ok", "{r:?}");
    let (achieved, scheduled) = (num(r, "achieved_rate"), num(r, "scheduled"));
    assert!(
        achieved < 500_000.0,
        "one client thread cannot serve 1M/s: {r:?}"
    );
    // About 4 M arrivals were due; most were never started, and the report says so.
    assert!(scheduled > 3_000_000.0, "{r:?}");
    assert!(num(r, "missed_starts") > scheduled * 0.5, "{r:?}");
    assert!(num(r, "max_backlog") >= num(r, "missed_starts"), "{r:?}");
    // Latency from the intended start grows with the backlog: seconds, not microseconds,
    // while each request's own service time stays short.
    assert!(num(r, "lat_p50_ms") > 500.0, "{r:?}");
    assert!(num(r, "svc_p99_ms") < 100.0, "{r:?}");
    let p95: Vec<f64> = crate::common::csv_rows(&dir.join("samples.csv"))
        .iter()
        .filter(|s| s["rate"] == "1000000")
        .map(|s| num(s, "lat_p95_ms"))
        .collect();
    assert!(p95.len() >= 3, "{p95:?}");
    assert!(
        p95.windows(2).all(|w| w[1] > w[0]) && p95[p95.len() - 1] > 2.0 * p95[0],
        "latency must grow second by second: {p95:?}"
    );
    // The summary says the target was not met, and which load was sustainable.
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    let line = summary
        .lines()
        .find(|l| l.starts_with("| 1000000 |"))
        .unwrap_or_else(|| panic!("no load-curve line for 1000000/s: {summary}"));
    assert!(line.contains("behind the target"), "{line}");
    assert!(
        summary.contains("(p99 <= 50 ms): 2000 arrivals/s"),
        "{summary}"
    );
}

#[test]
fn mariadb_slap_and_oltp_below_capacity_achieve_their_rate() {
    let tmp = tempfile::tempdir().unwrap();
    let m = format!(
        "servers:\n  db: {{build: {{dir: {}, args: {{suite: bookworm}}}}}}\n\
         configs:\n  default: {{mycnf: {{innodb_buffer_pool_size: 128M}}}}\n\
         engines: [InnoDB]\n\
         workloads:\n  read: {{slap: {{load_type: read}}}}\n  ps: {{oltp: {{test: oltp_point_select, tables: 1, table_size: 1000}}}}\n\
         concurrency: [4]\nload: {{rate: [1000], arrivals: even}}\nwarmup: 1s\nlength: 5s\n",
        containers().join("mariadb").display()
    );
    let (_dir, rows, _g) = run(tmp.path(), "ol-mariadb-below", &m);
    assert_eq!(rows.len(), 2);
    assert_achieved(&rows);
    for r in &rows {
        // Every arrival the clients started is a statement the server counted: slap's read
        // is one SELECT, oltp_point_select one SELECT per event.
        let started = (num(r, "achieved_rate") * num(r, "seconds")).round();
        assert_eq!(num(r, "srv_com_select"), started, "{r:?}");
        assert_eq!(num(r, "queries"), started, "{r:?}");
    }
}

#[test]
fn mariadb_far_above_capacity_is_behind_its_target() {
    let tmp = tempfile::tempdir().unwrap();
    let m = format!(
        "servers:\n  db: {{build: {{dir: {}, args: {{suite: bookworm}}}}, cpuset: \"1\"}}\n\
         engines: [InnoDB]\n\
         workloads:\n  ps: {{oltp: {{test: oltp_point_select, tables: 1, table_size: 1000}}}}\n\
         concurrency: [4]\nload: {{rate: [500000]}}\nlength: 3s\n",
        containers().join("mariadb").display()
    );
    let (dir, rows, _g) = run(tmp.path(), "ol-mariadb-above", &m);
    let r = &rows[0];
    assert_eq!(r["status"], "ok", "{r:?}");
    let (achieved, scheduled) = (num(r, "achieved_rate"), num(r, "scheduled"));
    assert!(achieved < 250_000.0, "{r:?}");
    assert!(num(r, "missed_starts") > scheduled * 0.5, "{r:?}");
    assert!(num(r, "lat_p50_ms") > 100.0 * num(r, "svc_avg_ms"), "{r:?}");
    // What was served is what the server counted, backlog or not.
    let started = (achieved * num(r, "seconds")).round();
    assert_eq!(num(r, "srv_com_select"), started, "{r:?}");
    let p95: Vec<f64> = crate::common::csv_rows(&dir.join("samples.csv"))
        .iter()
        .map(|s| num(s, "lat_p95_ms"))
        .collect();
    assert!(
        p95.len() >= 2 && p95[p95.len() - 1] > p95[0],
        "latency must grow: {p95:?}"
    );
    // The server's cost per operation is there too: CPU, context switches, fsyncs.
    assert!(num(r, "srv_cpu_s") > 0.0, "{r:?}");
    assert!(num(r, "srv_ctx_switches") > 0.0, "{r:?}");
    assert!(r["srv_fsyncs"].parse::<u64>().is_ok(), "{r:?}");
}

/// The knee is called only when a step's whole gain interval lies below `min_gain_pct`. Past
/// this server's saturation (8-16 connections) a step gains about 0%, and 4 measurements of
/// 2 s give one step an interval of about ±10% on a quiet machine, wider when other work
/// shares it: at 10% one step alone often cannot tell. A plateau's levels taken together
/// against the level before them can (`stats::knee::plateau_step`), so the sweep stops a few
/// levels past saturation, not at 1024.
#[test]
fn a_sweep_on_a_server_pinned_to_one_core_stops_at_its_knee() {
    let tmp = tempfile::tempdir().unwrap();
    let m = format!(
        "{}workloads:\n  get: {{redis: {{test: get, keyspace: 10000, data_size: 32, pipeline: 8}}}}\n\
         concurrency: {{from: 1, factor: 2, to: 1024}}\nload: {{until: knee}}\nlength: 2s\n\
         report: {{load_curve: {{min_gain_pct: 10}}}}\n",
        redis_server("    cpuset: \"1\"\n")
    );
    let (dir, rows, _g) = run(tmp.path(), "ol-sweep-knee", &m);
    // The levels run, in order (a level the stop rule measured again has more rows).
    let mut levels: Vec<u32> = rows
        .iter()
        .map(|r| r["concurrency"].parse().unwrap())
        .collect();
    levels.dedup_by(|a, b| a <= b);
    let max_tries = rows
        .iter()
        .map(|r| r["iteration"].parse::<u32>().unwrap())
        .max()
        .unwrap();
    assert!(max_tries <= 4, "max_measurements is 4: {rows:?}");
    assert!(
        levels.len() >= 3 && levels.len() < 11,
        "the sweep stopped before 1024 connections: {levels:?}"
    );
    assert_eq!(
        levels,
        [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024][..levels.len()]
    );
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    let knee: u32 = (summary.split("The knee is at ").nth(1))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no knee: {summary}"));
    // A level that ran, before the last one (the sweep measured past it to tell). Where it
    // is depends on the host: about 8-16 on a quiet one, wherever the client gave out when a
    // build shares the two cores.
    assert!(
        levels.contains(&knee) && knee < levels[levels.len() - 1],
        "{knee} {levels:?}\n{summary}"
    );
    eprintln!("knee at {knee} connections, levels run {levels:?}");
    // The server stayed on its core: its CPU never exceeded one core's time.
    for r in &rows {
        assert!(num(r, "srv_cpu_s") <= num(r, "seconds") * 1.05, "{r:?}");
    }
}
