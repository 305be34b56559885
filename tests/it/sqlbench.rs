//! The sqlbench driver against a real MariaDB in Docker: every group runs at a tiny size,
//! every operation is reported with its loop count, the tables hold what the group inserted
//! (checked by the driver after each operation that promises a size), and the server's
//! `Com_*` counters for each operation equal the statements the client sent. Run with
//! `--test-threads=1`.

use crate::common::Cleanup;

use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use rmatrix::measure::cgroup::Window;
use rmatrix::servers::Deployed;
use rmatrix::workloads::sqlbench::driver::run_suite;
use rmatrix::workloads::sqlbench::groups;
use rmatrix::workloads::sqlbench::{Group, SqlbenchSpec, Transport};

async fn server(run_id: &str, dir: &Path) -> Deployed {
    crate::common::mariadb_10_11(run_id, dir, "sqlbench-test-pw").await
}

fn tiny(group: Group) -> SqlbenchSpec {
    SqlbenchSpec {
        groups: vec![group],
        small_test: true,
        scale: 0.1,
        ..SqlbenchSpec::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_group_runs_and_the_server_counts_what_was_sent() {
    let run_id = format!("sqlbenchtest-{}", std::process::id());
    let _cleanup = Cleanup(run_id.clone());
    let tmp = tempfile::tempdir().unwrap();
    let dep = server(&run_id, tmp.path()).await;
    crate::common::counts::every_sqlbench_group_counts(&dep).await;
}

/// sql-bench skips test-transactions on a server without transactions; so does the driver
/// for an engine without them, and the other groups run on it as on InnoDB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn myisam_skips_the_transactions_group() {
    let run_id = format!("sqlbenchmyisam-{}", std::process::id());
    let _cleanup = Cleanup(run_id.clone());
    let tmp = tempfile::tempdir().unwrap();
    let dep = server(&run_id, tmp.path()).await;
    let spec = SqlbenchSpec {
        groups: vec![Group::Transactions, Group::Insert],
        ..tiny(Group::Insert)
    };
    let suite = run_suite(
        &dep,
        &spec,
        "MyISAM",
        Arc::new(AtomicU64::new(0)),
        &Window::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(suite.skipped, [Group::Transactions]);
    let ops = &suite.measurement.operations;
    assert!(ops.iter().all(|o| o.group == "insert"));
    let plan = groups::plan(Group::Insert, &spec, "MyISAM");
    assert_eq!(ops.len(), plan.iter().filter(|o| !o.is_setup()).count());
    assert!(suite.checks.iter().all(|c| c.found == c.expected));
    // An unknown engine is refused before anything is created.
    let err = run_suite(
        &dep,
        &spec,
        "NoSuchEngine",
        Arc::new(AtomicU64::new(0)),
        &Window::default(),
    )
    .await
    .err()
    .expect("refused");
    assert!(format!("{err:#}").contains("storage engine `NoSuchEngine` is not available"));
}

/// sql-bench connects to `localhost`, the server's unix socket, unless told `--tcpip`: the
/// suite's connections (its own and test-connect's new ones) go through the socket the
/// container shares with this host by default, over TCP with `transport: tcp`, as the
/// server's process list shows them (a socket client's host has no port).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_suite_connects_through_the_socket_unless_told_tcp() {
    let run_id = format!("sqlbenchsock-{}", std::process::id());
    let _cleanup = Cleanup(run_id.clone());
    let tmp = tempfile::tempdir().unwrap();
    let dep = server(&run_id, tmp.path()).await;
    let spec = SqlbenchSpec {
        scale: 0.02,
        ..tiny(Group::Connect)
    };
    let run = |spec: SqlbenchSpec| {
        let dep = &dep;
        async move {
            run_suite(
                dep,
                &spec,
                "InnoDB",
                Arc::new(AtomicU64::new(0)),
                &Window::default(),
            )
            .await
            .unwrap_or_else(|e| panic!("{e:#}"))
        }
    };
    assert_eq!(spec.transport, Transport::Unix, "the default");
    let unix = run(spec.clone()).await;
    assert_eq!(unix.client_host, "localhost");
    let connects = |s: &rmatrix::workloads::sqlbench::driver::Suite| {
        s.measurement
            .operations
            .iter()
            .find(|o| o.name == "connect")
            .map(|o| (o.loops, o.server.get("Connections").copied()))
    };
    // Each of test-connect's connections was made, through the same socket.
    assert_eq!(connects(&unix), Some((10, Some(10))));
    let tcp = run(SqlbenchSpec {
        transport: Transport::Tcp,
        ..spec
    })
    .await;
    // A TCP client's host carries its port (`localhost:43364`, 127.0.0.1 resolved).
    let (_, port) = tcp
        .client_host
        .rsplit_once(':')
        .expect("a TCP client's port");
    assert!(port.parse::<u16>().is_ok(), "{}", tcp.client_host);
    assert_eq!(connects(&tcp), Some((10, Some(10))));
}

/// `rmatrix run` with a sqlbench workload connects through the socket by default and says so
/// in manifest.json, also from a run directory whose socket path is too long for a socket
/// address (the suite then reaches it through its directory's descriptor).
#[test]
fn a_run_records_the_socket_transport_in_its_manifest() {
    let run_id = format!("sqlbenchman-{}", std::process::id());
    let _cleanup = Cleanup(run_id.clone());
    let tmp = tempfile::tempdir().unwrap();
    let deep = tmp.path().join("a-run-directory-far-below".repeat(3));
    std::fs::create_dir_all(&deep).unwrap();
    let out = deep.join(&run_id);
    let matrix = tmp.path().join("m.yaml");
    std::fs::write(
        &matrix,
        "servers:\n  mariadb-10.11: {build: mariadb-10.11}\nengines: [InnoDB]\n\
         workloads:\n  sb: {sqlbench: {groups: [connect], small_test: true, scale: 0.02}}\n\
         concurrency: [1]\niterations: 1\n",
    )
    .unwrap();
    let sock = out.join("servers/mariadb-10.11__default/sock/mysqld.sock");
    assert!(sock.as_os_str().len() > 108, "{}", sock.display());
    let r = crate::common::rmatrix(&[
        "run",
        matrix.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let man: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        man["workload_transports"],
        serde_json::json!({"sb": "unix socket"})
    );
    let rows = crate::common::result_rows(&out);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["status"], "ok", "{rows:?}");
    let ops = crate::common::csv_rows(&out.join("operations.csv"));
    let connect = ops.iter().find(|o| o["operation"] == "connect").unwrap();
    assert_eq!(connect["loops"], "10");
}
