//! A matrix across a pool of two Docker engines on this machine: the default one and a
//! second daemon (containers/second-engine.sh: its own socket and data root, no bridge, so
//! host networking), reached over tcp://127.0.0.1 to exercise that transport too. The second
//! runs in a network namespace of its own, as if on another host: the servers it starts are
//! not reachable at this machine's 127.0.0.1, so rmatrix must pick their ports, wait for
//! them, read them back and drive them from containers on that engine.
//! Needs root and dockerd; the tests take the second engine down and up themselves.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::result_rows;

const LOCAL: &str = "unix:///var/run/docker.sock";
const SECOND_SOCK: &str = "unix:///run/rmatrix-d2/docker.sock";
const SECOND_TCP: &str = "tcp://127.0.0.1:23750";
/// The second engine's TLS listener (certificates under /run/rmatrix-d2/tls).
const SECOND_TLS: &str = "tcp://127.0.0.1:23760";

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("containers/second-engine.sh")
}

/// Start the second engine (idempotent) with the base image and any built Redis 7.0 images
/// of the default engine copied in (what it lacks it builds through the API).
fn second_engine_up() {
    let out = Command::new(script())
        .args(["start", "debian:bookworm", "rmatrix/redis-7.0"])
        .output()
        .expect("run second-engine.sh");
    assert!(
        out.status.success(),
        "second engine: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn second_engine_down() {
    let out = Command::new(script()).arg("stop").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `docker` against one engine.
fn docker(host: &str, args: &[&str]) -> String {
    let out = Command::new("docker")
        .arg("-H")
        .arg(host)
        .args(args)
        .output()
        .expect("docker CLI");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Containers of run `id` on an engine (running or not).
fn run_containers(host: &str, id: &str) -> Vec<String> {
    docker(
        host,
        &["ps", "-aq", "--filter", &format!("label=rmatrix.run={id}")],
    )
    .split_whitespace()
    .map(str::to_string)
    .collect()
}

/// Removes what run `id` left on both engines: at once (a test run that was killed left
/// them, under another instance token that a resume does not remove), and when dropped,
/// also when the test panics first.
struct Cleanup(String);

impl Cleanup {
    fn fresh(id: &str) -> Cleanup {
        remove_run(id);
        Cleanup(id.to_string())
    }
}

fn remove_run(id: &str) {
    for host in [LOCAL, SECOND_SOCK] {
        for c in run_containers(host, id) {
            docker(host, &["rm", "-f", &c]);
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        remove_run(&self.0);
    }
}

fn matrix(dir: &Path, configs: &str, concurrency: &str, length: &str) -> PathBuf {
    let path = dir.join("pool.yaml");
    std::fs::write(
        &path,
        format!(
            "servers:\n  redis-7.0: {{build: redis-7.0}}\nconfigs:\n{configs}\
             workloads:\n  get: {{redis: {{test: get, keyspace: 1000}}}}\n\
             concurrency: {concurrency}\nnetwork: host\nlength: {length}\nwarmup: 1s\n"
        ),
    )
    .unwrap();
    path
}

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

fn engine_counts(rows: &[BTreeMap<String, String>]) -> BTreeMap<String, usize> {
    let mut n = BTreeMap::new();
    for r in rows {
        *n.entry(r["docker_engine"].clone()).or_insert(0) += 1;
    }
    n
}

/// Unix seconds now, for `docker events --since`.
fn now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[test]
fn a_matrix_runs_across_two_engines_with_the_client_next_to_each_server() {
    second_engine_up();
    let tmp = tempfile::tempdir().unwrap();
    let m = matrix(
        tmp.path(),
        "  default: {}\n  aof:\n    redis_conf: {appendonly: 'yes', appendfsync: everysec}\n",
        "[1, 4]",
        "2s",
    );
    let out_dir = tmp.path().join("pool-two-engines");
    let _cleanup = Cleanup::fresh("pool-two-engines");
    let since = now_s().to_string();
    let out = crate::common::rmatrix(&[
        "run",
        m.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--quiet",
        "--engine",
        LOCAL,
        "--engine",
        SECOND_TCP,
    ]);
    let failed = crate::common::failed_rows(&out_dir);
    assert_eq!(out.code, 0, "{}{failed}", out.stderr);

    // Every cell once, each deployment on one engine, the two deployments on two engines.
    let rows = result_rows(&out_dir);
    assert_eq!(rows.len(), 4, "{}", out.stderr);
    assert!(rows.iter().all(|r| r["status"] == "ok"), "{rows:?}");
    let mut cells: Vec<String> = rows
        .iter()
        .map(|r| format!("{}/{}", r["config"], r["concurrency"]))
        .collect();
    cells.sort();
    assert_eq!(cells, ["aof/1", "aof/4", "default/1", "default/4"]);
    assert_eq!(
        engine_counts(&rows),
        BTreeMap::from([("e1".into(), 2), ("e2".into(), 2)]),
        "{}",
        out.stderr
    );
    for config in ["default", "aof"] {
        let on: Vec<&str> = rows
            .iter()
            .filter(|r| r["config"] == config)
            .map(|r| r["docker_engine"].as_str())
            .collect();
        assert_eq!(on[0], on[1], "one deployment, one engine: {rows:?}");
    }
    // The server's CPU is read from its cgroup also where the client ran in a container.
    assert!(rows.iter().all(|r| !r["srv_cpu_s"].is_empty()), "{rows:?}");

    // The manifest: both engines with their hosts, the second's clients in containers.
    let man = manifest(&out_dir);
    let engines = man["engines"].as_array().unwrap();
    assert_eq!(engines.len(), 2);
    assert_eq!(engines[0]["client"], "process");
    assert_eq!(engines[1]["client"], "container");
    assert_eq!(engines[1]["address"], SECOND_TCP);
    for e in engines {
        assert!(e["host"]["cpus"].as_i64().unwrap() > 0, "{e}");
        assert!(!e["host"]["server_version"].as_str().unwrap().is_empty());
        assert!(!e["host"]["kernel"].as_str().unwrap().is_empty());
    }
    for name in ["e1", "e2"] {
        assert!(
            man["engine_images"][name]["redis-7.0"]["id"]
                .as_str()
                .unwrap()
                .starts_with("sha256:"),
            "{man}"
        );
    }
    let deployments = man["deployments"].as_array().unwrap();
    assert!(deployments.iter().all(|d| d["status"] == "ok"));

    // The clients of the second engine's cells ran in rmatrix containers there (one per
    // iteration), as did the server's port pick and its wait and read-back (one each per
    // deployment); none on the default engine.
    let until = (now_s() + 1).to_string();
    let started = |host: &str| {
        docker(
            host,
            &[
                "events",
                "--since",
                &since,
                "--until",
                &until,
                "--filter",
                "event=start",
                "--filter",
                "label=rmatrix.run=pool-two-engines",
                "--format",
                "{{.From}} {{.Actor.Attributes.name}}",
            ],
        )
    };
    let second = started(SECOND_SOCK);
    let jobs = |what: &str| {
        second
            .lines()
            .filter(|l| l.starts_with("rmatrix/client:") && l.contains(&format!("-{what}-")))
            .count()
    };
    assert_eq!(
        [jobs("client"), jobs("port"), jobs("await")],
        [2, 1, 1],
        "{second}"
    );
    assert!(!started(LOCAL).contains("rmatrix/client:"));

    // Nothing is left on either engine.
    assert!(run_containers(LOCAL, "pool-two-engines").is_empty());
    assert!(run_containers(SECOND_SOCK, "pool-two-engines").is_empty());
}

#[test]
fn a_stopped_engine_hands_its_queue_to_the_other_and_resume_completes_the_run() {
    second_engine_up();
    let tmp = tempfile::tempdir().unwrap();
    let configs: String = (1..=4)
        .map(|h| format!("  hz{h}:\n    redis_conf: {{hz: {}}}\n", h * 10))
        .collect();
    let m = matrix(tmp.path(), &configs, "[2]", "4s");
    let id = "pool-engine-stops";
    let out_dir = tmp.path().join(id);
    let _cleanup = Cleanup::fresh(id);
    let engines = ["--engine", LOCAL, "--engine", SECOND_SOCK];
    let child = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args([
            "run",
            m.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
            "--quiet",
        ])
        .args(engines)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once a server of this run is up on the second engine, stop that engine.
    let deadline = Instant::now() + Duration::from_secs(240);
    while run_containers(SECOND_SOCK, id).is_empty() {
        assert!(
            Instant::now() < deadline,
            "no container of the run on the second engine"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(2));
    second_engine_down();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "some cells failed: {stderr}");

    // Every cell has its row; the second engine's deployment failed with the reason, and
    // the rest of the queue ran on the default engine.
    let rows = result_rows(&out_dir);
    assert_eq!(rows.len(), 4, "{stderr}");
    let failed: Vec<_> = rows.iter().filter(|r| r["status"] != "ok").collect();
    assert_eq!(failed.len(), 1, "{rows:?}");
    assert_eq!(failed[0]["docker_engine"], "e2");
    assert!(rows
        .iter()
        .filter(|r| r["status"] == "ok")
        .all(|r| r["docker_engine"] == "e1"));
    let man = manifest(&out_dir);
    let lost = man["engines"][1]["lost"].as_str().unwrap_or_default();
    assert!(lost.contains("engine e2 stopped answering"), "{man}");
    assert!(run_containers(LOCAL, id).is_empty());

    // A pooled run resumes only with its pool named again.
    let out = crate::common::rmatrix(&["run", "--resume", out_dir.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("pass the same --engine"),
        "{}",
        out.stderr
    );

    // Nor with another pool (one of its engines only).
    let out = crate::common::rmatrix(&[
        "run",
        "--resume",
        out_dir.to_str().unwrap(),
        "--quiet",
        "--engine",
        LOCAL,
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("a resume runs on the first run's engines"),
        "{}",
        out.stderr
    );

    // With the engine back, --resume measures the failed cell again (removing what the
    // stopped engine still held of the run) and leaves nothing behind on either engine.
    second_engine_up();
    let mut args = vec!["run", "--resume", out_dir.to_str().unwrap(), "--quiet"];
    args.extend(engines);
    let out = crate::common::rmatrix(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows = result_rows(&out_dir);
    assert_eq!(rows.iter().filter(|r| r["status"] == "ok").count(), 4);
    assert!(run_containers(LOCAL, id).is_empty());
    assert!(run_containers(SECOND_SOCK, id).is_empty());
}

/// The finding: the engine of a one-engine run restarted mid-run failed the remaining cells
/// in 0.1 s saying they "go to the other engines" (there were none), exit 1. Now the run ends
/// with exit 3 and a plain message naming what was not measured, and a `--resume` once the
/// engine is back completes it.
#[test]
fn losing_the_only_engine_mid_run_is_exit_3_and_resume_completes_the_run() {
    second_engine_up();
    let tmp = tempfile::tempdir().unwrap();
    let configs = "  hz10: {redis_conf: {hz: 10}}\n  hz20: {redis_conf: {hz: 20}}\n";
    let m = matrix(tmp.path(), configs, "[2]", "3s");
    let id = "pool-only-engine-lost";
    let out_dir = tmp.path().join(id);
    let _cleanup = Cleanup::fresh(id);
    let child = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args([
            "run",
            m.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
            "--quiet",
        ])
        .args(["--engine", SECOND_SOCK])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(240);
    while run_containers(SECOND_SOCK, id).is_empty() {
        assert!(Instant::now() < deadline, "no container of the run");
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(2));
    second_engine_down();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!("engine {SECOND_SOCK} stopped answering mid-run"))
            && stderr.contains("iteration(s) were not measured")
            && stderr.contains("--resume"),
        "{stderr}"
    );
    assert!(!stderr.contains("go to the other engines"), "{stderr}");
    assert!(
        out_dir.join("summary.md").is_file(),
        "the summary of what was measured"
    );
    second_engine_up();
    let args = [
        "run",
        "--resume",
        out_dir.to_str().unwrap(),
        "--quiet",
        "--engine",
        SECOND_SOCK,
    ];
    let r = crate::common::rmatrix(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = result_rows(&out_dir);
    assert_eq!(rows.iter().filter(|r| r["status"] == "ok").count(), 2);
    // The engine was restarted under the run: give its own bookkeeping a moment before
    // what is left counts, and say what it is if something is.
    let settled = Instant::now() + Duration::from_secs(15);
    while !run_containers(SECOND_SOCK, id).is_empty() && Instant::now() < settled {
        std::thread::sleep(Duration::from_millis(250));
    }
    let left = docker(
        SECOND_SOCK,
        &[
            "ps",
            "-a",
            "--filter",
            &format!("label=rmatrix.run={id}"),
            "--format",
            "{{.ID}} {{.Status}} {{.Names}} {{.Label \"rmatrix.instance\"}}",
        ],
    );
    assert!(
        left.trim().is_empty(),
        "left: {left}\nresume said: {}",
        r.stderr
    );
}

/// `image:` by registry reference, pulled on each engine of the pool: a MariaDB image built
/// from containers/mariadb is pushed to the loopback registry (containers/local-registry.sh),
/// its registry tag removed locally, and the matrix names it by reference.
#[test]
fn an_image_named_by_registry_reference_is_pulled_on_every_engine() {
    const REF: &str = "127.0.0.1:5000/rmatrix/mariadb:10.11";
    second_engine_up();
    let ok = |what: &str, out: std::process::Output| {
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    ok(
        "registry",
        Command::new(root.join("containers/local-registry.sh"))
            .arg("start")
            .output()
            .unwrap(),
    );
    // Built (from the layer cache when another test built it first), pushed, untagged here.
    ok(
        "build",
        Command::new("docker")
            .args([
                "build",
                "-q",
                "--network",
                "host",
                "--build-arg",
                "suite=bookworm",
            ])
            .args(["-t", REF])
            .arg(root.join("containers/mariadb"))
            .output()
            .unwrap(),
    );
    ok(
        "push",
        Command::new("docker")
            .args(["push", "-q", REF])
            .output()
            .unwrap(),
    );
    for host in [LOCAL, SECOND_SOCK] {
        docker(host, &["rmi", REF]);
    }

    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("registry.yaml");
    std::fs::write(
        &m,
        format!(
            "servers:\n  db: {{image: '{REF}'}}\nconfigs:\n  a: {{}}\n  b: {{mycnf: {{max_connections: 50}}}}\n\
             engines: [InnoDB]\nworkloads:\n  key: {{slap: {{load_type: key, primary_key: autoincrement}}}}\nconcurrency: [2]\nnetwork: host\nlength: 200\n"
        ),
    )
    .unwrap();
    let id = "pool-registry-image";
    let out_dir = tmp.path().join(id);
    let _cleanup = Cleanup::fresh(id);
    let out = crate::common::rmatrix(&[
        "run",
        m.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--quiet",
        "--engine",
        LOCAL,
        "--engine",
        SECOND_SOCK,
    ]);
    let rows = result_rows(&out_dir);
    let why: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{} on {}: {} {}",
                r["config"], r["docker_engine"], r["status"], r["error"]
            )
        })
        .collect();
    assert_eq!(out.code, 0, "{}\n{why:?}", out.stderr);
    assert_eq!(
        engine_counts(&rows),
        BTreeMap::from([("e1".into(), 1), ("e2".into(), 1)])
    );
    let man = manifest(&out_dir);
    let mut ids = Vec::new();
    for name in ["e1", "e2"] {
        let img = &man["engine_images"][name]["db"];
        assert_eq!(img["origin"], "pulled", "{man}");
        assert_eq!(img["reference"], REF);
        let digest = img["digest"].as_str().unwrap_or_default();
        assert!(
            digest.starts_with("127.0.0.1:5000/rmatrix/mariadb@sha256:"),
            "{man}"
        );
        ids.push(img["id"].as_str().unwrap().to_string());
    }
    assert_eq!(ids[0], ids[1], "the same image on both engines");
    assert!(run_containers(LOCAL, id).is_empty());
    assert!(run_containers(SECOND_SOCK, id).is_empty());
    for host in [LOCAL, SECOND_SOCK] {
        docker(host, &["rmi", REF]);
    }
}

/// Pool addresses are checked before anything runs: an engine twice is bad usage (exit 2),
/// a scheme rmatrix has no transport for or an engine that does not answer is exit 3, and
/// neither leaves a run directory.
#[test]
fn bad_pools_are_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let m = matrix(tmp.path(), "  default: {}\n", "[1]", "1s");
    let out_dir = tmp.path().join("never");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            m.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
            "--quiet",
        ];
        args.extend(extra);
        crate::common::rmatrix(&args)
    };
    let out = run(&["--engine", LOCAL, "--engine", LOCAL]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("in the pool twice"), "{}", out.stderr);
    let out = run(&[
        "--engine",
        LOCAL,
        "--engine",
        "npipe:////./pipe/docker_engine",
    ]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("`npipe` is not supported"),
        "{}",
        out.stderr
    );
    let out = run(&[
        "--engine",
        LOCAL,
        "--engine",
        "unix:///nonexistent/docker.sock",
    ]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("unix:///nonexistent/docker.sock"),
        "{}",
        out.stderr
    );
    let hosts = tmp.path().join("hosts.yaml");
    std::fs::write(
        &hosts,
        "engines:\n  - {name: a, host: 'unix:///a', tls: certs}\n",
    )
    .unwrap();
    let out = run(&["--engines", hosts.to_str().unwrap()]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("hosts.yaml:2:"), "{}", out.stderr);
    assert!(!out_dir.exists());
}

/// A tcp:// engine with mutual TLS (the second engine's own TLS listener, certificates made
/// by containers/second-engine.sh), named by `DOCKER_TLS_VERIFY`/`DOCKER_CERT_PATH` as the
/// Docker CLI reads them: with its client certificate the run goes through; without TLS, or
/// trusting another CA, the engine is unavailable (exit 3) and nothing is written.
#[test]
fn a_tls_engine_is_used_with_its_certificates_and_refused_without() {
    second_engine_up();
    let tmp = tempfile::tempdir().unwrap();
    let m = matrix(tmp.path(), "  default: {}\n", "[1]", "1s");
    let _cleanup = Cleanup::fresh("pool-tls");
    let certs = Path::new("/run/rmatrix-d2/tls/client");
    let run = |out: &Path, certs: Option<&Path>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rmatrix"));
        cmd.args(["run", m.to_str().unwrap(), "--out", out.to_str().unwrap()])
            .args(["--quiet", "--engine", SECOND_TLS])
            .env_remove("DOCKER_TLS_VERIFY")
            .env_remove("DOCKER_CERT_PATH");
        if let Some(c) = certs {
            cmd.env("DOCKER_TLS_VERIFY", "1").env("DOCKER_CERT_PATH", c);
        }
        let o = cmd.output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };

    let out_dir = tmp.path().join("pool-tls");
    let (code, stderr) = run(&out_dir, Some(certs));
    assert_eq!(code, Some(0), "{stderr}");
    let rows = result_rows(&out_dir);
    assert_eq!(rows.len(), 1, "{stderr}");
    assert_eq!(rows[0]["status"], "ok", "{rows:?}");
    let man = manifest(&out_dir);
    let address = man["engines"][0]["address"].as_str().unwrap_or_default();
    assert_eq!(address, "tcp://127.0.0.1:23760 (TLS)", "{man}");
    assert_eq!(man["engines"][0]["client"], "container", "{man}");

    // Plain HTTP to the TLS port: the engine does not answer as an engine.
    let never = tmp.path().join("never");
    let (code, stderr) = run(&never, None);
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("tcp://127.0.0.1:23760"), "{stderr}");
    // A CA that did not sign the engine's certificate: verification fails.
    let other = tmp.path().join("other-ca");
    std::fs::create_dir(&other).unwrap();
    for f in ["cert.pem", "key.pem"] {
        std::fs::copy(certs.join(f), other.join(f)).unwrap();
    }
    std::fs::copy(certs.join("cert.pem"), other.join("ca.pem")).unwrap();
    let (code, stderr) = run(&never, Some(&other));
    assert_eq!(code, Some(3), "{stderr}");
    assert!(!never.exists(), "a refused pool writes no run directory");
    assert!(run_containers(SECOND_SOCK, "pool-tls").is_empty());
}

