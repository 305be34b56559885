//! Oracle MySQL 9.7 (containers/mysql, Debian sid's packages) as a server of the MySQL family:
//! every workload kind runs on it with the client's counts equal to the server's, the binary
//! log is off or on as the config says (MySQL 8+ logs by default), and the tcmalloc and
//! jemalloc preloads are verified through the server process's mapped libraries, since MySQL
//! reports no `version_malloc_library`. Run with `--test-threads=1`.

use crate::common::counts::{assert_server_agrees, deadlocks, srv};
use crate::common::{result_rows, rmatrix, Cleanup};

use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use rmatrix::matrix::Length;
use rmatrix::measure::cgroup::Window;
use rmatrix::servers::spec::ServerKind;
use rmatrix::servers::Deployed;
use rmatrix::workloads::oltp::driver::run_iteration;
use rmatrix::workloads::oltp::{OltpSpec, OltpTest};
use rmatrix::workloads::Iteration;

const PASSWORD: &str = "mysql-test-pw";

async fn server(run_id: &str, dir: &Path) -> Deployed {
    crate::common::mysql_9_7(run_id, dir, PASSWORD, &Default::default()).await
}

fn verified(dir: &Path, deployment: &str) -> Vec<serde_json::Value> {
    let path = dir.join("servers").join(deployment).join("verified.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The check of `setting` in a deployment's verified.json.
fn check<'a>(checks: &'a [serde_json::Value], setting: &str) -> &'a serde_json::Value {
    checks
        .iter()
        .find(|c| c["setting"] == setting)
        .unwrap_or_else(|| panic!("no check of {setting}: {checks:?}"))
}

