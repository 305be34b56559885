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
use rmatrix::workloads::sqlbench::{Group, SqlbenchSpec};

async fn server(run_id: &str, dir: &Path) -> Deployed {
    crate::common::mariadb_10_11(run_id, dir, "sqlbench-test-pw").await
}

fn tiny(group: Group) -> SqlbenchSpec {
    SqlbenchSpec {
        groups: vec![group],
        small_test: true,
        scale: 0.1,
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
        &dep.endpoint,
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
    let plan = groups::plan(Group::Insert, spec.size(), "MyISAM");
    assert_eq!(ops.len(), plan.iter().filter(|o| !o.is_setup()).count());
    assert!(suite.checks.iter().all(|c| c.found == c.expected));
    // An unknown engine is refused before anything is created.
    let err = run_suite(
        &dep.endpoint,
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
