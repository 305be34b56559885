//! Faults on live runs against real Redis and MariaDB containers: rmatrix killed (SIGKILL) at
//! several points and resumed, Ctrl-C, the server paused or killed mid-cell, the run
//! directory's disk full, an external server unreachable or refusing the password, the Docker
//! engine unreachable. Each test has its own run id (its `--out` folder name), so a container
//! one of them leaks cannot clash with the next. Run with `--test-threads=1`.

use crate::common::{containers, rmatrix, Cleanup};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub(crate) fn build_dir(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("containers")
        .join(name)
        .display()
        .to_string()
}

/// A Redis matrix: `body` adds workloads, configs, lengths.
pub(crate) fn redis_matrix(tmp: &Path, name: &str, body: &str) -> PathBuf {
    let path = tmp.join(format!("{name}.yaml"));
    let text = format!("servers:\n  redis-7.0: {{build: redis-7.0}}\n{body}");
    std::fs::write(&path, text).unwrap();
    path
}

/// Two deployments (configs a and b) x two workloads, 3 iterations of 400 ms each.
pub(crate) const TWO_BY_TWO: &str = "configs:
  a: {}
  b: {redis_conf: {hz: 20}}
workloads:
  get: {redis: {test: get, keyspace: 100}}
  set: {redis: {test: set, keyspace: 100}}
concurrency: [2]
iterations: 3
length: 400ms
";

/// `rmatrix run MATRIX --out DIR --quiet` in the background, stderr kept in DIR.err.
pub(crate) fn spawn_run(matrix: &Path, out: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args([
            "run",
            matrix.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(out.with_extension("err")).unwrap())
        .spawn()
        .unwrap()
}

pub(crate) fn resume(dir: &Path) -> crate::common::Out {
    rmatrix(&["run", "--resume", dir.to_str().unwrap(), "--quiet"])
}

/// Poll `cond` every 20 ms for up to `secs`; panics with `what` when it never holds, or when
/// `child` ended first.
pub(crate) fn wait_for(child: &mut Child, secs: u64, what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "rmatrix ended before: {what}"
        );
        assert!(start.elapsed().as_secs() < secs, "never: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The rows of results.csv as column -> value maps; an absent file is no rows.
pub(crate) fn rows(dir: &Path) -> Vec<BTreeMap<String, String>> {
    crate::common::result_rows(dir)
}

pub(crate) fn row_count(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("results.csv"))
        .map(|t| t.lines().count().saturating_sub(1))
        .unwrap_or(0)
}

/// `config/workload#iteration` of every ok row, checked to be unique.
pub(crate) fn ok_iterations(dir: &Path) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for r in rows(dir).iter().filter(|r| r["status"] == "ok") {
        let key = format!("{}/{}#{}", r["config"], r["workload"], r["iteration"]);
        assert!(seen.insert(key.clone()), "{key} measured twice");
    }
    seen
}

pub(crate) fn all_iterations(configs: &[&str], workloads: &[&str], n: u32) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for c in configs {
        for w in workloads {
            for i in 1..=n {
                out.insert(format!("{c}/{w}#{i}"));
            }
        }
    }
    out
}

pub(crate) fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

