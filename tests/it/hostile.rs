//! Untrusted input through the real binary: what a matrix says never reaches SQL, a config
//! file or the terminal unchecked, and an engine address rmatrix cannot use is refused.
//! No Docker needed: everything here is refused before a container could start.

use crate::common::rmatrix;

fn matrix(dir: &std::path::Path, body: &str) -> String {
    let path = dir.join("m.yaml");
    std::fs::write(&path, body).unwrap();
    path.to_str().unwrap().to_string()
}

const BASE: &str = "servers:\n  db: {image: mariadb:11}\nworkloads:\n  w: {slap: {load_type: write}}\nlength: 100\n";

#[test]
fn injections_are_refused_with_position_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &str); 10] = [
        (
            "engines: [\"MyISAM; DROP DATABASE mysql; --\"]\n",
            "m.yaml:6:11: engine `MyISAM; DROP DATABASE mysql; --` is not a plain SQL identifier",
        ),
        (
            "engines: [InnoDB]\nconfigs:\n  x: {mycnf: {log_bin: \"1\\n[mysqld_safe]\\nmalloc-lib = /tmp/x.so\"}}\n",
            "the value of `log_bin` contains a newline or another control character (1\\n[mysqld_safe]\\nmalloc-lib = /tmp/x.so)",
        ),
        (
            "engines: [InnoDB]\nconfigs:\n  x: {mycnf: {\"!include /etc/shadow\": ~}}\n",
            "my.cnf option `!include /etc/shadow` is not an option name",
        ),
        (
            "engines: [InnoDB]\nconfigs:\n  \"\\e[31mred\": {}\n",
            "config name `\\u{1b}[31mred` must be letters",
        ),
        (
            "engines: [InnoDB]\nconcurrency: [2, 2]\n",
            "m.yaml:7:18: concurrency 2 is listed twice",
        ),
        // A secret in a config's environment would be copied into the run directory.
        (
            "engines: [InnoDB]\nconfigs:\n  x: {env: {MARIADB_ROOT_PASSWORD: hunter2}}\n",
            "m.yaml:8:13: environment variable `MARIADB_ROOT_PASSWORD` looks like a secret",
        ),
        (
            "engines: [InnoDB]\nconfigs:\n  x: {env: {\"A=B\": c}}\n",
            "m.yaml:8:13: environment variable `A=B` is not a variable name",
        ),
        // report.confidence: out of range, a string with a newline, twice.
        (
            "engines: [InnoDB]\nreport: {confidence: 150}\n",
            "m.yaml:7:22: confidence 150 is not a level between 50 and 100 percent",
        ),
        (
            "engines: [InnoDB]\nreport: {confidence: \"95\\n`x`\"}\n",
            "m.yaml:7:",
        ),
        (
            "engines: [InnoDB]\nreport: {confidence: 95, confidence: 99}\n",
            "m.yaml:7:26: `confidence` is defined twice in `report`: each key may appear once",
        ),
    ];
    for (extra, want) in cases {
        let path = matrix(tmp.path(), &format!("{BASE}{extra}"));
        for cmd in ["plan", "run"] {
            let out = rmatrix(&[cmd, &path]);
            assert_eq!(out.code, 2, "{cmd} {extra}: {}", out.stderr);
            assert!(out.stderr.contains(want), "{cmd} {extra}: {}", out.stderr);
            assert!(
                !out.stderr.contains('\u{1b}'),
                "no raw escape reaches the terminal: {:?}",
                out.stderr
            );
        }
    }
}

#[test]
fn an_unusable_docker_host_is_refused_not_replaced_by_the_local_socket() {
    let tmp = tempfile::tempdir().unwrap();
    let path = matrix(tmp.path(), &format!("{BASE}engines: [InnoDB]\n"));
    // A scheme rmatrix has no transport for, and a tcp engine nobody listens at: both exit
    // 3 naming the address, neither falls back to the local socket.
    for (host, says) in [
        (
            "npipe:////./pipe/docker_engine",
            "the scheme `npipe` is not supported",
        ),
        ("tcp://127.0.0.1:1", "tcp://127.0.0.1:1"),
    ] {
        let out_dir = tmp.path().join("run");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rmatrix"))
            .args(["run", &path, "--out", out_dir.to_str().unwrap(), "--quiet"])
            .env("DOCKER_HOST", host)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert!(
            !out_dir.exists(),
            "no run directory for a run that cannot start"
        );
    }
}

/// `rmatrix report DIR | head -1`: the reader goes away; rmatrix stops quietly, no panic.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    use std::process::{Command, Stdio};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("reports/examples/threadpool-2026-11-29");
    for format in ["md", "csv", "json"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
            .args(["report", dir.to_str().unwrap(), "--format", format])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader is gone before anything was written
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{format}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{format}: {stderr}");
    }
}

/// Inputs that would silently do nothing, or something else than asked, are refused.
#[test]
fn empty_runs_and_ignored_arguments_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let two =
        format!("{BASE}engines: [InnoDB, MyISAM]\nexclude:\n  - {{engine: MyISAM, workload: w}}\n");
    let path = matrix(tmp.path(), &two);
    let out = rmatrix(&["plan", &path, "--only", "engine=MyISAM"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("--only engine=MyISAM keeps no cell of the matrix: nothing would run"),
        "{}",
        out.stderr
    );
    // The same --only on a value that has cells plans them (the check is not too eager).
    let out = rmatrix(&["plan", &path, "--only", "engine=InnoDB"]);
    assert_eq!(out.code, 0, "{}", out.stderr);

    let all = format!("{BASE}engines: [InnoDB]\nexclude:\n  - {{workload: w}}\n");
    let out = rmatrix(&["plan", &matrix(tmp.path(), &all)]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("m.yaml:8:3: `exclude`/`include` leave no cell to run"),
        "{}",
        out.stderr
    );

    let path = matrix(tmp.path(), &format!("{BASE}engines: [InnoDB]\n"));
    let out = rmatrix(&["run", &path, "--resume", tmp.path().to_str().unwrap()]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("cannot be used with"), "{}", out.stderr);
}
