//! What several integration test files share. Each test crate uses part of it.
#![allow(dead_code)]

pub mod counts;
pub mod python;

use std::process::Command;

/// What a run of the rmatrix binary printed, and its exit code.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Run the real rmatrix binary with `args`.
pub fn rmatrix(args: &[&str]) -> Out {
    let out = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args(args)
        .output()
        .expect("run the rmatrix binary");
    Out {
        code: out.status.code().expect("exited, not killed"),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}

/// Run `matrix` (written to TMP/NAME.yaml) into TMP/NAME with `rmatrix run --quiet`, as run
/// id NAME, and require exit 0 (the failed rows are shown when it is not) and no server's
/// socket left in the run directory.
pub fn run_ok(tmp: &std::path::Path, name: &str, matrix: &str) -> (std::path::PathBuf, Cleanup) {
    let file = tmp.join(format!("{name}.yaml"));
    std::fs::write(&file, matrix).unwrap();
    let dir = tmp.join(name);
    let guard = Cleanup(name.to_string());
    let out = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args(["run", file.to_str().unwrap(), "--quiet", "--out"])
        .arg(&dir)
        .output()
        .expect("run rmatrix");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{name}: {}{}",
        String::from_utf8_lossy(&out.stderr),
        failed_rows(&dir)
    );
    // Each server's unix sockets went with its container.
    for server in std::fs::read_dir(dir.join("servers")).into_iter().flatten() {
        let sock = server.unwrap().path().join("sock");
        assert!(!sock.exists(), "{name}: {} is left", sock.display());
    }
    (dir, guard)
}

/// Removes the containers labelled `rmatrix.run=<id>` when dropped, also when the test
/// panics first (Drop cannot await, so this goes through the docker CLI).
pub struct Cleanup(pub String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for id in containers(&self.0) {
            let _ = Command::new("docker").args(["rm", "-f", &id]).output();
        }
    }
}

