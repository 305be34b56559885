//! The `oltp` and `sysbench` workloads against a real PostgreSQL 15 (`build: postgres-15`)
//! through the real binary: the client's committed transactions are the server's
//! `xact_commit`, its ignored errors the server's `xact_rollback`, open loop achieves a rate
//! below capacity with every arrival a transaction the server counted, and sysbench's pgsql
//! driver runs and its report is parsed. autovacuum is off: its workers' transactions count
//! in the same `pg_stat_database` row, and would make the comparison depend on its timing.
//! deadlock_timeout is 100 ms, not 1 s: read_write's deadlocks are found that long after
//! they form, and a 3 s phase whose last transactions waited on one (beside a CPU hog, in
//! scripts/flaky.sh) outlasted the 2 s of slack a timed phase has before it counts as the
//! server pausing (src/measure/pause.rs).
//! Run with `--test-threads=1`.

use crate::common::{counters_of, csv_rows, run_ok};

use std::collections::BTreeMap;

type Row = BTreeMap<String, String>;

const SERVER: &str = "servers:\n  pg: {build: postgres-15}\n\
                      configs:\n  default: {postgresql_conf: {autovacuum: \"off\", \
                      deadlock_timeout: 100ms}}\n";

fn num(r: &Row, k: &str) -> f64 {
    r[k].parse()
        .unwrap_or_else(|_| panic!("{k} = `{}` is not a number: {r:?}", r[k]))
}

/// The client's counts against the server's for one results row: every committed
/// transaction (sysbench's events, BEGIN..COMMIT or one autocommit statement) is one
/// `xact_commit`, every ignored error (deadlock, serialization failure, duplicate key: each
/// rolled back) one `xact_rollback`.
fn assert_server_agrees(dir: &std::path::Path, r: &Row) {
    assert_eq!(r["status"], "ok", "{r:?}");
    let counters = counters_of(dir, r);
    let name = &r["workload"];
    assert!(num(r, "commits") > 0.0, "{name}: {r:?}");
    assert_eq!(
        num(r, "srv_com_commit"),
        num(r, "commits"),
        "{name}: xact_commit"
    );
    assert_eq!(
        counters.get("db.xact_rollback").copied().unwrap_or(0),
        num(r, "errors") as u64,
        "{name}: xact_rollback ({counters:?})"
    );
    assert_eq!(
        num(r, "queries"),
        num(r, "reads") + num(r, "writes") + num(r, "others"),
        "{name}"
    );
}