/// SIGKILL at three points of a live run (server starting, mid-cell, after most rows), then
/// `--resume`: the killed attempt's containers are removed (they kept the names the resume
/// uses), exactly the missing iterations run, each iteration has one ok row, and the run
/// keeps its identity. A torn last row is left out by readers and cut off by the resume.
#[test]
fn sigkill_at_any_point_then_resume_measures_each_iteration_once() {
    let tmp = tempfile::tempdir().unwrap();
    let m = redis_matrix(tmp.path(), "kill", TWO_BY_TWO);
    let want = all_iterations(&["a", "b"], &["get", "set"], 3);
    for point in ["starting", "mid-cell", "late"] {
        let name = format!("faults-kill-{point}");
        let out = tmp.path().join(&name);
        let _guard = Cleanup(name.clone());
        let mut child = spawn_run(&m, &out);
        match point {
            "starting" => wait_for(&mut child, 120, "a container", || {
                !containers(&name).is_empty()
            }),
            "mid-cell" => {
                wait_for(&mut child, 120, "a row", || row_count(&out) >= 1);
                std::thread::sleep(Duration::from_millis(150));
            }
            _ => wait_for(&mut child, 120, "9 rows", || row_count(&out) >= 9),
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let before = rows(&out).len();
        assert!(before < 12, "{point}: killed too late ({before} rows)");
        assert!(
            !containers(&name).is_empty(),
            "{point}: SIGKILL leaves the server up (the resume must cope with it)"
        );
        let man = std::fs::read_to_string(out.join("manifest.json")).unwrap();

        // A kill in the middle of a write: half a row at the end of results.csv.
        if point == "late" {
            let torn = "redis-7.0,b,,get,redis,2,3,ok,,123";
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(out.join("results.csv"))
                .unwrap();
            std::io::Write::write_all(&mut f, torn.as_bytes()).unwrap();
            let report = rmatrix(&["report", out.to_str().unwrap(), "--format", "json"]);
            assert_eq!(
                report.code, 0,
                "torn row: report reads it: {}",
                report.stderr
            );
            let parsed: serde_json::Value = serde_json::from_str(&report.stdout).unwrap();
            assert_eq!(
                parsed.as_array().unwrap().len(),
                before,
                "torn row left out"
            );
        }

        // The engine unreachable: exit 3, the stored run as it was.
        let refused = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
            .args(["run", "--resume", out.to_str().unwrap(), "--quiet"])
            .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
            .output()
            .unwrap();
        assert_eq!(refused.status.code(), Some(3), "{point}");
        assert_eq!(
            std::fs::read_to_string(out.join("manifest.json")).unwrap(),
            man,
            "{point}: a failed --resume leaves manifest.json alone"
        );

        let started = Instant::now();
        let r = resume(&out);
        assert_eq!(r.code, 0, "{point}: {}", r.stderr);
        eprintln!(
            "{point}: killed after {before} rows; resumed in {:.1}s",
            started.elapsed().as_secs_f64()
        );
        assert_eq!(ok_iterations(&out), want, "{point}");
        let text = std::fs::read_to_string(out.join("results.csv")).unwrap();
        assert!(
            text.ends_with('\n') && !text.contains(",123\n"),
            "{point}: torn row cut"
        );
        assert!(containers(&name).is_empty(), "{point}: containers left");
        let after = manifest(&out);
        let first: serde_json::Value = serde_json::from_str(&man).unwrap();
        for k in ["run_id", "host", "started_at", "schedule"] {
            assert_eq!(after[k], first[k], "{point}: resume keeps {k}");
        }
        assert_eq!(after["iterations_ok"], 12, "{point}");
        assert_eq!(after["iterations_failed"], 0, "{point}");

        // Nothing left to do: nothing runs, nothing is rewritten.
        let (man, summary) = (
            std::fs::read(out.join("manifest.json")).unwrap(),
            std::fs::read(out.join("summary.md")).unwrap(),
        );
        let again = resume(&out);
        assert_eq!(again.code, 0, "{}", again.stderr);
        assert!(
            again.stderr.contains("nothing to resume"),
            "{}",
            again.stderr
        );
        assert_eq!(std::fs::read(out.join("manifest.json")).unwrap(), man);
        assert_eq!(std::fs::read(out.join("summary.md")).unwrap(), summary);
    }
}

/// `docker kill` of one deployment's server mid-cell: its remaining cells fail fast, the other
/// deployment runs (exit 1). `--resume` measures the failed iterations again; their ok rows
/// supersede the failed ones: exit 0, no failed iterations in the manifest, no failed cells
/// in the summary, and `report` reads the history.
#[test]
fn a_killed_server_fails_its_cells_fast_and_resume_supersedes_them() {
    let tmp = tempfile::tempdir().unwrap();
    let m = redis_matrix(tmp.path(), "dkill", TWO_BY_TWO);
    let name = "faults-docker-kill";
    let out = tmp.path().join(name);
    let _guard = Cleanup(name.into());
    let mut child = spawn_run(&m, &out);
    wait_for(&mut child, 120, "the first row", || row_count(&out) >= 1);
    let victim = containers(name);
    assert_eq!(victim.len(), 1);
    let killed = Instant::now();
    let k = Command::new("docker")
        .args(["kill", &victim[0]])
        .output()
        .unwrap();
    assert!(k.status.success());
    wait_for(&mut child, 60, "a failed row", || {
        rows(&out).iter().any(|r| r["status"] == "failed")
    });
    let fail_after = killed.elapsed();
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(out.with_extension("err")).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    let rs = rows(&out);
    let failed: Vec<_> = rs.iter().filter(|r| r["status"] == "failed").collect();
    assert!(!failed.is_empty());
    assert!(
        failed.iter().all(|r| r["config"] == "a"),
        "only a's cells fail"
    );
    assert_eq!(
        rs.iter()
            .filter(|r| r["config"] == "b" && r["status"] == "ok")
            .count(),
        6,
        "b runs in full"
    );
    let man = manifest(&out);
    assert_eq!(man["iterations_failed"], failed.len());
    assert!(std::fs::read_to_string(out.join("summary.md"))
        .unwrap()
        .contains("Failed cells"));
    eprintln!(
        "docker kill: first failed row {:.2}s after the kill; {} iterations failed: {}",
        fail_after.as_secs_f64(),
        failed.len(),
        failed[0]["error"]
    );

    let r = resume(&out);
    assert_eq!(r.code, 0, "all succeed now: {}", r.stderr);
    assert_eq!(
        ok_iterations(&out),
        all_iterations(&["a", "b"], &["get", "set"], 3)
    );
    let man = manifest(&out);
    assert_eq!(man["iterations_failed"], 0, "{man}");
    assert_eq!(man["iterations_ok"], 12);
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        !summary.contains("Failed cells"),
        "stale failures: {summary}"
    );
    let report = rmatrix(&["report", out.to_str().unwrap()]);
    assert_eq!(report.code, 0, "{}", report.stderr);
    assert!(!report.stdout.contains("Failed cells"));
    assert!(containers(name).is_empty());
}

