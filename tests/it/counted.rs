//! Counted mode (`counted: callgrind`) on a real Redis: the server runs under callgrind in an
//! image made from its own, each measured phase's instructions are counted between its edges,
//! the timer work (`serverCron`) is set apart, and the per-operation count of the same build
//! repeats across iterations.

use std::path::Path;
use std::process::Command;

use crate::common::Cleanup;

/// Run the counted matrix `text` (written to `tmp`) as run `name`, to its end with every
/// cell ok; its run directory.
fn run_counted(tmp: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let matrix = tmp.join(format!("{name}.yaml"));
    std::fs::write(&matrix, text).unwrap();
    let dir = tmp.join(name);
    let _guard = Cleanup(name.into());
    let out = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args(["run", matrix.to_str().unwrap(), "--quiet", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        crate::common::failed_rows(&dir)
    );
    dir
}

#[test]
fn a_counted_redis_run_counts_each_phases_instructions_per_operation() {
    let tmp = tempfile::tempdir().unwrap();
    let containers = Path::new(env!("CARGO_MANIFEST_DIR")).join("containers");
    let dir = run_counted(
        tmp.path(),
        "counted-run",
        &format!(
            "name: counted\n\
             servers:\n  redis:\n    build: {{dir: {}, args: {{suite: bookworm, package: redis-server}}}}\n\
             configs:\n  plain: {{redis_conf: {{save: \"\"}}}}\n\
             workloads:\n  get: {{redis: {{test: get, keyspace: 1000}}}}\n  \
             set: {{redis: {{test: set, keyspace: 1000}}}}\n\
             concurrency: [1]\niterations: 2\nwarmup: 200\nlength: 3000\n\
             counted: callgrind\n",
            containers.join("redis").display()
        ),
    );
    let rows = crate::common::result_rows(&dir);
    assert_eq!(rows.len(), 4);
    let num = |r: &std::collections::BTreeMap<String, String>, c: &str| -> f64 {
        r[c].parse().unwrap_or_else(|_| panic!("{c}: {r:?}"))
    };
    for workload in ["get", "set"] {
        let per_op: Vec<f64> = (rows.iter().filter(|r| r["workload"] == workload))
            .map(|r| {
                let (all, timer) = (num(r, "srv_instructions"), num(r, "srv_timer_instructions"));
                assert!(timer > 0.0 && timer < all / 2.0, "{r:?}");
                let per_op = num(r, "srv_instr_per_op");
                let expected = (all - timer) / num(r, "queries");
                assert!((per_op / expected - 1.0).abs() < 1e-6, "{r:?}");
                per_op
            })
            .collect();
        // A GET or SET of a small key costs a few thousand instructions on Redis 7.0
        // (about 5,000 and 6,100 on this machine).
        assert!(
            per_op.iter().all(|p| (1_000.0..50_000.0).contains(p)),
            "{per_op:?}"
        );
        // The same build counts within 3% of itself: the spread measured is up to 0.9% for
        // GET (the heap's layout moves string compares across alignments), 0.2% for SET.
        let spread = (per_op[0] - per_op[1]).abs() / per_op[0];
        assert!(spread < 0.03, "{workload}: {per_op:?}");
    }
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    assert!(manifest.contains("rmatrix/counted:"), "{manifest}");
}

/// MariaDB counted: a server that drops root (valgrind starts as `mysql`, vgdb speaks to it
/// as that user), many threads, InnoDB's background pool set apart as timer work; with binlog
/// on, the phase's instructions by function hold the binlog's writer.
#[test]
fn a_counted_mariadb_write_phase_counts_the_binlogs_functions() {
    let tmp = tempfile::tempdir().unwrap();
    let containers = Path::new(env!("CARGO_MANIFEST_DIR")).join("containers");
    let dir = run_counted(
        tmp.path(),
        "counted-mariadb",
        &format!(
            "name: counted-mariadb\n\
             servers:\n  mariadb-10.11: {{build: {{dir: {}, args: {{suite: bookworm}}}}}}\n\
             configs:\n  binlog-on: {{mycnf: {{log_bin: mysql-bin, server_id: 1}}}}\n\
             engines: [InnoDB]\n\
             workloads:\n  write: {{slap: {{load_type: write, number_int_cols: 2, \
             number_char_cols: 2, primary_key: guid}}}}\n\
             concurrency: [2]\niterations: 1\nlength: 200\ncounted: callgrind\n",
            containers.join("mariadb").display()
        ),
    );
    let rows = crate::common::result_rows(&dir);
    let per_op: f64 = rows[0]["srv_instr_per_op"].parse().unwrap();
    // An INSERT of a short row costs MariaDB 10.11 some 300,000 instructions here.
    assert!((20_000.0..5_000_000.0).contains(&per_op), "{rows:?}");
    let table = std::fs::read_to_string(
        dir.join("counted/mariadb-10.11__binlog-on__InnoDB__write__c2__1.tsv"),
    )
    .unwrap();
    assert!(table.contains("\tMYSQL_BIN_LOG::"), "{table}");
}

/// PostgreSQL counted: a server of one process per connection. Each backend the postmaster
/// forks runs under its own callgrind; the phase's count is the sum of their dumps, the
/// background processes' timer work set apart.
#[test]
fn a_counted_postgres_phase_sums_its_backends() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = run_counted(
        tmp.path(),
        "counted-postgres",
        "name: counted-postgres\n\
         servers:\n  postgres-15: {build: postgres-15}\n\
         configs:\n  default: {postgresql_conf: {autovacuum: \"off\"}}\n\
         workloads:\n  ps: {oltp: {test: oltp_point_select, tables: 1, table_size: 1000}}\n\
         concurrency: [2]\niterations: 1\nwarmup: 100\nlength: 600\ncounted: callgrind\n",
    );
    let rows = crate::common::result_rows(&dir);
    let per_op: f64 = rows[0]["srv_instr_per_op"].parse().unwrap();
    // A primary-key SELECT costs PostgreSQL 15 about 41,000 instructions; one of the two
    // backends alone would count about half of that per operation.
    assert!((28_000.0..100_000.0).contains(&per_op), "{rows:?}");
    let table =
        std::fs::read_to_string(dir.join("counted/postgres-15__default__ps__c2__1.tsv")).unwrap();
    // The backends' work is almost all of the phase's.
    let postgres_main = (table.lines())
        .find_map(|l| l.strip_suffix("\tPostgresMain"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(table.contains("\t_bt_first\n"), "{table}");
    let inclusive: f64 = postgres_main.split('\t').nth(1).unwrap().parse().unwrap();
    let all: f64 = rows[0]["srv_instructions"].parse().unwrap();
    assert!(inclusive > all * 0.8, "{postgres_main} of {all}");
}

/// `counted: perf`: the CPU's own counter where the machine has one (the phase counted at
/// full speed), and where it has none (this project's VMs) a refusal before anything
/// starts, naming the counter that works everywhere.
#[test]
fn counted_perf_counts_where_the_cpu_can_and_says_so_where_it_cannot() {
    let tmp = tempfile::tempdir().unwrap();
    let containers = Path::new(env!("CARGO_MANIFEST_DIR")).join("containers");
    let text = format!(
        "name: counted-perf\n\
         servers:\n  redis:\n    build: {{dir: {}, args: {{suite: bookworm, package: redis-server}}}}\n\
         configs:\n  plain: {{redis_conf: {{save: \"\"}}}}\n\
         workloads:\n  get: {{redis: {{test: get, keyspace: 1000}}}}\n\
         concurrency: [1]\niterations: 1\nwarmup: 200\nlength: 20000\ncounted: perf\n",
        containers.join("redis").display()
    );
    let probe = Command::new("perf")
        .args(["stat", "-x,", "-e", "instructions:u", "true"])
        .output()
        .unwrap();
    if String::from_utf8_lossy(&probe.stderr).contains("<not supported>") {
        let matrix = tmp.path().join("m.yaml");
        std::fs::write(&matrix, &text).unwrap();
        let dir = tmp.path().join("run");
        let out = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
            .args(["run", matrix.to_str().unwrap(), "--quiet", "--out"])
            .arg(&dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("this machine has no hardware instruction counter")
                && stderr.contains("`counted: callgrind` counts on any machine"),
            "{stderr}"
        );
        assert!(!dir.exists(), "nothing was started or written");
        // `plan` says so beforehand, and still plans.
        let out = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
            .args(["plan", matrix.to_str().unwrap()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(
            stderr.contains("note: `rmatrix run` will refuse this matrix here"),
            "{stderr}"
        );
        return;
    }
    let dir = run_counted(tmp.path(), "counted-perf", &text);
    let rows = crate::common::result_rows(&dir);
    let per_op: f64 = rows[0]["srv_instr_per_op"].parse().unwrap();
    assert!((1_000.0..100_000.0).contains(&per_op), "{rows:?}");
}
