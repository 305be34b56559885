//! The client's counts against the server's, shared by the tests of each server family.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use rmatrix::measure::cgroup::Window;
use rmatrix::measure::measurement::Measurement;
use rmatrix::servers::Deployed;
use rmatrix::workloads::oltp::OltpSpec;
use rmatrix::workloads::sqlbench::driver::run_suite;
use rmatrix::workloads::sqlbench::{groups, Group, Prepare, SqlbenchSpec};

pub fn srv(m: &Measurement, k: &str) -> u64 {
    m.server.get(k).copied().unwrap_or(0)
}

/// The ignored errors of a run (sysbench's: deadlock, record changed, lock-wait timeout),
/// each attributed to a deadlock the server counted. A deadlock's victim is always waiting for
/// a row lock, so the statement that failed is a write (the oltp selects take no locks), and
/// its transaction was rolled back. An error the server does not count as a deadlock cannot be
/// placed, and then the counts cannot be checked: that fails.
pub fn deadlocks(name: &str, m: &Measurement) -> u64 {
    let deadlocks = srv(m, "Innodb_deadlocks");
    assert_eq!(
        m.errors, deadlocks,
        "{name}: {} ignored errors but the server counted {deadlocks} deadlocks (first error: \
         {:?}); an error that is not a deadlock cannot be placed, so the client and server \
         counts cannot be compared",
        m.errors, m.first_error
    );
    deadlocks
}

/// Client counts must equal the server's: every statement, select, commit and write, also
/// when deadlocks made clients retry.
pub fn assert_server_agrees(spec: &OltpSpec, m: &Measurement) {
    let name = spec.test.name();
    let reads = m.reads.unwrap();
    let writes = m.writes.unwrap();
    let others = m.others.unwrap();
    assert_eq!(m.queries, reads + writes + others, "{name}");
    // Failed statements reach the server too (sysbench's ignored errors).
    assert_eq!(
        srv(m, "Questions"),
        m.queries + m.errors,
        "{name}: Questions"
    );
    let failed_writes = deadlocks(name, m);
    assert_eq!(srv(m, "Com_select"), reads, "{name}: Com_select");
    let trx = spec.test.transactional() && !spec.skip_trx;
    let commits = if trx { m.commits } else { 0 };
    assert_eq!(srv(m, "Com_commit"), commits, "{name}: Com_commit");
    // A transaction rolled back by a deadlock is begun again: one more BEGIN each.
    let begins = if trx { commits + failed_writes } else { 0 };
    assert_eq!(srv(m, "Com_begin"), begins, "{name}: Com_begin");
    // The client counts BEGIN and COMMIT as `others`, and a failed write as an error.
    let dml = srv(m, "Com_insert") + srv(m, "Com_update") + srv(m, "Com_delete");
    assert_eq!(
        dml,
        writes + others - begins - commits + failed_writes,
        "{name}: DML statements"
    );
    // The rollbacks of deadlocks are the server's own, not statements.
    assert_eq!(srv(m, "Com_rollback"), 0, "{name}");
}

/// Every sqlbench group at a tiny size against `dep`: each operation reported with its loop
/// count, the promised table sizes held, and the server's `Com_*` counters for each operation
/// equal to the statements the client sent.
pub async fn every_sqlbench_group_counts(dep: &Deployed) {
    let mut problems = Vec::new();
    // Every group as sql-bench runs it (emulated prepare), and test-insert's two prepared
    // selects also prepared on the server.
    let runs = Group::ALL
        .into_iter()
        .map(|g| (g, Prepare::Emulated))
        .chain([(Group::Insert, Prepare::Server)]);
    for (group, prepare) in runs {
        let spec = SqlbenchSpec {
            groups: vec![group],
            small_test: true,
            scale: 0.1,
            prepare,
            ..SqlbenchSpec::default()
        };
        let suite = run_suite(
            dep,
            &spec,
            "InnoDB",
            Arc::new(AtomicU64::new(0)),
            &Window::default(),
        )
        .await
        .unwrap_or_else(|e| panic!("{}: {e:#}", group.name()));
        let plan = groups::plan(group, &spec, "InnoDB");
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