#[test]
fn oltp_and_sysbench_on_postgres_count_the_servers_commits() {
    let tmp = tempfile::tempdir().unwrap();
    let m = format!(
        "{SERVER}workloads:\n  \
         ps: {{oltp: {{test: oltp_point_select, tables: 2, table_size: 1000}}}}\n  \
         rw: {{oltp: {{test: oltp_read_write, tables: 2, table_size: 1000}}}}\n  \
         sb: {{sysbench: {{test: oltp_read_write, db: sbtest_sb, options: {{tables: 2, table_size: 1000}}}}}}\n\
         concurrency: [4]\nwarmup: 1s\nlength: 3s\n"
    );
    let (dir, _g) = run_ok(tmp.path(), "pg-oltp-counts", &m);
    let rows = crate::common::result_rows(&dir);
    assert_eq!(rows.len(), 3, "{rows:?}");
    let by = |w: &str| rows.iter().find(|r| r["workload"] == w).unwrap();
    let (ps, rw, sb) = (by("ps"), by("rw"), by("sb"));
    for r in [ps, rw] {
        assert_server_agrees(&dir, r);
    }
    // One SELECT per point-select event; read_write's 18 statements between BEGIN and
    // COMMIT, and the statements of each attempt an ignored error cut short (counted, as
    // sysbench counts them).
    assert_eq!(num(ps, "queries"), num(ps, "commits"));
    let attempts = num(rw, "commits") + num(rw, "errors");
    assert!(num(rw, "queries") <= attempts * 20.0, "{rw:?}");
    assert!(num(rw, "reads") >= num(rw, "commits") * 14.0, "{rw:?}");
    let c = counters_of(&dir, rw);
    assert!(c.get("db.tup_updated").copied().unwrap_or(0) > 0, "{c:?}");
    assert!(c.get("wal.wal_records").copied().unwrap_or(0) > 0, "{c:?}");
    // Per-second samples for every cell. rmatrix's own: one per complete second of the
    // measured phase, which ends when the last client's transaction does (a lock wait that
    // PostgreSQL resolves after deadlock_timeout can carry a 3 s phase past 4 s).
    // sysbench's: the lines its --report-interval=1 printed, one per interval that ended
    // while its threads still ran. Its run ends with its last transaction, after --time=3,
    // and its own `total time` (the row's seconds) says when: the line at the last whole
    // second races the end of that run, so it may or may not be printed.
    let samples = csv_rows(&dir.join("samples.csv"));
    let count = |w: &str| samples.iter().filter(|s| s["workload"] == w).count();
    for (w, r) in [("ps", ps), ("rw", rw)] {
        let full = num(r, "seconds").floor() as usize;
        assert_eq!(count(w), full, "{w}: one sample per complete second: {r:?}");
        assert!(full >= 3, "{w}: a 3 s phase: {r:?}");
    }
    let sb_full = num(sb, "seconds").floor() as usize;
    assert!(sb_full >= 3, "sb: a 3 s run: {sb:?}");
    assert!(
        (sb_full - 1..=sb_full).contains(&count("sb")),
        "sb: {} samples over sysbench's own {} s",
        count("sb"),
        sb["seconds"]
    );

    // sysbench's pgsql run, its report parsed into the same columns. Its own transactions
    // are the server's commits too, plus what each of its 4 connections did outside them:
    // its session's start, and each statement it prepares, one implicit transaction apiece
    // (oltp_read_write's 9 per table on 2 tables, its BEGIN and its COMMIT).
    assert_eq!(sb["status"], "ok", "{sb:?}");
    let commits = num(sb, "commits");
    assert!(commits > 0.0, "{sb:?}");
    assert_eq!(
        num(sb, "queries"),
        num(sb, "reads") + num(sb, "writes") + num(sb, "others")
    );
    assert!(num(sb, "reads") >= commits * 14.0, "{sb:?}");
    assert!(
        num(sb, "lat_avg_ms") > 0.0 && num(sb, "client_cpu_s") > 0.0,
        "{sb:?}"
    );
    assert_eq!(
        num(sb, "srv_com_commit"),
        commits + 4.0 * (1.0 + 9.0 * 2.0 + 2.0),
        "{sb:?}"
    );
    let c = counters_of(&dir, sb);
    assert_eq!(
        c.get("db.xact_rollback").copied().unwrap_or(0),
        num(sb, "errors") as u64,
        "{c:?}"
    );
}

#[test]
fn postgres_oltp_below_capacity_achieves_its_rate() {
    let tmp = tempfile::tempdir().unwrap();
    let m = format!(
        "{SERVER}workloads:\n  \
         ps: {{oltp: {{test: oltp_point_select, tables: 1, table_size: 1000}}}}\n\
         concurrency: [4]\nload: {{rate: [1000], arrivals: even}}\nwarmup: 1s\nlength: 5s\n"
    );
    let (dir, _g) = run_ok(tmp.path(), "pg-oltp-open", &m);
    let rows = crate::common::result_rows(&dir);
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_server_agrees(&dir, r);
    let (target, achieved) = (num(r, "rate"), num(r, "achieved_rate"));
    assert!(
        (achieved / target - 1.0).abs() <= 0.02,
        "achieved {achieved}/s of {target}/s"
    );
    assert!(num(r, "missed_starts") <= target * 0.01, "{r:?}");
    assert!(num(r, "lat_avg_ms") >= num(r, "svc_avg_ms"), "{r:?}");
    // Every arrival started is one SELECT, one transaction the server committed.
    let started = (achieved * num(r, "seconds")).round();
    assert_eq!(num(r, "queries"), started, "{r:?}");
    assert_eq!(num(r, "srv_com_commit"), started, "{r:?}");
    let samples = csv_rows(&dir.join("samples.csv"));
    assert!(samples.len() >= 4, "{samples:?}");
    for s in &samples {
        assert!((num(s, "qps") - 1000.0).abs() < 100.0, "{s:?}");
    }
}
