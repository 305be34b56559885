//! The oltp driver against a real MariaDB in Docker: every sysbench test name runs, and what
//! the client counted equals what the server counted. Run with `--test-threads=1`.

use crate::common::counts::{assert_server_agrees, deadlocks, srv};
use crate::common::Cleanup;

use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use rmatrix::matrix::Length;
use rmatrix::measure::cgroup::Window;
use rmatrix::measure::measurement::Measurement;
use rmatrix::results::samples::{SampleSink, SAMPLES_CSV};
use rmatrix::results::RunDir;
use rmatrix::servers::mysql::MysqlClient;
use rmatrix::servers::spec::ServerKind;
use rmatrix::servers::{Deployed, Endpoint};
use rmatrix::workloads::oltp::driver::run_iteration;
use rmatrix::workloads::oltp::prepare;
use rmatrix::workloads::oltp::{OltpSpec, OltpTest};
use rmatrix::workloads::Iteration;

async fn server(run_id: &str, dir: &Path) -> Deployed {
    crate::common::mariadb_10_11(run_id, dir, "oltp-test-pw").await
}

fn spec(test: OltpTest) -> OltpSpec {
    OltpSpec {
        test,
        // 4 tables x 9 statements: more than mysql_async's default statement cache.
        tables: 4,
        table_size: 1000,
        ..OltpSpec::default()
    }
}