/// Ctrl-C in the middle of a pooled run: exit 130, every container of the run removed on
/// both engines, the rows measured so far kept with a summary.
#[test]
fn ctrl_c_in_a_pooled_run_removes_its_containers_on_every_engine() {
    second_engine_up();
    let tmp = tempfile::tempdir().unwrap();
    let configs: String = (1..=6)
        .map(|i| format!("  hz{i}0: {{redis_conf: {{hz: {i}0}}}}\n"))
        .collect();
    let m = matrix(tmp.path(), &configs, "[1]", "3s");
    let out_dir = tmp.path().join("pool-sigint");
    let _cleanup = Cleanup::fresh("pool-sigint");
    let log = std::fs::File::create(tmp.path().join("stderr.log")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args([
            "run",
            m.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .args(["--quiet", "--engine", LOCAL, "--engine", SECOND_TCP])
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    // Wait for a measured row, then for a container of the run on each engine at once.
    let deadline = Instant::now() + Duration::from_secs(180);
    let both_busy = || {
        !run_containers(LOCAL, "pool-sigint").is_empty()
            && !run_containers(SECOND_SOCK, "pool-sigint").is_empty()
    };
    while !(out_dir.join("results.csv").exists()
        && !result_rows(&out_dir).is_empty()
        && both_busy())
    {
        assert!(Instant::now() < deadline, "the pooled run never got going");
        assert!(child.try_wait().unwrap().is_none(), "the run ended first");
        std::thread::sleep(Duration::from_millis(200));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(tmp.path().join("stderr.log")).unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(run_containers(LOCAL, "pool-sigint").is_empty(), "{stderr}");
    assert!(
        run_containers(SECOND_SOCK, "pool-sigint").is_empty(),
        "{stderr}"
    );
    let rows = result_rows(&out_dir);
    assert!(!rows.is_empty() && rows.len() < 6, "{rows:?}");
    assert!(out_dir.join("summary.md").exists());
    assert!(manifest(&out_dir)["finished_at"].is_string());
}

/// An ssh:// engine, as `docker -H ssh://` reaches one: the system ssh runs `docker system
/// dial-stdio` on the host. containers/second-engine.sh serves the second engine that way
/// (its own sshd on 127.0.0.1:2222, the ssh host alias `rmatrix-d2` giving its key and
/// known_hosts; the port is in the URL). No ssh process of the run outlives it.
#[test]
fn an_ssh_engine_is_used_through_the_system_ssh() {
    second_engine_up();
    let tmp = tempfile::tempdir().unwrap();
    let m = matrix(tmp.path(), "  default: {}\n", "[1]", "1s");
    let _cleanup = Cleanup::fresh("pool-ssh");
    let out_dir = tmp.path().join("pool-ssh");
    let since = now_s().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args([
            "run",
            m.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .args(["--quiet", "--engine", "ssh://root@rmatrix-d2:2222"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let rows = result_rows(&out_dir);
    assert_eq!(rows.len(), 1, "{stderr}");
    assert_eq!(rows[0]["status"], "ok", "{rows:?}");
    let man = manifest(&out_dir);
    assert_eq!(
        man["engines"][0]["address"], "ssh://root@rmatrix-d2:2222",
        "{man}"
    );
    // The server ran on the second engine (the one the sshd's sessions talk to).
    let until = (now_s() + 1).to_string();
    let started = docker(
        SECOND_SOCK,
        &[
            "events",
            "--since",
            &since,
            "--until",
            &until,
            "--filter",
            "event=start",
            "--filter",
            "label=rmatrix.run=pool-ssh",
            "--format",
            "{{.From}}",
        ],
    );
    assert!(started.contains("rmatrix/redis-7.0"), "{started}");
    assert!(run_containers(SECOND_SOCK, "pool-ssh").is_empty());
    let ssh_left = Command::new("pgrep")
        .args(["-af", "docker system dial-stdio|sshd: root@"])
        .output()
        .unwrap();
    let ssh_left = String::from_utf8_lossy(&ssh_left.stdout);
    assert!(ssh_left.trim().is_empty(), "ssh processes left: {ssh_left}");

    // A host that refuses: exit 3, with what ssh said.
    let never = tmp.path().join("never");
    let out = crate::common::rmatrix(&[
        "run",
        m.to_str().unwrap(),
        "--out",
        never.to_str().unwrap(),
        "--engine",
        "ssh://root@127.0.0.1:1",
    ]);
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(out.stderr.contains("Connection refused"), "{}", out.stderr);
}
