//! `rmatrix compare` on real MariaDB runs: two runs of the same config are not flagged at the
//! default threshold and 99% confidence (false-positive check), and making writes durable
//! (`sync_binlog=1`, `innodb_flush_log_at_trx_commit=1` against 0) is flagged with exit code 4.
//!
//! Noise on a shared 2-core machine drifts over minutes, so the runs are interleaved: five
//! rounds of fast / fast again / durable, each a one-iteration run on a fresh server, then the
//! rounds of each variant are gathered into one run directory of five iterations (what a
//! matrix with a fresh server per iteration and an interleaved order records).
//! Run with `--test-threads=1`; containers are removed even when an assertion fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rmatrix(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args(args)
        .output()
        .expect("run rmatrix")
}

/// Removes the containers of every run it saw, on drop (also after a panic).
#[derive(Default)]
struct Cleanup(Vec<PathBuf>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for dir in &self.0 {
            let Ok(text) = std::fs::read_to_string(dir.join("manifest.json")) else {
                continue;
            };
            let Ok(m) = serde_json::from_str::<serde_json::Value>(&text) else {
                continue;
            };
            let Some(run_id) = m["run_id"].as_str() else {
                continue;
            };
            let ids = Command::new("docker")
                .args([
                    "ps",
                    "-aq",
                    "--filter",
                    &format!("label=rmatrix.run={run_id}"),
                ])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
                .unwrap_or_default();
            for id in ids.split_whitespace() {
                let _ = Command::new("docker").args(["rm", "-f", id]).output();
            }
        }
    }
}

fn matrix(dir: &Path, name: &str, durable: u8) -> PathBuf {
    let text = format!(
        "name: durability
servers:
  mariadb-10.11: {{build: mariadb-10.11}}
configs:
  writes:
    mycnf: {{log_bin: mysql-bin, server_id: 1, sync_binlog: {durable}, innodb_flush_log_at_trx_commit: {durable}}}
engines: [InnoDB]
workloads:
  write: {{slap: {{load_type: write, number_int_cols: 2, number_char_cols: 2, primary_key: autoincrement}}}}
concurrency: [2]
iterations: 1
warmup: 1s
length: 3s
report: {{metric: qps, rows: [workload], columns: [engine]}}
"
    );
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Gather one-iteration runs into one run directory, iteration = round.
fn gather(rounds: &[PathBuf], out: &Path) {
    std::fs::create_dir_all(out).unwrap();
    for f in ["matrix.yaml", "manifest.json"] {
        std::fs::copy(rounds[0].join(f), out.join(f)).unwrap();
    }
    let mut w = csv::Writer::from_path(out.join("results.csv")).unwrap();
    for (i, dir) in rounds.iter().enumerate() {
        let mut r = csv::Reader::from_path(dir.join("results.csv")).unwrap();
        let header = r.headers().unwrap().clone();
        if i == 0 {
            w.write_record(&header).unwrap();
        }
        let it = header.iter().position(|h| h == "iteration").unwrap();
        let st = header.iter().position(|h| h == "status").unwrap();
        for rec in r.records() {
            let mut rec: Vec<String> = rec.unwrap().iter().map(str::to_string).collect();
            assert_eq!(rec[st], "ok", "{} failed: {rec:?}", dir.display());
            rec[it] = (i + 1).to_string();
            w.write_record(&rec).unwrap();
        }
    }
    w.flush().unwrap();
}

#[test]
fn same_config_is_not_flagged_and_durable_writes_are() {
    let tmp = tempfile::tempdir().unwrap();
    let fast = matrix(tmp.path(), "fast.yaml", 0);
    let durable = matrix(tmp.path(), "durable.yaml", 1);
    let mut cleanup = Cleanup::default();
    let variants = [("a", &fast), ("b", &fast), ("durable", &durable)];
    let mut rounds: Vec<Vec<PathBuf>> = vec![Vec::new(); variants.len()];
    for round in 1..=5 {
        for (v, (name, m)) in variants.iter().enumerate() {
            let out = tmp.path().join(format!("{name}-{round}"));
            cleanup.0.push(out.clone());
            let o = rmatrix(&[
                "run",
                m.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--quiet",
            ]);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{name} round {round}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            rounds[v].push(out);
        }
    }
    let dirs: Vec<PathBuf> = variants
        .iter()
        .zip(&rounds)
        .map(|((name, _), r)| {
            let d = tmp.path().join(name);
            gather(r, &d);
            d
        })
        .collect();
    let path = |i: usize| dirs[i].to_str().unwrap().to_string();

    // The same config twice: not a regression at the default threshold (5%), here at 99%
    // confidence: at the default 95% a false alarm happens by design up to 1 time in 20,
    // which would make this a flaky test (scripts/bench/bench-aa.sh measures the default's rate).
    let o = rmatrix(&["compare", "--confidence", "99%", &path(0), &path(1)]);
    let md = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(0), "false positive:\n{md}");
    assert!(md.contains("0 regressed"), "{md}");
    eprintln!("{md}");

    // Durable writes against fast ones: a regression, exit code 4.
    let o = rmatrix(&["compare", &path(0), &path(2)]);
    let md = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(4), "{md}");
    let qps = md
        .lines()
        .find(|l| l.contains("InnoDB / write / c2 | qps"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(qps.ends_with("| **regressed** |"), "{qps}");

    // And the other way round it is an improvement, which does not fail.
    let o = rmatrix(&["compare", &path(2), &path(0), "--metric", "qps"]);
    let md = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(0), "{md}");
    assert!(md.contains("| improved |"), "{md}");
    eprintln!("{md}");
}