/// Ids of the containers (running or not) labelled `rmatrix.run=<run_id>`.
pub fn containers(run_id: &str) -> Vec<String> {
    Command::new("docker")
        .args([
            "ps",
            "-aq",
            "--filter",
            &format!("label=rmatrix.run={run_id}"),
        ])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// DIR/counters.csv's deltas of the iteration a results.csv row measured (a counter at 0
/// has no line).
pub fn counters_of(
    dir: &std::path::Path,
    row: &std::collections::BTreeMap<String, String>,
) -> std::collections::BTreeMap<String, u64> {
    let key = [
        "server",
        "config",
        "engine",
        "workload",
        "concurrency",
        "rate",
        "iteration",
    ];
    csv_rows(&dir.join("counters.csv"))
        .into_iter()
        .filter(|l| {
            key.iter()
                .all(|k| l[*k] == row.get(*k).cloned().unwrap_or_default())
        })
        .map(|l| (l["counter"].clone(), l["delta"].parse().unwrap()))
        .collect()
}

/// The rows of DIR/results.csv as column -> value maps; an absent file is no rows.
pub fn result_rows(dir: &std::path::Path) -> Vec<std::collections::BTreeMap<String, String>> {
    csv_rows(&dir.join("results.csv"))
}

/// The failed rows of a run, one line each with its error: for a test's failure message
/// (`--quiet` runs print no per-cell line).
pub fn failed_rows(dir: &std::path::Path) -> String {
    result_rows(dir)
        .iter()
        .filter(|r| r["status"] != "ok")
        .map(|r| {
            format!(
                "{}/{}/{} #{}: {}\n",
                r["server"], r["config"], r["workload"], r["iteration"], r["error"]
            )
        })
        .collect()
}

/// The lines of a CSV file as column -> value maps (none when the file is missing).
pub fn csv_rows(path: &std::path::Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let Ok(mut r) = csv::Reader::from_path(path) else {
        return Vec::new();
    };
    let h = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            h.iter()
                .zip(rec.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// Per-second samples agree with their iteration's row: whole seconds 1..n of the measured
/// phase, each line's queries the sum of its reads, writes and others, a latency where
/// events happened, and together no more statements than the row counted (the partial last
/// second is left out), but most of them.
#[allow(dead_code)] // used by some of the test crates
pub fn assert_samples_agree(dir: &std::path::Path, threads: u32) {
    let rows = result_rows(dir);
    let samples = csv_rows(&dir.join("samples.csv"));
    assert_eq!(rows.len(), 1, "one iteration");
    let queries: f64 = rows[0]["queries"].parse().unwrap();
    let seconds: f64 = rows[0]["seconds"].parse().unwrap();
    assert_eq!(samples.len(), seconds.floor() as usize, "{samples:?}");
    let num =
        |s: &std::collections::BTreeMap<String, String>, c: &str| -> f64 { s[c].parse().unwrap() };
    for (i, s) in samples.iter().enumerate() {
        assert_eq!(s["second"], (i + 1).to_string());
        assert_eq!(s["threads"], threads.to_string());
        let parts = num(s, "reads_ps") + num(s, "writes_ps") + num(s, "others_ps");
        assert!((num(s, "qps") - parts).abs() < 1e-6, "{s:?}");
        assert!(num(s, "qps") > 0.0 && num(s, "lat_p95_ms") > 0.0, "{s:?}");
        assert_eq!(num(s, "errors_ps"), 0.0, "{s:?}");
    }
    let sampled: f64 = samples.iter().map(|s| num(s, "qps")).sum();
    assert!(
        sampled <= queries && sampled >= queries * 0.5,
        "samples {sampled} of {queries} statements"
    );
}

/// A MariaDB 10.11 server started through rmatrix's own start sequence (the image built from
/// containers/mariadb), its files under `dir`; the caller's `Cleanup(run_id)` removes it.
pub async fn mariadb_10_11(
    run_id: &str,
    dir: &std::path::Path,
    password: &str,
) -> rmatrix::servers::Deployed {
    let engine = rmatrix::servers::engines::docker::Engine::connect()
        .await
        .expect("docker engine");
    let build = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("containers/mariadb");
    let args = [("suite".to_string(), "bookworm".to_string())].into();
    let image = engine
        .ensure_built("mariadb-10.11", &build, &args)
        .await
        .expect("image");
    let launch = local_launch(run_id, password);
    rmatrix::servers::family::start(
        &engine,
        &rmatrix::servers::mysql::Mysql,
        &launch,
        &format!("rmatrix-{run_id}"),
        &image.reference,
        &Default::default(),
        dir,
    )
    .await
    .expect("server starts")
}

/// A MySQL 9.7 server (the image built from containers/mysql on Debian sid) through rmatrix's
/// own start sequence and read-back, with `config`; the caller's `Cleanup(run_id)` removes it.
pub async fn mysql_9_7(
    run_id: &str,
    dir: &std::path::Path,
    password: &str,
    config: &rmatrix::servers::spec::ConfigSpec,
) -> rmatrix::servers::Deployed {
    let engine = rmatrix::servers::engines::docker::Engine::connect()
        .await
        .expect("docker engine");
    let build = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("containers/mysql");
    let args = [("suite".to_string(), "sid".to_string())].into();
    let image = engine
        .ensure_built("mysql-9.7", &build, &args)
        .await
        .expect("image");
    let launch = local_launch(run_id, password);
    let spec = rmatrix::servers::spec::ServerSpec {
        build: Some(rmatrix::servers::spec::BuildSpec::Name("mysql-9.7".into())),
        ..Default::default()
    };
    rmatrix::servers::provision(
        &spec,
        &engine,
        &launch,
        &format!("rmatrix-{run_id}"),
        &image.reference,
        config,
        dir,
    )
    .await
    .expect("server starts")
}

/// How the tests start a server: this machine's engine, host networking, files mounted.
fn local_launch<'a>(run_id: &'a str, password: &'a str) -> rmatrix::servers::Launch<'a> {
    rmatrix::servers::Launch {
        run_id,
        instance: "",
        password,
        host_network: true,
        start_timeout: std::time::Duration::from_secs(180),
        cpuset: None,
        cpus: None,
        memory: None,
        copy_files: false,
        host_side: None,
        data_volume: None,
        counted: false,
    }
}

/// scripts/redis-source-repo.sh's repository in `tmp`, its commits oldest first (hash,
/// subject); `slow` is the script's slowdown of GET (`20`: microseconds of spin, `work:7`: rounds of extra work).
pub fn redis_source_repo(
    tmp: &std::path::Path,
    slow: &str,
) -> (std::path::PathBuf, Vec<(String, String)>) {
    let dir = tmp.join("redis");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/redis-source-repo.sh");
    let out = Command::new(script).arg(&dir).arg(slow).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let commits = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(h, s)| (h.to_string(), s.to_string()))
        .collect();
    (dir, commits)
}