/// Adaptive repeats killed midway: the resume continues them from the rounds already
/// measured, up to `max_iterations`, with every iteration number once.
#[test]
fn adaptive_repeats_resume_from_the_rounds_already_measured() {
    let tmp = tempfile::tempdir().unwrap();
    let m = redis_matrix(
        tmp.path(),
        "adaptive",
        "workloads:
  get: {redis: {test: get, keyspace: 100}}
  set: {redis: {test: set, keyspace: 100}}
concurrency: [2]
iterations: 2
length: 300ms
repeat: {until_cv: 0.0001, max_iterations: 5}
",
    );
    let name = "faults-adaptive";
    let out = tmp.path().join(name);
    let _guard = Cleanup(name.into());
    let mut child = spawn_run(&m, &out);
    // Past the 4 rows of the two base rounds: inside the adaptive ones.
    wait_for(&mut child, 120, "6 rows", || row_count(&out) >= 6);
    child.kill().unwrap();
    child.wait().unwrap();
    let before = row_count(&out);
    assert!(before < 10, "killed too late ({before} rows)");
    let r = resume(&out);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        ok_iterations(&out),
        all_iterations(&["default"], &["get", "set"], 5),
        "killed after {before} rows"
    );
    assert!(containers(name).is_empty());
}

/// Ctrl-C mid-run: exit 130, containers removed, a summary of what was measured.
#[test]
fn ctrl_c_exits_130_removes_containers_and_writes_a_partial_summary() {
    stop_mid_run("-INT", "faults-sigint");
}

/// SIGTERM (a CI job's timeout, `kill`): the same clean stop as Ctrl-C.
#[test]
fn sigterm_stops_as_cleanly_as_ctrl_c() {
    stop_mid_run("-TERM", "faults-sigterm");
}

fn stop_mid_run(signal: &str, name: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let m = redis_matrix(tmp.path(), name, TWO_BY_TWO);
    let out = tmp.path().join(name);
    let _guard = Cleanup(name.into());
    let mut child = spawn_run(&m, &out);
    wait_for(&mut child, 120, "2 rows", || row_count(&out) >= 2);
    let kill = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(containers(name).is_empty(), "containers left after Ctrl-C");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("| get |"), "{summary}");
    let man = manifest(&out);
    let measured = rows(&out).len();
    assert!(measured < 12, "stopped early: {measured}");
    assert_eq!(man["iterations_ok"], measured);
    assert!(man["finished_at"].is_string());
}