/// A matrix through the real binary: slap's counts equal the server's in every config, and
/// each variant is read back: the binary log, the allocator through the maps, the flavor.
#[test]
fn slap_binlog_and_allocators_are_verified() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = tmp.path().join("matrix.yaml");
    std::fs::write(
        &matrix,
        "servers:
  mysql-9.7: {build: mysql-9.7}
configs:
  default: {}
  binlog-off: {mycnf: {skip-log-bin: ~}}
  binlog-on: {mycnf: {log_bin: mysql-bin, server_id: 1, sync_binlog: 1}}
  system: {allocator: system, mycnf: {disable_log_bin: ~}}
  jemalloc: {allocator: jemalloc}
  tcmalloc: {allocator: tcmalloc}
engines: [InnoDB, MyISAM]
workloads:
  write: {slap: {load_type: write, number_int_cols: 2, number_char_cols: 2, primary_key: guid}}
concurrency: [2]
length: 300
",
    )
    .unwrap();
    let out = tmp.path().join("run");
    let run = rmatrix(&[
        "run",
        matrix.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let rows = result_rows(&out);
    assert_eq!(rows.len(), 12);
    for r in &rows {
        assert_eq!(r["status"], "ok", "{r:?}");
        // The client's count is what the server counted.
        for c in ["queries", "srv_questions", "srv_com_insert"] {
            assert_eq!(r[c], "300", "{c}: {r:?}");
        }
    }

    // MySQL 8+ logs binary unless told not to; both spellings of "off" are read back.
    let vars = |d: &str| -> serde_json::Value {
        let p = out.join("servers").join(d).join("variables.json");
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    assert_eq!(vars("mysql-9.7__default")["log_bin"], "ON");
    for (d, setting, want) in [
        ("binlog-off", "skip-log-bin", "OFF"),
        ("system", "disable_log_bin", "OFF"),
        ("binlog-on", "log_bin", "ON"),
    ] {
        let checks = verified(&out, &format!("mysql-9.7__{d}"));
        let c = check(&checks, setting);
        assert_eq!(
            (&c["variable"], &c["status"]),
            (&"log_bin".into(), &"ok".into())
        );
        assert_eq!(vars(&format!("mysql-9.7__{d}"))["log_bin"], want, "{d}");
    }

    // The allocator: from the server process's maps, the preloaded file wherever the image
    // keeps it; `system` maps neither preload (Debian's mysqld links libtcmalloc.so.4 itself).
    for (d, lib) in [
        ("jemalloc", Some("libjemalloc.so.2")),
        ("tcmalloc", Some("libtcmalloc_minimal.so.4")),
        ("system", None),
    ] {
        let checks = verified(&out, &format!("mysql-9.7__{d}"));
        let c = check(&checks, "allocator");
        assert_eq!(c["variable"], "/proc/<pid>/maps");
        assert_eq!(c["status"], "ok", "{d}: {c}");
        let actual = c["actual"].as_str().unwrap();
        match lib {
            Some(lib) => assert!(actual.contains(lib), "{d}: {actual}"),
            None => assert!(
                !actual.contains("jemalloc") && !actual.contains("tcmalloc_minimal"),
                "{actual}"
            ),
        }
        // The server is the one the build name promised.
        let f = check(&checks, "server");
        assert_eq!(f["status"], "ok");
        assert!(
            f["actual"].as_str().unwrap().starts_with("MySQL (9.7"),
            "{f}"
        );
    }
}

/// MySQL counts deadlocks in INNODB_METRICS (`lock_deadlocks`, on by default), not in the
/// `Innodb_deadlocks` status MariaDB has. Read outside the measured phase (its snapshots are
/// the driver's), it is put where the shared count checks look.
async fn deadlock_count(dep: &Deployed) -> u64 {
    use mysql_async::prelude::Queryable;
    use rmatrix::servers::mysql::MysqlClient;
    let mut conn = dep.endpoint.connect(None).await.unwrap();
    let n: Option<(i64, String)> = conn
        .query_first(
            "SELECT COUNT, STATUS FROM information_schema.INNODB_METRICS \
             WHERE NAME = 'lock_deadlocks'",
        )
        .await
        .unwrap();
    // Remembered: the next phase waits until the server has taken its quit.
    rmatrix::servers::mysql::quits::close(conn).await;
    let (n, status) = n.expect("lock_deadlocks in INNODB_METRICS");
    assert_eq!(status, "enabled");
    n as u64
}

fn put_deadlocks(m: &mut rmatrix::measure::measurement::Measurement, before: u64, after: u64) {
    assert_eq!(
        m.server.get("Innodb_deadlocks"),
        None,
        "MySQL has no such status"
    );
    m.server.insert("Innodb_deadlocks".into(), after - before);
}

fn oltp(test: OltpTest) -> OltpSpec {
    OltpSpec {
        test,
        tables: 2,
        table_size: 1000,
        ..OltpSpec::default()
    }
}

/// The oltp driver's every test, one client and four: each count equals the server's
/// (caching_sha2_password over TCP without TLS: mysql_async's RSA key exchange).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oltp_counts_agree_on_mysql() {
    let run_id = format!("mysqltest-oltp-{}", std::process::id());
    let _cleanup = Cleanup(run_id.clone());
    let tmp = tempfile::tempdir().unwrap();
    let dep = server(&run_id, tmp.path()).await;
    assert!(dep.version.starts_with("9.7"), "{}", dep.version);
    assert_eq!(
        dep.variables.get("default_authentication_plugin").cloned(),
        None,
        "9.x has no default_authentication_plugin: caching_sha2_password only"
    );
    for test in OltpTest::ALL {
        for (threads, events) in [(1, 100), (4, 200)] {
            let s = oltp(test);
            let before = deadlock_count(&dep).await;
            let mut m = run_iteration(
                ServerKind::Mysql,
                &Iteration {
                    endpoint: &dep.endpoint,
                    concurrency: threads,
                    warmup: None,
                    length: Length::Queries(events),
                    live: &Arc::new(AtomicU64::new(0)),
                    window: &Window::default(),
                    pace: None,
                    phase: None,
                },
                &s,
                Some("InnoDB"),
            )
            .await
            .unwrap_or_else(|e| panic!("{}: {e:#}", test.name()));
            put_deadlocks(&mut m, before, deadlock_count(&dep).await);
            assert_eq!(m.commits, events, "{}", test.name());
            assert_server_agrees(&s, &m);
        }
    }
}

/// sysbench (Debian's, linked with MariaDB Connector/C) connects with caching_sha2_password
/// and its counts are the server's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sysbench_counts_agree_on_mysql() {
    let run_id = format!("mysqltest-sb-{}", std::process::id());
    let _cleanup = Cleanup(run_id.clone());
    let tmp = tempfile::tempdir().unwrap();
    let dep = server(&run_id, tmp.path()).await;
    let spec: rmatrix::workloads::sysbench::SysbenchSpec = rmatrix::input::yaml::from_str(
        "{test: oltp_read_write, options: {tables: 2, table_size: 1000}}",
    )
    .unwrap();
    let before = deadlock_count(&dep).await;
    let mut got = rmatrix::workloads::sysbench::iteration::run_iteration(
        ServerKind::Mysql,
        &Iteration {
            endpoint: &dep.endpoint,
            concurrency: 2,
            warmup: None,
            length: Length::Time(std::time::Duration::from_secs(3)),
            live: &Arc::new(AtomicU64::new(0)),
            window: &Window::default(),
            pace: None,
            phase: None,
        },
        &spec,
    )
    .await
    .unwrap_or_else(|e| panic!("{e:#}"));
    put_deadlocks(&mut got, before, deadlock_count(&dep).await);
    assert!(got.commits > 0);
    let failed_writes = deadlocks("sysbench oltp_read_write", &got);
    assert_eq!(srv(&got, "Com_commit"), got.commits, "Com_commit");
    assert_eq!(srv(&got, "Com_select"), got.reads.unwrap(), "Com_select");
    assert_eq!(
        srv(&got, "Com_begin"),
        got.commits + failed_writes,
        "Com_begin"
    );
}

/// Every sql-bench group on MySQL, per operation: the server's `Com_*` are what was sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlbench_counts_agree_on_mysql() {
    let run_id = format!("mysqltest-sqlbench-{}", std::process::id());
    let _cleanup = Cleanup(run_id.clone());
    let tmp = tempfile::tempdir().unwrap();
    let dep = server(&run_id, tmp.path()).await;
    crate::common::counts::every_sqlbench_group_counts(&dep).await;
}
