//! Client-bound cells on a real Redis, rmatrix pinned to CPU 0 and the server alone on CPU 1:
//! a cell whose client is starved by a CPU quota of a fifth of a core is marked client-bound
//! (results.csv and each second in samples.csv, summary.md, compare's JSON); a cell whose
//! client mostly waits for the server's fsyncs, with CPU 0 to itself, is not.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::Cleanup;

/// A cgroup with a CPU quota of `cores` for the client (v1's cpu controller where it is
/// mounted, as on this machine, else v2), removed when dropped.
struct Quota(PathBuf);

impl Quota {
    fn new(cores: f64) -> Quota {
        let name = format!("rmatrix-it-starved-{}", std::process::id());
        let v1 = Path::new("/sys/fs/cgroup/cpu");
        let period = 100_000u64;
        let quota = (cores * period as f64) as u64;
        let dir = if v1.join("cpu.cfs_quota_us").exists() {
            let dir = v1.join(&name);
            std::fs::create_dir_all(&dir).expect("create a cgroup (root is needed)");
            std::fs::write(dir.join("cpu.cfs_period_us"), period.to_string()).unwrap();
            std::fs::write(dir.join("cpu.cfs_quota_us"), quota.to_string()).unwrap();
            dir
        } else {
            let root = Path::new("/sys/fs/cgroup");
            let _ = std::fs::write(root.join("cgroup.subtree_control"), "+cpu");
            let dir = root.join(&name);
            std::fs::create_dir_all(&dir).expect("create a cgroup (root is needed)");
            std::fs::write(dir.join("cpu.max"), format!("{quota} {period}")).unwrap();
            dir
        };
        Quota(dir)
    }
}

impl Drop for Quota {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Run `matrix` pinned to CPU 0 (in `quota`'s cgroup, if given), only `config`'s cells,
/// into `tmp/name`.
fn run(tmp: &Path, matrix: &Path, name: &str, config: &str, quota: Option<&Quota>) -> PathBuf {
    let dir = tmp.join(name);
    let only = format!("config={config}");
    // The shell joins the cgroup, then becomes rmatrix.
    let procs = quota.map_or(String::from("/dev/null"), |q| {
        q.0.join("cgroup.procs").display().to_string()
    });
    let out = Command::new("taskset")
        .args([
            "-c",
            "0",
            "sh",
            "-c",
            "echo $$ > \"$0\" && exec \"$@\"",
            &procs,
        ])
        .args([
            env!("CARGO_BIN_EXE_rmatrix"),
            "run",
            matrix.to_str().unwrap(),
        ])
        .args(["--quiet", "--only", &only, "--out", dir.to_str().unwrap()])
        .output()
        .expect("taskset (util-linux)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// A run's iterations as (the client's busy percent, the cores it had).
fn busy(dir: &Path) -> Vec<(f64, f64)> {
    (crate::common::result_rows(dir).iter())
        .map(|r| {
            let num = |c: &str| r[c].parse::<f64>().unwrap_or_else(|_| panic!("{c}: {r:?}"));
            (num("client_busy_pct"), num("client_cores"))
        })
        .collect()
}

#[test]
fn a_starved_client_is_marked_client_bound_and_a_waiting_one_is_not() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = tmp.path().join("starved.yaml");
    // `plain` answers at once: a starved client is what limits it. `fsync` makes the server
    // fsync every write: its client mostly waits.
    std::fs::write(
        &matrix,
        "name: starved\n\
         servers:\n  redis-7.0: {build: redis-7.0, cpuset: \"1\"}\n\
         configs:\n  plain: {}\n  \
         fsync: {redis_conf: {appendonly: \"yes\", appendfsync: always}}\n\
         workloads:\n  set: {redis: {test: set, keyspace: 1000}}\n\
         concurrency: [32]\niterations: 2\nwarmup: 300ms\nlength: 2s\n",
    )
    .unwrap();
    let _guard = (Cleanup("calm".into()), Cleanup("starved".into()));
    let calm = run(tmp.path(), &matrix, "calm", "fsync", None);
    let starved = {
        let quota = Quota::new(0.2);
        run(tmp.path(), &matrix, "starved", "plain", Some(&quota))
    };
    let (c, s) = (busy(&calm), busy(&starved));
    let mean = |v: &[(f64, f64)]| v.iter().map(|b| b.0).sum::<f64>() / v.len() as f64;
    assert!(
        s.iter().all(|b| b.1 == 0.2) && mean(&s) >= 90.0,
        "starved {s:?}, calm {c:?}"
    );
    assert!(
        c.iter().all(|b| b.1 == 1.0) && mean(&c) < 90.0,
        "calm {c:?}, starved {s:?}"
    );
    // Each second's demand is in samples.csv too: a quota'd client is busy every second.
    let seconds = |d: &Path| -> Vec<f64> {
        let mut r = csv::Reader::from_path(d.join("samples.csv")).unwrap();
        let col = r
            .headers()
            .unwrap()
            .iter()
            .position(|h| h == "client_busy_pct");
        let col = col.expect("samples.csv has client_busy_pct");
        r.records()
            .map(|l| l.unwrap()[col].parse().unwrap())
            .collect()
    };
    let per = seconds(&starved);
    assert!(
        per.len() >= 4 && per.iter().all(|b| *b >= 80.0),
        "starved seconds {per:?}"
    );
    let summary = |d: &Path| std::fs::read_to_string(d.join("summary.md")).unwrap();
    let text = summary(&starved);
    assert!(text.contains("**Client-bound**: in 1 cell(s)"), "{text}");
    assert!(
        text.contains("redis-7.0 / plain / set / c32: client busy"),
        "{text}"
    );
    assert!(
        !summary(&calm).contains("Client-bound"),
        "{}",
        summary(&calm)
    );
    // compare marks the changes of a cell that was client-bound on one side.
    let cmp = crate::common::rmatrix(&[
        "compare",
        "--format",
        "json",
        "--ignore",
        "config",
        calm.to_str().unwrap(),
        starved.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&cmp.stdout).expect(&cmp.stderr);
    let v = &v[0];
    let changes = v["changes"].as_array().unwrap();
    assert!(!changes.is_empty(), "{v}");
    assert!(changes.iter().all(|ch| ch["client_bound"] == true), "{v}");
    let listed = v["client_bound"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{v}");
    assert!(
        listed[0]
            .as_str()
            .unwrap()
            .contains("(candidate: client busy"),
        "{v}"
    );
}
