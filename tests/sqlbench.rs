//! The sqlbench driver against a real MariaDB in Docker: every group runs at a tiny size,
//! every operation is reported with its loop count, the tables hold what the group inserted
//! (checked by the driver after each operation that promises a size), and the server's
//! `Com_*` counters for each operation equal the statements the client sent. Run with
//! `--test-threads=1`.

mod common;
use common::Cleanup;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use rmatrix::measure::cgroup::Window;
use rmatrix::servers::Deployed;
use rmatrix::workloads::sqlbench::driver::run_suite;
use rmatrix::workloads::sqlbench::groups;
use rmatrix::workloads::sqlbench::{Group, SqlbenchSpec};

async fn server(run_id: &str, dir: &Path) -> Deployed {
    common::mariadb_10_11(run_id, dir, "sqlbench-test-pw").await
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
    let mut problems = Vec::new();
    for group in Group::ALL {
        let spec = tiny(group);
        let suite = run_suite(
            &dep.endpoint,
            &spec,
            "InnoDB",
            Arc::new(AtomicU64::new(0)),
            &Window::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("{}: {e:#}", group.name()));
        let plan = groups::plan(group, spec.size(), "InnoDB");
        let m = &suite.measurement;
        let timed: Vec<_> = plan.iter().filter(|o| !o.is_setup()).collect();
        assert_eq!(m.operations.len(), timed.len(), "{}", group.name());
        let steps: usize = plan.iter().map(|o| o.steps.len()).sum();
        assert_eq!(m.queries, steps as u64, "{}: statements sent", group.name());
        assert!(m.seconds > 0.0);
        // Every promised table size was checked, and held.
        let promised: usize = plan.iter().map(|o| o.rows_after.len()).sum();
        // test-create's tables stay empty: it promises no sizes.
        assert!(promised > 0 || group == Group::Create, "{}", group.name());
        assert_eq!(suite.checks.len(), promised, "{}", group.name());
        assert!(suite.checks.iter().all(|c| c.found == c.expected));
        // The suite's own Questions: every step of every operation, setup included.
        let questions: u64 = plan.iter().map(|o| o.com_counters()["Questions"]).sum();
        if m.server.get("Questions") != Some(&questions) {
            problems.push(format!(
                "{}: the suite's Questions {:?}, sent {questions}",
                group.name(),
                m.server.get("Questions")
            ));
        }
        for (op, line) in timed.iter().zip(&m.operations) {
            assert_eq!((line.name.as_str(), line.loops), (op.name, op.loops));
            assert_eq!(line.group, group.name());
            assert_eq!(line.statements, op.steps.len() as u64);
            assert!(line.seconds > 0.0, "{}", op.name);
            let want: BTreeMap<String, u64> = op
                .com_counters()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            let got: BTreeMap<String, u64> = line
                .server
                .iter()
                .filter(|(k, _)| k.starts_with("Com_") || *k == "Connections" || *k == "Questions")
                .map(|(k, v)| (k.clone(), *v))
                .collect();
            if got != want {
                problems.push(format!(
                    "{} {}: server {got:?}\n   client {want:?}",
                    group.name(),
                    op.name
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
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
