//! Faults around `--resume` on real Redis containers: a resume keeps the first run's `--only`,
//! a run directory has one owner at a time, a copied directory keeps to its own containers, a
//! damaged results.csv is refused before anything runs, reports a full disk kept from being
//! written are drawn by the next resume, a signal during a resume's cleanup stops it cleanly,
//! and a pause shorter than `stall_timeout` is not a measurement.

use crate::common::{containers, rmatrix, Cleanup};
use crate::faults::{
    all_iterations, manifest, ok_iterations, redis_matrix, resume, row_count, rows, wait_for,
    TWO_BY_TWO,
};

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `rmatrix run MATRIX --out DIR --quiet ARGS` in the background, stderr kept in DIR.err.
fn spawn(matrix: &Path, out: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args([
            "run",
            matrix.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ])
        .args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(out.with_extension("err")).unwrap())
        .spawn()
        .unwrap()
}

/// Start a run and SIGKILL it once `n` rows are written: its server is left up.
fn killed_after(matrix: &Path, out: &Path, n: usize, args: &[&str]) {
    let mut child = spawn(matrix, out, args);
    wait_for(&mut child, 120, "rows", || row_count(out) >= n);
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The containers carrying one instance token.
fn of_instance(token: &str) -> usize {
    let out = Command::new("docker")
        .args([
            "ps",
            "-aq",
            "--filter",
            &format!("label=rmatrix.instance={token}"),
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .count()
}

/// The finding: `run M --only config=a`, SIGKILL after 2 rows, `run --resume D` measured the
/// other config's cells too. Now the resume measures config a only; another `--only` on the
/// resume is refused.
#[test]
fn a_resume_keeps_the_first_runs_only() {
    let tmp = tempfile::tempdir().unwrap();
    let m = redis_matrix(tmp.path(), "only", TWO_BY_TWO);
    let name = "faults-resume-only";
    let out = tmp.path().join(name);
    let _guard = Cleanup(name.into());
    killed_after(&m, &out, 2, &["--only", "config=a"]);
    let other = rmatrix(&[
        "run",
        "--resume",
        out.to_str().unwrap(),
        "--only",
        "config=b",
    ]);
    assert_eq!(other.code, 2, "{}", other.stderr);
    assert!(
        other
            .stderr
            .contains("this run was started with --only config=a"),
        "{}",
        other.stderr
    );
    let r = resume(&out);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        ok_iterations(&out),
        all_iterations(&["a"], &["get", "set"], 3)
    );
    assert_eq!(manifest(&out)["iterations_ok"], 6);
    assert!(containers(name).is_empty());
}

/// A `--resume` of a run that is still going (it would remove the live run's containers) is
/// refused with who holds the directory, and the live run ends as if nothing happened.
#[test]
fn a_run_directory_has_one_owner_at_a_time() {
    let tmp = tempfile::tempdir().unwrap();
    let m = redis_matrix(tmp.path(), "owner", TWO_BY_TWO);
    let name = "faults-owner";
    let out = tmp.path().join(name);
    let _guard = Cleanup(name.into());
    let mut live = spawn(&m, &out, &[]);
    wait_for(&mut live, 120, "a row", || row_count(&out) >= 1);
    let second = resume(&out);
    assert_eq!(second.code, 2, "{}", second.stderr);
    assert!(
        second.stderr.contains("is in use: rmatrix run (pid ")
            && second.stderr.contains(&live.id().to_string()),
        "{}",
        second.stderr
    );
    let status = live.wait().unwrap();
    let err = std::fs::read_to_string(out.with_extension("err")).unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert_eq!(ok_iterations(&out).len(), 12);
    // The owner is gone: the directory is free again. Reports a full disk kept from being
    // written are drawn by a resume that finds nothing to measure.
    for f in ["summary.md", "report.html"] {
        std::fs::remove_file(out.join(f)).unwrap();
    }
    let again = resume(&out);
    assert!(
        again.stderr.contains("nothing to resume"),
        "{}",
        again.stderr
    );
    assert!(out.join("summary.md").is_file() && out.join("report.html").is_file());
}

/// Two copies of one killed run: the copy gets its own instance token on its first resume, so
/// it neither removes the original's leftover server nor shares its labels; each completes.
#[test]
fn a_copied_run_directory_keeps_to_its_own_containers() {
    let tmp = tempfile::tempdir().unwrap();
    let m = redis_matrix(tmp.path(), "copy", TWO_BY_TWO);
    let name = "faults-copy";
    let (out, copy) = (tmp.path().join(name), tmp.path().join("copies").join(name));
    let _guard = Cleanup(name.into());
    killed_after(&m, &out, 2, &[]);
    let token = manifest(&out)["instance"].as_str().unwrap().to_string();
    assert!(of_instance(&token) > 0, "SIGKILL leaves the server up");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    assert!(Command::new("cp")
        .args(["-a", out.to_str().unwrap(), copy.to_str().unwrap()])
        .status()
        .unwrap()
        .success());
    let r = resume(&copy);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("is a copy of another run directory"),
        "{}",
        r.stderr
    );
    let copy_token = manifest(&copy)["instance"].as_str().unwrap().to_string();
    assert_ne!(copy_token, token);
    assert!(
        of_instance(&token) > 0,
        "the copy removed the original's server"
    );
    assert_eq!(ok_iterations(&copy).len(), 12);
    let r = resume(&out);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("an earlier attempt"), "{}", r.stderr);
    assert_eq!(
        manifest(&out)["instance"],
        token.as_str(),
        "the original keeps its token"
    );
    assert_eq!(ok_iterations(&out).len(), 12);
    assert_eq!(of_instance(&token) + of_instance(&copy_token), 0);
}