/// `docker pause` of the server mid-cell: the iteration fails after `stall_timeout` with a
/// clear error and is never recorded as ok; once the server is unpaused the run goes on.
#[test]
fn a_paused_server_fails_the_iteration_after_the_stall_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let m = redis_matrix(
        tmp.path(),
        "pause",
        "workloads:
  get: {redis: {test: get, keyspace: 100}}
  set: {redis: {test: set, keyspace: 100}}
concurrency: [2]
iterations: 2
length: 3s
stall_timeout: 2s
",
    );
    let rs = pause_mid_cell(
        &m,
        &tmp.path().join("faults-pause"),
        "no operation completed",
    );
    assert_eq!(rs.len(), 4);
}

/// The same with slap on MariaDB: the clients of the given-up iteration are stopped, so the
/// next iterations' server counters are exactly their own statements.
#[test]
fn a_paused_mariadb_fails_the_iteration_and_the_next_count_only_their_own() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("pause-mariadb.yaml");
    std::fs::write(
        &m,
        "servers:\n  mariadb-10.11: {build: mariadb-10.11}\nengines: [MyISAM]\nworkloads:\n  \
         key: {slap: {load_type: key, primary_key: autoincrement}}\niterations: 3\n\
         length: 3s\nstall_timeout: 2s\n",
    )
    .unwrap();
    let rs = pause_mid_cell(
        &m,
        &tmp.path().join("faults-pause-mariadb"),
        "no operation completed",
    );
    assert_eq!(rs.len(), 3);
    for r in &rs[1..] {
        assert_eq!(r["queries"], r["srv_questions"], "{r:?}");
        assert_eq!(r["queries"], r["srv_com_select"], "{r:?}");
    }
}

/// The external tools report only when they end: the server's own answers to a probe show
/// the stall (redis-benchmark on Redis, sysbench on MariaDB), and the tool is killed.
#[test]
fn a_paused_server_fails_an_external_tool_iteration_too() {
    let tmp = tempfile::tempdir().unwrap();
    let m = redis_matrix(
        tmp.path(),
        "pause-rb",
        "workloads:
  rb: {redis_benchmark: {test: get, keyspace: 100, requests: 400000}}
concurrency: [2]
iterations: 2
length: 400000
stall_timeout: 2s
",
    );
    let rs = pause_mid_cell(
        &m,
        &tmp.path().join("faults-pause-rb"),
        "the server answered no probe",
    );
    assert_eq!(rs.len(), 2);
    let m = tmp.path().join("pause-sysbench.yaml");
    std::fs::write(
        &m,
        "servers:\n  mariadb-10.11: {build: mariadb-10.11}\nworkloads:\n  \
         ps: {sysbench: {test: oltp_point_select, options: {tables: 1, table_size: 1000}}}\n\
         concurrency: [2]\niterations: 2\nlength: 3s\nstall_timeout: 2s\n",
    )
    .unwrap();
    let rs = pause_mid_cell(
        &m,
        &tmp.path().join("faults-pause-sysbench"),
        "the server answered no probe",
    );
    assert_eq!(rs.len(), 2);
    assert!(rs[0]["qps"].is_empty() && !rs[1]["qps"].is_empty());
}

/// Run `matrix` (2 s stall timeout, 3 s iterations), pause its server 1.5 s into the first
/// iteration, unpause once that iteration failed; the rows, the first failed and the others ok.
fn pause_mid_cell(matrix: &Path, out: &Path, expect: &str) -> Vec<BTreeMap<String, String>> {
    let name = out.file_name().unwrap().to_str().unwrap().to_string();
    let _guard = Cleanup(name.clone());
    let mut child = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args([
            "run",
            matrix.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(out.with_extension("err")).unwrap())
        .spawn()
        .unwrap();
    // "ready in": the server answered, the first iteration begins.
    wait_for(&mut child, 120, "a ready server", || {
        std::fs::read_to_string(out.with_extension("err")).is_ok_and(|t| t.contains(" ready in "))
    });
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(row_count(out), 0, "paused too late");
    let id = containers(&name).remove(0);
    let paused = Instant::now();
    assert!(Command::new("docker")
        .args(["pause", &id])
        .output()
        .unwrap()
        .status
        .success());
    struct Unpause(String);
    impl Drop for Unpause {
        fn drop(&mut self) {
            let _ = Command::new("docker").args(["unpause", &self.0]).output();
        }
    }
    let unpause = Unpause(id);
    wait_for(&mut child, 30, "a failed row", || row_count(out) >= 1);
    let took = paused.elapsed();
    drop(unpause);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1));
    let rs = rows(out);
    assert_eq!(rs[0]["status"], "failed", "{:?}", rs[0]);
    assert!(
        rs[0]["error"].contains(&format!("{expect} for 2 s: the server stalled")),
        "{}",
        rs[0]["error"]
    );
    assert_eq!(rs[0]["qps"], "", "a stalled iteration has no measurement");
    assert!(
        took < Duration::from_secs(5),
        "failed {:.1}s after the pause",
        took.as_secs_f64()
    );
    eprintln!(
        "{name}: failed {:.2}s after docker pause",
        took.as_secs_f64()
    );
    assert!(rs[1..].iter().all(|r| r["status"] == "ok"), "{rs:?}");
    assert!(containers(&name).is_empty());
    rs
}

