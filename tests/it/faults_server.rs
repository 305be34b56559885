//! Faults of the server and of the tools on real containers: the kernel killing the server for
//! lack of memory, and rmatrix SIGKILLed while an external tool runs.

use crate::common::{containers, Cleanup};
use crate::faults::{manifest, rows};

use std::process::Command;

/// A Redis limited to 32 MiB (`memory: 32m`) filled with 64 KiB values until the kernel kills
/// it: the failed rows say OOMKilled with the limit, and the manifest's deployment records it.
#[test]
fn a_server_killed_for_lack_of_memory_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("oom.yaml");
    std::fs::write(
        &m,
        "servers:\n  redis-7.0: {build: redis-7.0, memory: 32m}\n\
         configs:\n  default: {redis_conf: {save: \"\", appendonly: \"no\"}}\n\
         workloads:\n  fill: {redis: {test: set, keyspace: 10000000, data_size: 65536}}\n\
         concurrency: [4]\niterations: 2\nlength: 20s\nstall_timeout: 20s\n",
    )
    .unwrap();
    let name = "faults-oom";
    let out = tmp.path().join(name);
    let _guard = Cleanup(name.into());
    let o = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args([
            "run",
            m.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let rs = rows(&out);
    assert!(!rs.is_empty(), "{stderr}");
    assert!(rs.iter().all(|r| r["status"] == "failed"), "{rs:?}");
    // The kernel may first stall the server reclaiming its pages (then the iteration fails
    // as a stall), and kill it after: a row of a killed server says so.
    let oom = "killed for lack of memory (OOMKilled; its memory limit is 32m)";
    assert!(rs.iter().any(|r| r["error"].contains(oom)), "{rs:?}");
    let man = manifest(&out);
    let d = &man["deployments"][0];
    assert_eq!(d["oom_killed"], true, "{d}");
    assert_eq!(d["memory_bytes"], 32 << 20, "{d}");
    assert!(containers(name).is_empty());
}

/// The pids of `parent`'s children named `comm`.
fn children(parent: u32, comm: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let Some((name, rest)) = stat.split_once(") ") else {
            continue;
        };
        let ppid = rest
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok());
        // The manifest's `--version` probe is a child too, but not the run being tested.
        let probe = std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| c.split(|b| *b == 0).any(|a| a == b"--version"));
        if name.ends_with(&format!("({comm}")) && ppid == Some(parent) && !probe {
            out.push(pid);
        }
    }
    out
}

/// `parent`'s children named `comm` in their measured phase: redis-benchmark's only run,
/// sysbench's `run` (not its `prepare` or `cleanup`).
fn measuring(parent: u32, comm: &str) -> Vec<u32> {
    children(parent, comm)
        .into_iter()
        .filter(|pid| {
            comm != "sysbench"
                || std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| c.split(|b| *b == 0).any(|a| a == b"run"))
        })
        .collect()
}

/// Send `sig` (a name such as STOP) to `pid`.
fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([format!("-{sig}"), pid.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill -{sig} {pid}");
}

/// Wait up to `secs` for `cond`.
fn eventually(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed().as_secs() < secs {
        if cond() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    cond()
}

/// SIGKILL of rmatrix while its tool runs: the finding was an orphaned redis-benchmark still
/// running 4 s later, and sysbench's password file left in the temp folder. Now the tools die
/// with rmatrix at once, and the next start removes the file.
#[test]
fn external_tools_die_with_a_killed_rmatrix_and_their_secrets_go_next_start() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            "faults-orphan-rb",
            "redis-benchmark",
            "servers:\n  redis-7.0: {build: redis-7.0}\nworkloads:\n  rb: {redis_benchmark: \
             {test: get, keyspace: 100, requests: 100000000}}\nconcurrency: [2]\niterations: 1\n\
             length: 100000000\n",
        ),
        (
            "faults-orphan-sysbench",
            "sysbench",
            "servers:\n  mariadb-10.11: {build: mariadb-10.11}\nworkloads:\n  ps: {sysbench: \
             {test: oltp_point_select, options: {tables: 1, table_size: 1000}}}\n\
             concurrency: [2]\niterations: 1\nlength: 5s\n",
        ),
    ];
    for (name, tool, matrix) in cases {
        let m = tmp.path().join(format!("{name}.yaml"));
        std::fs::write(&m, matrix).unwrap();
        let out = tmp.path().join(name);
        let _guard = Cleanup(name.into());
        let mut child = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
            .args([
                "run",
                m.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--quiet",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let parent = child.id();
        let secrets = |pid: u32| {
            std::fs::read_dir(std::env::temp_dir())
                .unwrap()
                .flatten()
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(&format!("rmatrix-secret-{pid}-"))
                })
                .count()
        };
        // Caught in a tool's `run` (sysbench's `prepare` is a tool run too, and its password
        // file goes when it ends, before the next run's is written) and held there: stopped,
        // rmatrix cannot remove the file of the run it started. Tried again if the run ended
        // between the look and the stop.
        let caught = eventually(180, || {
            if measuring(parent, tool).is_empty() {
                return false;
            }
            signal(parent, "STOP");
            let holds =
                !measuring(parent, tool).is_empty() && (tool != "sysbench" || secrets(parent) > 0);
            if !holds {
                signal(parent, "CONT");
            }
            holds
        });
        assert!(caught, "{name}: {tool} never started");
        let tools = children(parent, tool);
        let had_secret = secrets(parent) > 0;
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            eventually(2, || tools
                .iter()
                .all(|p| !std::path::Path::new(&format!("/proc/{p}")).exists())),
            "{name}: {tool} outlived rmatrix"
        );
        if tool == "sysbench" {
            assert!(had_secret, "sysbench runs with a password file");
            assert!(secrets(parent) > 0, "SIGKILL leaves it");
            // Any start removes it (the resume measures the iteration too).
            let r = crate::faults::resume(&out);
            assert_eq!(r.code, 0, "{}", r.stderr);
            assert!(
                r.stderr.contains("password file(s) a killed rmatrix left"),
                "{}",
                r.stderr
            );
            assert_eq!(secrets(parent), 0);
        }
    }
}