/// A results.csv that `report` refuses (an ok row twice, a NaN) is refused by `--resume` too,
/// with the same message, before anything runs.
#[test]
fn a_resume_refuses_the_results_report_would_refuse() {
    let tmp = tempfile::tempdir().unwrap();
    let m = redis_matrix(tmp.path(), "damaged", TWO_BY_TWO);
    let name = "faults-resume-damaged";
    let out = tmp.path().join(name);
    let _guard = Cleanup(name.into());
    killed_after(&m, &out, 2, &[]);
    let csv = out.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let first_row = text.lines().nth(1).unwrap().to_string();
    std::fs::write(
        &csv,
        format!("{}{first_row}\n", text.trim_end_matches(|c| c != '\n')),
    )
    .unwrap();
    let before = std::fs::read(&csv).unwrap();
    let report = rmatrix(&["report", out.to_str().unwrap()]);
    assert_eq!(report.code, 2, "{}", report.stderr);
    let r = resume(&out);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let why = report
        .stderr
        .lines()
        .find(|l| l.contains("results.csv:"))
        .unwrap();
    assert!(
        r.stderr.contains(why),
        "resume: {}\nreport: {}",
        r.stderr,
        report.stderr
    );
    assert_eq!(std::fs::read(&csv).unwrap(), before, "nothing ran");
}

/// The finding: SIGINT 0.2 s into a `--resume` (while it removes what the killed attempt left)
/// killed rmatrix with no clean stop, and the next resume failed on Docker's 409. Now the stop
/// is clean (exit 130, nothing left running) and the next resume completes.
#[test]
fn a_signal_during_a_resumes_cleanup_stops_it_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let m = redis_matrix(tmp.path(), "cleanup", TWO_BY_TWO);
    let name = "faults-resume-signal";
    let out = tmp.path().join(name);
    let _guard = Cleanup(name.into());
    killed_after(&m, &out, 2, &[]);
    assert!(!containers(name).is_empty());
    let mut child = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args(["run", "--resume", out.to_str().unwrap(), "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Signalled once its handlers are set (the first thing a run does; /proc then lists
    // SIGINT among the signals it catches), not after a fixed 200 ms: before that, SIGINT
    // ends it by the default action, with no exit code, which a loaded machine can make
    // late enough. The signal is then taken up where the resume removes the first run's
    // leftovers, the first step that listens for it (tokio keeps a signal that came before).
    let pid = child.id();
    wait_for(&mut child, 30, "rmatrix catching SIGINT", || {
        std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|s| {
            (s.lines().find_map(|l| l.strip_prefix("SigCgt:")))
                .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
                .is_some_and(|mask| mask & (1 << (libc::SIGINT - 1)) != 0)
        })
    });
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let started = Instant::now();
    while !containers(name).is_empty() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(containers(name).is_empty(), "a server left running");
    let r = resume(&out);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(ok_iterations(&out).len(), 12);
}

/// The finding: `docker pause` for 10 s during a 2 s cell gave an ok row of 10.98 s and a
/// third of the throughput, under the 60 s stall timeout. Now that iteration fails with the
/// reason, the others are ok, and a resume measures it again.
#[test]
fn a_pause_shorter_than_the_stall_timeout_is_not_a_measurement() {
    let tmp = tempfile::tempdir().unwrap();
    let m = redis_matrix(
        tmp.path(),
        "short-pause",
        "workloads:\n  get: {redis: {test: get, keyspace: 100}}\nconcurrency: [2]\n\
         iterations: 2\nlength: 2s\n",
    );
    let name = "faults-short-pause";
    let out = tmp.path().join(name);
    let _guard = Cleanup(name.into());
    let mut child = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args(["run", m.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(out.with_extension("err")).unwrap())
        .spawn()
        .unwrap();
    wait_for(&mut child, 120, "a ready server", || {
        std::fs::read_to_string(out.with_extension("err")).is_ok_and(|t| t.contains(" ready in "))
    });
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(row_count(&out), 0, "paused too late");
    let id = containers(name).remove(0);
    let docker = |verb: &str| Command::new("docker").args([verb, &id]).output().unwrap();
    assert!(docker("pause").status.success());
    std::thread::sleep(Duration::from_secs(5));
    assert!(docker("unpause").status.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(1), "a failed iteration");
    let rs = rows(&out);
    assert_eq!(rs.len(), 2);
    assert_eq!(rs[0]["status"], "failed", "{:?}", rs[0]);
    assert!(
        rs[0]["error"].contains("for a length of 2.0 s"),
        "{}",
        rs[0]["error"]
    );
    assert_eq!(rs[1]["status"], "ok", "{:?}", rs[1]);
    let r = resume(&out);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(ok_iterations(&out).len(), 2);
}