/// The run directory on a full disk (a 256 KiB tmpfs filled once the first row is written):
/// a clear error, the containers removed, and what was written still reads (`report`).
#[test]
fn a_full_disk_fails_cleanly_and_keeps_what_was_written() {
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args([
            "-t",
            "tmpfs",
            "-o",
            "size=256k",
            "tmpfs",
            mnt.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(mounted.success(), "mount a tmpfs (needs root)");
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mnt.clone());
    let m = redis_matrix(tmp.path(), "full", TWO_BY_TWO);
    let name = "faults-disk-full";
    let out = mnt.join(name);
    let _guard = Cleanup(name.into());
    let mut child = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args([
            "run",
            m.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&mut child, 120, "2 rows", || row_count(&out) >= 2);
    // Fill what is left, byte by byte at the end, so the next row fits only in part.
    let filler = mnt.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let chunk = vec![b'x'; 4096];
    while std::io::Write::write_all(&mut f, &chunk).is_ok() {}
    while std::io::Write::write_all(&mut f, b"x").is_ok() {}
    drop(f);
    let done = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("No space left on device"),
        "a clear error: {stderr}"
    );
    assert!(containers(name).is_empty(), "containers left: {stderr}");
    let text = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(text.ends_with('\n'), "a torn row was left: {text}");
    let n = rows(&out).len();
    assert!((2..12).contains(&n), "{n} rows");
    manifest(&out);
    std::fs::remove_file(&filler).unwrap();
    let report = rmatrix(&["report", out.to_str().unwrap()]);
    assert_eq!(report.code, 0, "{}", report.stderr);
    eprintln!("disk full: {n} rows kept; error: {}", stderr.trim());
}

/// An external server on a closed port (retried, bounded) and a real MariaDB refusing the
/// password (not retried): each fails its cells with a clear error, exit 1.
#[test]
fn an_external_server_unreachable_or_refusing_the_password_fails_its_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let free_port = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let matrix = |name: &str, port: u16| {
        let path = tmp.path().join(format!("{name}.yaml"));
        std::fs::write(
            &path,
            format!(
                "servers:\n  theirs: {{external: {{port: {port}, user: root, password_env: FAULTS_PW}}}}\n\
                 engines: [InnoDB]\nworkloads:\n  w: {{slap: {{load_type: key}}}}\nlength: 100\n"
            ),
        )
        .unwrap();
        path
    };
    let run = |m: &Path, out: &Path, pw: &str| {
        let started = Instant::now();
        let o = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
            .args([
                "run",
                m.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--quiet",
            ])
            .env("FAULTS_PW", pw)
            .output()
            .unwrap();
        (o, started.elapsed())
    };

    let closed = tmp.path().join("faults-ext-closed");
    let (o, took) = run(&matrix("closed", free_port()), &closed, "x");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = &rows(&closed)[0]["error"];
    assert!(
        err.contains("unreachable after 5 attempts 1 s apart") && err.contains("refused"),
        "{err}"
    );
    assert!(took < Duration::from_secs(15), "{took:?}");
    eprintln!("closed port: failed in {:.1}s: {err}", took.as_secs_f64());

    // A real MariaDB with another password.
    let build = Command::new("docker")
        .args([
            "build",
            "-q",
            "--build-arg",
            "suite=bookworm",
            &build_dir("mariadb"),
        ])
        .output()
        .unwrap();
    assert!(build.status.success());
    let image = String::from_utf8_lossy(&build.stdout).trim().to_string();
    let port = free_port();
    let label = "rmatrix.run=faults-ext-password";
    let _guard = Cleanup("faults-ext-password".into());
    let started = Command::new("docker")
        .args(["run", "-d", "--network", "host", "--label", label])
        .args(["-e", "MARIADB_ROOT_PASSWORD=the-right-one", &image])
        .args([format!("--port={port}"), "--bind-address=127.0.0.1".into()])
        .output()
        .unwrap();
    assert!(started.status.success());
    // The image's init server listens on no port; the port opens once the real one is up.
    let up = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(up.elapsed().as_secs() < 120, "MariaDB never listened");
        std::thread::sleep(Duration::from_millis(200));
    }
    let wrong = tmp.path().join("faults-ext-password");
    let (o, took) = run(&matrix("password", port), &wrong, "a-wrong-one");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = &rows(&wrong)[0]["error"];
    assert!(
        err.contains("Access denied") && err.contains("not retried"),
        "{err}"
    );
    assert!(
        !err.contains("a-wrong-one"),
        "the password is never written"
    );
    assert!(took < Duration::from_secs(5), "not retried: {took:?}");
    eprintln!(
        "wrong password: failed in {:.1}s: {err}",
        took.as_secs_f64()
    );
}

