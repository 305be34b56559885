//! The `tpcc` workload on MariaDB, MySQL 9.7 and PostgreSQL from one matrix, through the
//! real binary: one warehouse loaded, four terminals for 3 s, and on each server the
//! client's counts are the server's (every transaction one BEGIN..COMMIT or ROLLBACK;
//! MariaDB's and MySQL's `Com_*` per statement class), the five types run in the mix, and
//! the consistency conditions 1-4 hold after the run (the cell would fail otherwise). Then a
//! broken row (a warehouse's w_ytd off by one cent) makes the next run's check fail the
//! cell, naming condition 1. autovacuum is off for the same reason as in postgres_oltp.rs.
//! Run with `--test-threads=1`.

use crate::common::{counters_of, csv_rows, result_rows, run_ok};

use std::collections::BTreeMap;

type Row = BTreeMap<String, String>;

const MATRIX: &str = "servers:\n  mariadb: {build: mariadb-10.11}\n  mysql: {build: mysql-9.7}\n\
                      \x20 pg: {build: postgres-15}\n\
                      configs:\n  default: {mycnf: {max_connections: 151}, postgresql_conf: {autovacuum: \"off\"}}\n\
                      workloads:\n  tpcc: {tpcc: {warehouses: 1}}\n\
                      concurrency: [4]\nlength: 3s\n";

/// The rates per minute agree with the counts they come from: TPM with every transaction the
/// server ended (`ended` and the retried ones' rollbacks), tpmC with New-Order's, NOPM
/// (from the schema) with the New-Orders committed, about 99% of them.
fn per_minute(r: &Row, new_order: &Row, ended: u64) {
    let minutes = real(r, "seconds") / 60.0;
    let near = |rate: f64, count: u64| (rate * minutes - count as f64).abs() < 1.0;
    assert!(near(real(r, "tpm"), ended), "{r:?}");
    let orders = num(new_order, "loops");
    assert!(near(real(r, "tpmc"), orders), "{r:?} {new_order:?}");
    let committed = real(r, "nopm") * minutes;
    assert!(
        committed <= orders as f64 + 1.0 && committed >= orders as f64 * 0.95 - 1.0,
        "{r:?} {new_order:?}"
    );
}

/// The per-second samples of `r`'s cell: each transaction one event, each statement sent in
/// its second; the complete seconds hold most of them and no more.
fn samples_agree(dir: &std::path::Path, r: &Row, ended: u64) {
    let samples = csv_rows(&dir.join("samples.csv"));
    let mine: Vec<&Row> = samples
        .iter()
        .filter(|s| s["server"] == r["server"])
        .collect();
    assert!(!mine.is_empty(), "{samples:?}");
    let sum = |c: &str| -> f64 { mine.iter().map(|s| real(s, c)).sum() };
    let (events, queries) = (ended as f64, real(r, "queries"));
    assert!(
        sum("tps") <= events && sum("tps") >= events * 0.5,
        "{mine:?} {r:?}"
    );
    assert!(
        sum("qps") <= queries && sum("qps") >= queries * 0.5,
        "{mine:?} {r:?}"
    );
}

fn real(r: &Row, k: &str) -> f64 {
    r[k].parse::<f64>()
        .unwrap_or_else(|_| panic!("{k} = `{}` is not a number: {r:?}", r[k]))
}

fn num(r: &Row, k: &str) -> u64 {
    r[k].parse::<f64>()
        .unwrap_or_else(|_| panic!("{k} = `{}` is not a number: {r:?}", r[k])) as u64
}

#[test]
fn tpcc_runs_on_mariadb_mysql_and_postgres_and_the_servers_agree() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, _g) = run_ok(tmp.path(), "tpcc-two-families", MATRIX);
    let rows = result_rows(&dir);
    assert_eq!(rows.len(), 3, "{rows:?}");
    let ops = csv_rows(&dir.join("operations.csv"));
    for r in &rows {
        assert_eq!(r["status"], "ok", "{r:?}");
        let c = counters_of(&dir, r);
        let commits = num(r, "commits");
        assert!(commits > 0, "{r:?}");
        assert_eq!(
            num(r, "queries"),
            num(r, "reads") + num(r, "writes") + num(r, "others")
        );
        // Each type's transactions, from operations.csv: all five ran, and their sum is
        // every transaction the terminals ended (committed or the New-Orders rolled back).
        let mine: Vec<&Row> = ops.iter().filter(|o| o["server"] == r["server"]).collect();
        let names: Vec<&str> = mine.iter().map(|o| o["operation"].as_str()).collect();
        assert_eq!(
            names,
            [
                "new_order",
                "payment",
                "order_status",
                "delivery",
                "stock_level"
            ]
        );
        let ended: u64 = mine.iter().map(|o| num(o, "loops")).sum();
        assert!(ended >= commits, "{mine:?}");
        assert_eq!(num(r, "srv_com_commit"), commits, "{r:?} {c:?}");
        // Each type's latency and retries; the retries are results.csv's errors.
        let retried: u64 = mine.iter().map(|o| num(o, "errors")).sum();
        assert_eq!(retried, num(r, "errors"), "{mine:?}");
        assert!(mine.iter().all(|o| real(o, "lat_p95_ms") > 0.0), "{mine:?}");
        per_minute(r, mine[0], ended + num(r, "errors"));
        samples_agree(&dir, r, ended);
        if r["server"] == "pg" {
            assert_eq!(
                c["db.xact_rollback"],
                ended - commits + num(r, "errors"),
                "{c:?}"
            );
        } else {
            assert_eq!(num(r, "srv_com_select"), num(r, "reads"), "{r:?}");
            let writes =
                num(r, "srv_com_insert") + num(r, "srv_com_update") + num(r, "srv_com_delete");
            assert_eq!(writes, num(r, "writes"), "{r:?}");
        }
    }
}

/// The consistency check passes on a freshly loaded database and names condition 1 once a
/// warehouse's year-to-date is one cent off its districts'.
#[tokio::test(flavor = "multi_thread")]
async fn a_broken_row_fails_the_consistency_check() {
    use mysql::prelude::Queryable;
    use rmatrix::servers::mysql::MysqlClient;
    use rmatrix::servers::spec::ServerKind;
    use rmatrix::workloads::tpcc::{check_database, prepare_database, TpccSpec};

    let tmp = tempfile::tempdir().unwrap();
    let _g = crate::common::Cleanup("tpcc-broken".into());
    let dep = crate::common::mariadb_10_11("tpcc-broken", tmp.path(), "tpcc-pw").await;
    let spec = TpccSpec::default();
    prepare_database(ServerKind::Mysql, &dep.endpoint, &spec)
        .await
        .unwrap();
    check_database(ServerKind::Mysql, &dep.endpoint, &spec)
        .await
        .unwrap();
    let mut c = mysql::Conn::new(dep.endpoint.blocking_opts(Some("tpcc"))).unwrap();
    c.query_drop("UPDATE warehouse SET w_ytd = w_ytd + 0.01 WHERE w_id = 1")
        .unwrap();
    let err = check_database(ServerKind::Mysql, &dep.endpoint, &spec)
        .await
        .unwrap_err();
    let msg = format!("{err:#}");
    assert!(
        msg.contains("condition 1 (w_ytd = sum(d_ytd)") && msg.contains("fails in 1 place"),
        "{msg}"
    );
}
