//! The server's counters once a second (server_seconds.csv) on real servers: MariaDB under
//! oltp and slap, Redis under GET/SET. Each measured phase's seconds add up to the cell's own
//! counter deltas (counters.csv), the reads themselves taken out of both, so the drivers'
//! checks (client count == server count) still hold; the warm-up has its own seconds; the
//! cgroup's CPU per second adds up to the cell's server CPU.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{counters_of, csv_rows, result_rows, run_ok as run};

type Line = BTreeMap<String, String>;

/// The server seconds of the iteration `row` measured.
fn seconds_of<'a>(lines: &'a [Line], row: &Line) -> Vec<&'a Line> {
    let key = [
        "server",
        "config",
        "engine",
        "workload",
        "concurrency",
        "rate",
        "iteration",
    ];
    lines
        .iter()
        .filter(|l| key.iter().all(|k| l[*k] == row[*k]))
        .collect()
}

fn sum(seconds: &[&Line], phase: &str, counter: &str) -> u64 {
    seconds
        .iter()
        .filter(|l| l["phase"] == phase && l["counter"] == counter)
        .map(|l| l["value"].parse::<u64>().unwrap())
        .sum()
}

/// Every `counters` count's measured seconds add up to its delta in counters.csv; the
/// measured seconds are numbered 1, 2, ... with whole spans but the last; the warm-up has
/// seconds too.
fn assert_add_up(dir: &Path, counters: &[&str]) {
    let lines = csv_rows(&dir.join("server_seconds.csv"));
    let rows = result_rows(dir);
    assert!(!rows.is_empty());
    for row in &rows {
        assert_eq!(row["status"], "ok", "{row:?}");
        let secs = seconds_of(&lines, row);
        let cell = counters_of(dir, row);
        let what = format!("{}/{}", row["workload"], row["concurrency"]);
        for c in counters {
            let delta = cell.get(*c).copied().unwrap_or(0);
            assert_eq!(
                sum(&secs, "measured", c),
                delta,
                "{what}: {c} over the seconds"
            );
        }
        assert!(
            counters
                .iter()
                .any(|c| cell.get(*c).is_some_and(|d| *d > 0)),
            "{what}: nothing moved: {cell:?}"
        );
        let mut numbers: Vec<u32> = secs
            .iter()
            .filter(|l| l["phase"] == "measured")
            .map(|l| l["second"].parse().unwrap())
            .collect();
        numbers.dedup();
        let n = *numbers.last().unwrap();
        assert!(n >= 3, "{what}: {numbers:?}");
        for l in secs.iter().filter(|l| l["phase"] == "measured") {
            let span: f64 = l["span_s"].parse().unwrap();
            let second: u32 = l["second"].parse().unwrap();
            assert!(span > 0.0 && span <= 1.1, "{what}: {l:?}");
            if second < n {
                assert!((span - 1.0).abs() < 0.1, "a whole second: {l:?}");
            }
        }
        assert!(
            secs.iter().any(|l| l["phase"] == "warmup"),
            "{what}: the warm-up's seconds"
        );
        // What the server's cgroup used, second by second, is the cell's server CPU (the
        // seconds' edges are the counters' reads, the cell's the window's: a few ms apart).
        let cpu_us = sum(&secs, "measured", "cgroup.cpu_us") as f64;
        let srv_cpu_s: f64 = row["srv_cpu_s"].parse().unwrap();
        assert!(
            (cpu_us / 1e6 - srv_cpu_s).abs() <= 0.05 * srv_cpu_s + 0.02,
            "{what}: {cpu_us} us over the seconds, {srv_cpu_s} s in the row"
        );
    }
}

#[test]
fn mariadb_seconds_add_up_to_the_cells_counters() {
    let tmp = tempfile::tempdir().unwrap();
    let m = "servers:\n  mariadb-10.11: {build: mariadb-10.11}\n\
             workloads:\n  rw: {oltp: {test: oltp_read_write, tables: 2, table_size: 2000}}\n\
             \x20 key: {slap: {load_type: key, primary_key: autoincrement}}\n\
             engines: [InnoDB]\nconcurrency: [2]\nwarmup: 2s\nlength: 4s\n";
    let (dir, _g) = run(tmp.path(), "srv-seconds-mariadb", m);
    assert_add_up(
        &dir,
        &[
            "Questions",
            "Com_select",
            "Com_insert",
            "Com_update",
            "Com_delete",
            "Com_commit",
            "Innodb_rows_read",
            "Innodb_rows_inserted",
        ],
    );
    // Levels are read, not summed: two clients and the reader itself were connected.
    let lines = csv_rows(&dir.join("server_seconds.csv"));
    assert!(
        lines
            .iter()
            .filter(|l| l["counter"] == "Threads_connected")
            .all(|l| l["value"].parse::<u64>().unwrap() >= 3),
        "Threads_connected"
    );
}

#[test]
fn redis_seconds_add_up_to_the_cells_counters() {
    let tmp = tempfile::tempdir().unwrap();
    let m = format!(
        "servers:\n  redis:\n    build: {{dir: {}, args: {{suite: bookworm, package: redis-server}}}}\n\
         configs:\n  default: {{redis_conf: {{save: \"\", appendonly: \"no\"}}}}\n\
         workloads:\n  get: {{redis: {{test: get, keyspace: 1000, data_size: 32}}}}\n\
         \x20 set: {{redis: {{test: set, keyspace: 1000, data_size: 32}}}}\n\
         concurrency: [4]\nwarmup: 1s\nlength: 3s\n",
        Path::new(env!("CARGO_MANIFEST_DIR")).join("containers/redis").display()
    );
    let (dir, _g) = run(tmp.path(), "srv-seconds-redis", &m);
    assert_add_up(&dir, &["cmdstat_get", "cmdstat_set"]);
}