/// The Docker engine unreachable: exit 3, and no run directory left to block the same --out.
#[test]
fn an_unreachable_engine_exits_3_and_leaves_no_run_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let m = redis_matrix(tmp.path(), "noengine", TWO_BY_TWO);
    let out = tmp.path().join("faults-no-engine");
    let o = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args(["run", m.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!out.exists(), "a run that never started leaves no folder");
}

/// Two runs whose folders share a name (the run id), in different places, at the same time:
/// each has its own containers (a per-directory token in the labels and names), so the
/// second neither clashes with the first's container name nor removes it when it ends; and
/// the second records that it ran beside another run.
#[test]
fn two_runs_with_the_same_folder_name_keep_to_their_own_containers() {
    let tmp = tempfile::tempdir().unwrap();
    let _guard = Cleanup("twin".into());
    let (one, two) = (tmp.path().join("one"), tmp.path().join("two"));
    std::fs::create_dir_all(&one).unwrap();
    std::fs::create_dir_all(&two).unwrap();
    let long = redis_matrix(
        &one,
        "long",
        "workloads:\n  get: {redis: {test: get, keyspace: 100}}\nconcurrency: [2]\niterations: 1\nlength: 6s\n",
    );
    let short = redis_matrix(
        &two,
        "short",
        "workloads:\n  get: {redis: {test: get, keyspace: 100}}\nconcurrency: [2]\niterations: 1\nlength: 300ms\n",
    );
    let (dir_one, dir_two) = (one.join("twin"), two.join("twin"));
    let mut first = spawn_run(&long, &dir_one);
    // Wait until the first run's server is up, then run the second to its end beside it.
    wait_for(&mut first, 60, "the first run's container", || {
        !containers("twin").is_empty()
    });
    let second = rmatrix(&[
        "run",
        short.to_str().unwrap(),
        "--out",
        dir_two.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(
        !containers("twin").is_empty(),
        "the second run removed the first run's container"
    );
    let status = first.wait().unwrap();
    let err = std::fs::read_to_string(dir_one.with_extension("err")).unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    for dir in [&dir_one, &dir_two] {
        let rows = rows(dir);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["status"], "ok", "{}", rows[0]["error"]);
    }
    let token = |d: &Path| -> String {
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("manifest.json")).unwrap())
                .unwrap();
        m["instance"].as_str().unwrap().to_string()
    };
    assert_ne!(token(&dir_one), token(&dir_two));
    // The second ran beside the first: its row and summary say so; the first, which ran
    // alone at its start and end, has a count too (0 or 1, by when the second ended). At
    // least 1: any other rmatrix run on the machine (a developer's, beside the suite) counts.
    let beside: u32 = rows(&dir_two)[0]["beside_runs"].parse().unwrap();
    assert!(beside >= 1, "{beside}");
    let summary = std::fs::read_to_string(dir_two.join("summary.md")).unwrap();
    assert!(summary.contains("**Shared machine**: 1 of 1"), "{summary}");
    assert!(!rows(&dir_one)[0]["beside_runs"].is_empty());
    let pressure: f64 = rows(&dir_two)[0]["host_cpu_pressure_pct"].parse().unwrap();
    assert!((0.0..=100.0).contains(&pressure));
    assert_eq!(token(&dir_one).len(), 8);
    assert!(containers("twin").is_empty());
}