async fn run(ep: &Endpoint, spec: &OltpSpec, threads: u32, length: Length) -> Measurement {
    run_iteration(
        ServerKind::Mysql,
        &Iteration {
            endpoint: ep,
            concurrency: threads,
            warmup: None,
            length,
            live: &Arc::new(AtomicU64::new(0)),
            window: &Window::default(),
            pace: None,
            phase: None,
        },
        spec,
        Some("InnoDB"),
    )
    .await
    .unwrap_or_else(|e| panic!("{}: {e:#}", spec.test.name()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_test_runs_and_the_server_counts_the_same() {
    let run_id = format!("oltptest-{}", std::process::id());
    let _cleanup = Cleanup(run_id.clone());
    let tmp = tempfile::tempdir().unwrap();
    let dep = server(&run_id, tmp.path()).await;
    let ep = &dep.endpoint;

    let s = spec(OltpTest::OltpReadWrite);
    assert_eq!(
        prepare::ensure(
            ServerKind::Mysql,
            ep,
            &s,
            Some("InnoDB"),
            &Default::default()
        )
        .await
        .unwrap(),
        prepare::Prepared::Loaded
    );
    // Loaded once: sysbench's schema, row count and secondary index.
    assert_eq!(
        prepare::ensure(
            ServerKind::Mysql,
            ep,
            &s,
            Some("InnoDB"),
            &Default::default()
        )
        .await
        .unwrap(),
        prepare::Prepared::Kept
    );
    let mut conn = ep.connect(Some("sbtest")).await.unwrap();
    use mysql_async::prelude::Queryable;
    let n: Option<(u64, u64, u64)> = conn
        .query_first("SELECT COUNT(*), MIN(id), MAX(id) FROM sbtest2")
        .await
        .unwrap();
    assert_eq!(n, Some((1000, 1, 1000)));
    let idx: Option<String> = conn
        .query_first("SELECT index_name FROM information_schema.statistics WHERE table_schema='sbtest' AND table_name='sbtest1' AND column_name='k'")
        .await
        .unwrap();
    assert_eq!(idx.as_deref(), Some("k_1"));
    let c: Option<String> = conn
        .query_first("SELECT c FROM sbtest1 LIMIT 1")
        .await
        .unwrap();
    assert_eq!(c.map(|c| c.len()), Some(119));

    for test in OltpTest::ALL {
        let mut s = spec(test);
        if matches!(
            test,
            OltpTest::SelectRandomPoints | OltpTest::SelectRandomRanges
        ) {
            s.tables = 1;
        }
        // One client: no deadlocks, so every counter must match exactly.
        let m = run(ep, &s, 1, Length::Queries(150)).await;
        assert_eq!(m.commits, 150, "{}: events", test.name());
        assert_eq!(m.errors, 0, "{}: {:?}", test.name(), m.first_error);
        assert!(m.queries >= 150, "{}", test.name());
        assert_server_agrees(&s, &m);
        // Several clients: the event budget is exact and the counts still add up.
        let m = run(ep, &s, 4, Length::Queries(200)).await;
        assert_eq!(m.commits, 200, "{}", test.name());
        assert_server_agrees(&s, &m);
    }

    // skip_trx: no BEGIN/COMMIT, still sysbench's transactions (events).
    let s = OltpSpec {
        skip_trx: true,
        ..spec(OltpTest::OltpReadOnly)
    };
    let m = run(ep, &s, 2, Length::Queries(100)).await;
    assert_eq!(m.queries, 100 * 14);
    assert_server_agrees(&s, &m);

    // Eight clients writing to ten rows: deadlocks, retried as sysbench retries them, and
    // still every count adds up (each error placed as a deadlock the server counted).
    let s = OltpSpec {
        tables: 1,
        table_size: 10,
        db: "sbtest_hot".into(),
        ..spec(OltpTest::OltpWriteOnly)
    };
    let m = run(ep, &s, 8, Length::Queries(400)).await;
    assert_eq!(m.commits, 400);
    assert!(
        m.errors > 0,
        "no deadlock: the accounting of errors was not exercised"
    );
    assert_server_agrees(&s, &m);

    // A timed run writes one sample per second and fills the fairness columns.
    let dir = RunDir {
        path: tmp.path().to_path_buf(),
    };
    let cell = rmatrix::matrix::Cell {
        server: "s".into(),
        config: "c".into(),
        engine: None,
        workload: "ps".into(),
        concurrency: 2,
        rate: None,
    };
    let sink = SampleSink::new(&dir, &cell, 1);
    let s = spec(OltpTest::OltpPointSelect);
    let m = run_iteration(
        ServerKind::Mysql,
        &Iteration {
            endpoint: ep,
            concurrency: 2,
            warmup: Some(Length::Time(Duration::from_millis(500))),
            length: Length::Time(Duration::from_millis(2500)),
            live: &Arc::new(AtomicU64::new(0)),
            window: &Window::default(),
            pace: None,
            phase: None,
        },
        &s,
        Some("InnoDB"),
    )
    .await
    .unwrap();
    sink.write(&m.samples).unwrap();
    assert_server_agrees(&s, &m);
    let (avg, _sd) = m.thread_events.unwrap();
    assert_eq!(avg * 2.0, m.commits as f64);
    let text = std::fs::read_to_string(tmp.path().join(SAMPLES_CSV)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // One line per complete second of the measured phase, which ends with the last
    // client's transaction: 2 for 2.5 s, 3 if that end ran past 3 s (a loaded machine), so
    // counted from the phase's own seconds.
    let full = m.seconds.floor() as usize;
    assert!(full >= 2, "a 2.5 s phase lasted {} s", m.seconds);
    assert_eq!(
        lines.len(),
        1 + full,
        "header + {full} full seconds:\n{text}"
    );
    let per_second: f64 = lines[1..]
        .iter()
        .map(|l| l.split(',').nth(8).unwrap().parse::<f64>().unwrap())
        .sum();
    assert!(per_second > 0.0 && per_second <= m.commits as f64, "{text}");
    dropped_results_leave_the_connection_in_step(ep);
}

/// vendor/mysql's patch: a dropped result's rows are skipped, not decoded. Whatever was
/// dropped (many rows, several result sets, an error after some rows), the next statement on
/// the connection gets its own answer.
fn dropped_results_leave_the_connection_in_step(ep: &Endpoint) {
    use mysql::prelude::Queryable;
    let mut c = mysql::Conn::new(ep.blocking_opts(None)).unwrap();
    c.query_drop("CREATE DATABASE IF NOT EXISTS rmatrix_drop_test")
        .unwrap();
    c.query_drop("USE rmatrix_drop_test").unwrap();
    c.query_drop("SELECT seq, REPEAT('x', 300) FROM seq_1_to_20000")
        .unwrap();
    assert_eq!(c.query_first::<u64, _>("SELECT 7").unwrap(), Some(7));
    c.query_drop(
        "CREATE OR REPLACE PROCEDURE rmatrix_drop_test.two_sets() \
         BEGIN SELECT seq FROM seq_1_to_500; SELECT 'second' FROM seq_1_to_3; END",
    )
    .unwrap();
    c.query_drop("CALL rmatrix_drop_test.two_sets()").unwrap();
    assert_eq!(c.query_first::<u64, _>("SELECT 8").unwrap(), Some(8));
    // The error comes after rows: the procedure's SIGNAL fails it once its first result set
    // was sent.
    c.query_drop(
        "CREATE OR REPLACE PROCEDURE rmatrix_drop_test.fails() \
         BEGIN SELECT seq FROM seq_1_to_500; \
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'rmatrix-after-rows'; END",
    )
    .unwrap();
    let err = c.query_drop("CALL rmatrix_drop_test.fails()");
    assert_eq!(
        c.query_first::<u64, _>("SELECT 9").unwrap(),
        Some(9),
        "{err:?}"
    );
    c.query_drop("DROP DATABASE rmatrix_drop_test").unwrap();
}

/// Connections killed by the server mid-run: each client reconnects, re-prepares and goes on;
/// the reconnects are counted and the cell still succeeds.
/// oltp_insert without auto_inc takes its ids from one `rand.unique()` sequence per table
/// set: a warm-up and three iterations on the same tables insert every id once (one
/// sequence per phase, as before, starts each at index 0 under a new random offset, and
/// its ids meet earlier ones by the birthday rule: a duplicate key stops a client).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oltp_insert_ids_are_unique_across_phases_and_iterations() {
    use mysql_async::prelude::Queryable;
    let run_id = format!("oltptest-unique-{}", std::process::id());
    let _cleanup = Cleanup(run_id.clone());
    let tmp = tempfile::tempdir().unwrap();
    let dep = server(&run_id, tmp.path()).await;
    let ep = &dep.endpoint;
    let s = OltpSpec {
        tables: 2,
        auto_inc: false,
        ..spec(OltpTest::OltpInsert)
    };
    const EVENTS: u64 = 5000;
    for iteration in 0..3 {
        let m = run_iteration(
            ServerKind::Mysql,
            &Iteration {
                endpoint: ep,
                concurrency: 2,
                warmup: (iteration == 0).then_some(Length::Queries(EVENTS)),
                length: Length::Queries(EVENTS),
                live: &Arc::new(AtomicU64::new(0)),
                window: &Window::default(),
                pace: None,
                phase: None,
            },
            &s,
            Some("InnoDB"),
        )
        .await
        .unwrap_or_else(|e| panic!("iteration {iteration}: {e:#}"));
        assert_eq!((m.commits, m.errors), (EVENTS, 0), "{:?}", m.first_error);
        assert_server_agrees(&s, &m);
    }
    let mut conn = ep.connect(Some("sbtest")).await.unwrap();
    let (mut rows, mut distinct) = (0u64, 0u64);
    for n in 1..=2 {
        let (r, d): (u64, u64) = conn
            .query_first(format!(
                "SELECT COUNT(*), COUNT(DISTINCT id) FROM sbtest{n}"
            ))
            .await
            .unwrap()
            .unwrap();
        rows += r;
        distinct += d;
    }
    assert_eq!(
        rows,
        4 * EVENTS,
        "warm-up and three iterations, every insert kept"
    );
    // Across tables too: sysbench's sequence is one for all of them.
    let across: u64 = conn
        .query_first("SELECT COUNT(DISTINCT id) FROM (SELECT id FROM sbtest1 UNION ALL SELECT id FROM sbtest2) t")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((distinct, across), (rows, rows));
    let next: u64 = conn
        .query_first("SELECT next_index FROM rmatrix_oltp_unique")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(next, 4 * EVENTS, "the sequence went on from phase to phase");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_connections_reconnect_and_are_counted() {
    use mysql_async::prelude::Queryable;
    let run_id = format!("oltptest-kill-{}", std::process::id());
    let _cleanup = Cleanup(run_id.clone());
    let tmp = tempfile::tempdir().unwrap();
    let dep = server(&run_id, tmp.path()).await;
    let ep = dep.endpoint.clone();
    let s = spec(OltpTest::OltpPointSelect);
    prepare::ensure(
        ServerKind::Mysql,
        &ep,
        &s,
        Some("InnoDB"),
        &Default::default(),
    )
    .await
    .unwrap();
    let mut admin = ep.connect(None).await.unwrap();
    let before: Vec<u64> = admin
        .query("SELECT id FROM information_schema.processlist")
        .await
        .unwrap();

    let running = tokio::spawn({
        let (ep, s) = (ep.clone(), s.clone());
        async move { run(&ep, &s, 2, Length::Time(Duration::from_secs(4))).await }
    });
    // The run opens its two clients first and its counter connection last: kill the two,
    // 1.5 s into the run, or once the three are there if a loaded machine opened them later
    // (waited for, not assumed after a fixed sleep; the 4 s phase starts with them).
    let spawned = std::time::Instant::now();
    let ids = loop {
        let mut ids: Vec<u64> = admin
            .query("SELECT id FROM information_schema.processlist WHERE db = 'sbtest' ORDER BY id")
            .await
            .unwrap();
        ids.retain(|id| !before.contains(id));
        if ids.len() >= 3 || spawned.elapsed() > Duration::from_secs(30) {
            break ids;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    tokio::time::sleep(Duration::from_millis(1500).saturating_sub(spawned.elapsed())).await;
    assert_eq!(
        ids.len(),
        3,
        "two clients and one counter connection: {ids:?}"
    );
    for id in &ids[..2] {
        admin
            .query_drop(format!("KILL CONNECTION {id}"))
            .await
            .unwrap();
    }
    let m = running.await.unwrap();
    assert_eq!(m.reconnects, Some(2), "{:?}", m.first_error);
    assert_eq!(m.errors, 0);
    assert!(m.commits > 0);
}

/// One sysbench iteration on MariaDB, closed loop.
async fn sysbench_iteration(
    endpoint: &Endpoint,
    spec: &rmatrix::workloads::sysbench::SysbenchSpec,
    concurrency: u32,
    warmup: Option<Length>,
    length: Length,
    window: &Window,
) -> anyhow::Result<Measurement> {
    let it = rmatrix::workloads::Iteration {
        endpoint,
        concurrency,
        warmup,
        length,
        live: &Arc::new(AtomicU64::new(0)),
        window,
        pace: None,
        phase: None,
    };
    rmatrix::workloads::sysbench::iteration::run_iteration(ServerKind::Mysql, &it, spec).await
}

/// The sysbench driver against a real sysbench run: its report parsed into the same columns,
/// and sysbench's counts agree with the server's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sysbench_driver_parses_a_real_run() {
    if Command::new("sysbench").arg("--version").output().is_err() {
        panic!("sysbench is not installed: apt-get install -y sysbench");
    }
    let run_id = format!("oltptest-sb-{}", std::process::id());
    let _cleanup = Cleanup(run_id.clone());
    let tmp = tempfile::tempdir().unwrap();
    let dep = server(&run_id, tmp.path()).await;
    let spec: rmatrix::workloads::sysbench::SysbenchSpec = rmatrix::input::yaml::from_str(
        "{test: oltp_read_write, options: {tables: 2, table_size: 1000}}",
    )
    .unwrap();
    let m: rmatrix::matrix::Matrix =
        rmatrix::input::yaml::from_str("{servers: {}, workloads: {}, warmup: 2s, length: 2s}")
            .unwrap();
    let dir = RunDir {
        path: tmp.path().to_path_buf(),
    };
    let cell = rmatrix::matrix::Cell {
        server: "s".into(),
        config: "c".into(),
        engine: None,
        workload: "sb".into(),
        concurrency: 2,
        rate: None,
    };
    let sink = SampleSink::new(&dir, &cell, 1);
    // The server's own cost over the measured phase, from its container's cgroup.
    let window = Window::new(dep.cgroup.clone());
    let got = sysbench_iteration(
        &dep.endpoint,
        &spec,
        2,
        m.warmup,
        m.length.unwrap(),
        &window,
    )
    .await
    .unwrap();
    let used = window.used().expect("the container's cgroup is readable");
    assert!(used.cpu_ns > 0, "{used:?}");
    // Two sysbench threads on 2 cores: the server cannot use more than the wall time of
    // both cores.
    assert!(
        (used.cpu_ns as f64) < got.seconds * 2.0e9 * 1.05,
        "{used:?} in {} s",
        got.seconds
    );
    sink.write(&got.samples).unwrap();
    // The warm-up run's per-second lines, for the per-second chart; sysbench has no p99.
    // A 2-second sysbench run prints the second line only when its report thread fires
    // before the time limit stops the run (sysbench's own race: seen once in CI with one
    // line), so one or two.
    assert!(
        (1..=2).contains(&got.warmup_samples.len()),
        "{:?}",
        got.warmup_samples
    );
    assert!(got
        .warmup_samples
        .iter()
        .all(|s| s.tps > 0.0 && s.lat_p99_ms.is_none()));
    assert!(got.commits > 0);
    assert_eq!(
        got.queries,
        got.reads.unwrap() + got.writes.unwrap() + got.others.unwrap()
    );
    let lat = got.reported_latency.unwrap();
    assert!(lat.min_ms <= lat.avg_ms && lat.avg_ms <= lat.max_ms);
    assert!(lat.p95_ms.is_finite());
    assert!(got.client_cpu_s.unwrap() > 0.0);
    // sysbench's transactions and selects are the server's commits and selects; a
    // transaction a deadlock rolled back is begun again.
    let failed_writes = deadlocks("sysbench oltp_read_write", &got);
    assert_eq!(srv(&got, "Com_commit"), got.commits, "Com_commit");
    assert_eq!(srv(&got, "Com_select"), got.reads.unwrap(), "Com_select");
    assert_eq!(
        srv(&got, "Com_begin"),
        got.commits + failed_writes,
        "Com_begin"
    );
    let text = std::fs::read_to_string(tmp.path().join(SAMPLES_CSV)).unwrap();
    assert!(text.lines().count() >= 2, "{text}");
    // Prepared once: a second iteration does not reload (marker kept).
    let again = sysbench_iteration(
        &dep.endpoint,
        &spec,
        1,
        m.warmup,
        m.length.unwrap(),
        &Window::default(),
    )
    .await
    .unwrap();
    assert!(again.commits > 0);
}
