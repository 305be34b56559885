//! End to end against real MariaDB containers through the real Docker engine.
//! Run with `--test-threads=1` (the README's test command does): servers are started one at a time.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rmatrix(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args(args)
        .output()
        .expect("run rmatrix")
}

/// `rmatrix run MATRIX --out DIR --quiet`, which must succeed.
fn run_ok(matrix: &Path, out_dir: &Path) {
    let out = rmatrix(&[
        "run",
        matrix.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn containers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("containers")
}

fn write_matrix(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("matrix.yaml");
    let text = format!("servers:\n  mariadb-10.11: {{build: mariadb-10.11}}\n{body}");
    std::fs::write(&path, text).unwrap();
    path
}

fn rows(dir: &Path) -> Vec<csv::StringRecord> {
    let mut r = csv::Reader::from_path(dir.join("results.csv")).unwrap();
    r.records().map(|r| r.unwrap()).collect()
}

fn header(dir: &Path) -> csv::StringRecord {
    csv::Reader::from_path(dir.join("results.csv"))
        .unwrap()
        .headers()
        .unwrap()
        .clone()
}

fn col(h: &csv::StringRecord, name: &str) -> usize {
    h.iter()
        .position(|c| c == name)
        .unwrap_or_else(|| panic!("column {name}"))
}

fn leftover_containers(run_id: &str) -> String {
    let out = Command::new("docker")
        .args([
            "ps",
            "-a",
            "-q",
            "--filter",
            &format!("label=rmatrix.run={run_id}"),
        ])
        .output()
        .expect("docker CLI");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn variables(dir: &Path, deployment: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("servers").join(deployment).join("variables.json"))
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn matrix_runs_end_to_end_and_a_bad_config_fails_only_its_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = write_matrix(
        tmp.path(),
        "configs:
  binlog-off: {}
  binlog-on: {mycnf: {log_bin: mysql-bin, server_id: 1, sync_binlog: 1}}
  typo: {mycnf: {innodb_bufer_pool_size: 64M}}
engines: [InnoDB, MyISAM]
workloads:
  write: {slap: {load_type: write, number_int_cols: 2, number_char_cols: 2, primary_key: guid}}
concurrency: [2]
iterations: 2
length: 300
report: {rows: [workload], columns: [engine, config], baseline: {config: binlog-off}}
",
    );
    let out_dir = tmp.path().join("e2e-matrix");
    let out = rmatrix(&[
        "run",
        matrix.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
        "--quiet",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "some cells failed -> exit 1; stderr:\n{stderr}"
    );

    // Exactly the expected cells x iterations: each round passes over a deployment's cells.
    let h = header(&out_dir);
    let rows = rows(&out_dir);
    let keys: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{}/{}/{}#{}",
                &r[col(&h, "config")],
                &r[col(&h, "engine")],
                &r[col(&h, "status")],
                &r[col(&h, "iteration")]
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            "binlog-off/InnoDB/ok#1",
            "binlog-off/MyISAM/ok#1",
            "binlog-off/InnoDB/ok#2",
            "binlog-off/MyISAM/ok#2",
            "binlog-on/InnoDB/ok#1",
            "binlog-on/MyISAM/ok#1",
            "binlog-on/InnoDB/ok#2",
            "binlog-on/MyISAM/ok#2",
            "typo/InnoDB/failed#1",
            "typo/MyISAM/failed#1",
            "typo/InnoDB/failed#2",
            "typo/MyISAM/failed#2",
        ]
    );
    for r in &rows {
        if &r[col(&h, "status")] == "ok" {
            // The client's count is what the server counted.
            assert_eq!(&r[col(&h, "queries")], "300");
            assert_eq!(&r[col(&h, "srv_com_insert")], "300");
            assert_eq!(&r[col(&h, "srv_questions")], "300");
            assert!(r[col(&h, "qps")].parse::<f64>().unwrap() > 0.0);
            assert!(r[col(&h, "lat_p95_ms")].parse::<f64>().unwrap() > 0.0);
        } else {
            // The failure carries the server's own error line.
            let err = &r[col(&h, "error")];
            assert!(
                err.contains("unknown variable 'innodb_bufer_pool_size=64M'"),
                "{err}"
            );
        }
    }

    // The variant really took effect, and was read back.
    assert_eq!(
        variables(&out_dir, "mariadb-10.11__binlog-on")["log_bin"],
        "ON"
    );
    assert_eq!(
        variables(&out_dir, "mariadb-10.11__binlog-on")["sync_binlog"],
        "1"
    );
    assert_eq!(
        variables(&out_dir, "mariadb-10.11__binlog-off")["log_bin"],
        "OFF"
    );
    let verified =
        std::fs::read_to_string(out_dir.join("servers/mariadb-10.11__binlog-on/verified.json"))
            .unwrap();
    assert!(
        verified.contains("\"status\": \"ok\"") && !verified.contains("mismatch"),
        "{verified}"
    );
    for f in ["my.cnf", "server.log"] {
        assert!(
            out_dir
                .join("servers/mariadb-10.11__binlog-on")
                .join(f)
                .is_file(),
            "{f}"
        );
    }
    assert!(
        std::fs::read_to_string(out_dir.join("servers/mariadb-10.11__typo/server.log"))
            .unwrap()
            .contains("[ERROR]")
    );

    // Manifest and summary.
    let man: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(man["format_version"], 2);
    assert!(man["docker"]["version"].as_str().unwrap().len() > 1);
    assert!(man["images"]["mariadb-10.11"]["id"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    let versions: Vec<&str> = man["deployments"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["version"].as_str())
        .collect();
    assert_eq!(versions.len(), 2);
    assert!(versions.iter().all(|v| v.contains("MariaDB")));
    // The build that measured it: a clone of the repository is a git checkout.
    let commit = man["rmatrix_commit"].as_str().unwrap_or_default();
    assert!(
        commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
        "{man}"
    );
    assert!(man["rmatrix_dirty"].is_boolean(), "{man}");
    let summary = std::fs::read_to_string(out_dir.join("summary.md")).unwrap();
    assert!(summary.contains("| workload | InnoDB / binlog-off | InnoDB / binlog-on | MyISAM / binlog-off | MyISAM / binlog-on |"), "{summary}");
    assert!(summary.contains("## Failed cells"));

    // The password is never written anywhere in the run directory.
    let all = std::fs::read_to_string(out_dir.join("manifest.json")).unwrap()
        + &std::fs::read_to_string(out_dir.join("results.csv")).unwrap();
    assert!(!all.contains("PASSWORD="));

    // Nothing left behind.
    let run_id = man["run_id"].as_str().unwrap();
    assert_eq!(leftover_containers(run_id), "");
}

/// A live run killed (SIGKILL) after its second row: `--resume` keeps the measured rows as
/// they were and runs only the missing iterations; a second resume has nothing to do.
#[test]
fn resume_runs_only_the_missing_iterations() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = write_matrix(
        tmp.path(),
        "engines: [MyISAM]
workloads:
  key: {slap: {load_type: key, primary_key: autoincrement}}
  read: {slap: {load_type: read}}
iterations: 2
length: 1s
",
    );
    let out_dir = tmp.path().join("e2e-resume");
    let _cleanup = crate::common::Cleanup("e2e-resume".into());
    let mut child = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args([
            "run",
            matrix.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
            "--quiet",
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let count = || {
        std::fs::read_to_string(out_dir.join("results.csv"))
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    let started = std::time::Instant::now();
    while count() < 1 + 2 {
        assert!(started.elapsed().as_secs() < 240, "no rows");
        assert!(child.try_wait().unwrap().is_none(), "ended early");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = std::fs::read_to_string(out_dir.join("results.csv")).unwrap();
    let lines: Vec<&str> = killed.lines().collect();
    assert!(lines.len() < 5, "killed too late: {killed}");

    let out = rmatrix(&["run", "--resume", out_dir.to_str().unwrap(), "--quiet"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let resumed = std::fs::read_to_string(out_dir.join("results.csv")).unwrap();
    let rl: Vec<&str> = resumed.lines().collect();
    assert_eq!(rl.len(), 5, "{resumed}");
    assert_eq!(
        rl[..lines.len()],
        lines[..],
        "measured rows are kept as they were"
    );
    let h = header(&out_dir);
    let got: Vec<String> = rows(&out_dir)
        .iter()
        .map(|r| format!("{}#{}", &r[col(&h, "workload")], &r[col(&h, "iteration")]))
        .collect();
    assert_eq!(got, ["key#1", "read#1", "key#2", "read#2"]);
    assert_eq!(leftover_containers("e2e-resume"), "");

    // And again: nothing left to do, nothing started.
    let out = rmatrix(&["run", "--resume", out_dir.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(out_dir.join("results.csv")).unwrap(),
        resumed
    );
}

#[test]
fn bad_input_exits_2_before_any_container_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = write_matrix(
        tmp.path(),
        "engines: [InnoDB]\nworkloads:\n  w: {slap: {load_type: write}}\nlength: 10\nexclude:\n  - {engine: innodb}\n",
    );
    let out = rmatrix(&[
        "run",
        matrix.to_str().unwrap(),
        "--out",
        tmp.path().join("e2e-bad").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("matrix.yaml:8:14: unknown engine `innodb`; valid choices: InnoDB"),
        "{stderr}"
    );
    assert!(
        !tmp.path().join("e2e-bad").exists(),
        "no run directory for a bad matrix"
    );

    // Eight cells, so that a --only that filtered nothing would show.
    let good = write_matrix(
        tmp.path(),
        "configs: {a: {}, b: {mycnf: {max_connections: 77}}}\nengines: [InnoDB, MyISAM]\n\
         workloads:\n  w: {slap: {}}\n  v: {slap: {load_type: key}}\nlength: 10\n",
    );
    let out = rmatrix(&["run", good.to_str().unwrap(), "--only", "engine=Aria"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("unknown engine `Aria`; valid choices: InnoDB, MyISAM"));
    let plan = |only: &[&str]| {
        let mut args = vec!["plan", good.to_str().unwrap()];
        for o in only {
            args.extend(["--only", o]);
        }
        let out = rmatrix(&args);
        assert_eq!(out.status.code(), Some(0));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        // The counts line; the estimate's sources follow it.
        let counts = text.lines().find(|l| l.contains(" deployments, "));
        counts.unwrap_or_default().to_string()
    };
    assert!(
        plan(&[]).starts_with("2 deployments, 8 cells"),
        "{}",
        plan(&[])
    );
    assert!(plan(&["workload=w"]).starts_with("2 deployments, 4 cells"));
    assert!(
        plan(&["workload=w", "engine=MyISAM", "config=b"]).starts_with("1 deployments, 1 cells")
    );
}

#[test]
fn interleaved_restarts_and_adaptive_repeats() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = write_matrix(
        tmp.path(),
        "configs:
  a: {}
  b: {mycnf: {max_connections: 77}}
engines: [MyISAM]
workloads:
  key: {slap: {load_type: key, primary_key: autoincrement}}
iterations: 2
length: 100
repeat: {restart: true, order: interleaved, until_cv: 0.0001, max_iterations: 3, cooldown: 100ms}
",
    );
    let out_dir = tmp.path().join("e2e-interleaved");
    run_ok(&matrix, &out_dir);
    let h = header(&out_dir);
    let order: Vec<String> = rows(&out_dir)
        .iter()
        .map(|r| format!("{}#{}", &r[col(&h, "config")], &r[col(&h, "iteration")]))
        .collect();
    // A B A B, then one adaptive round (the CV target is unreachable) up to max_iterations.
    assert_eq!(order, ["a#1", "b#1", "a#2", "b#2", "a#3", "b#3"]);
    let man: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(man["schedule"]["order"], "interleaved");
    assert_eq!(man["schedule"]["restart"], true);
    for d in man["deployments"].as_array().unwrap() {
        assert_eq!(d["starts"], 3, "a fresh server per iteration: {d}");
    }
    assert_eq!(
        variables(&out_dir, "mariadb-10.11__b")["max_connections"],
        "77"
    );
    assert_eq!(leftover_containers(man["run_id"].as_str().unwrap()), "");
}

/// A server someone else runs: rmatrix starts nothing, reads its variables back, and refuses
/// configs that would change it.
#[test]
fn external_server_is_measured_but_never_changed() {
    let build = Command::new("docker")
        .args([
            "build",
            "-q",
            "--build-arg",
            "suite=bookworm",
            containers_dir().join("mariadb").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let image = String::from_utf8_lossy(&build.stdout).trim().to_string();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let label = format!("rmatrix.run=external-test-{}", std::process::id());
    let started = Command::new("docker")
        .args([
            "run",
            "-d",
            "--network",
            "host",
            "--label",
            &label,
            "-e",
            "MARIADB_ROOT_PASSWORD=ext-secret",
            &image,
        ])
        .args([format!("--port={port}"), "--bind-address=127.0.0.1".into()])
        .output()
        .unwrap();
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    let id = String::from_utf8_lossy(&started.stdout).trim().to_string();
    struct Remove(String);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = Command::new("docker").args(["rm", "-f", &self.0]).output();
        }
    }
    let _guard = Remove(id);

    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("ext.yaml");
    let body = format!(
        "servers:\n  theirs: {{external: {{port: {port}, user: root, password_env: EXT_TEST_PW}}}}\n\
         engines: [InnoDB]\nworkloads:\n  w: {{slap: {{load_type: write}}}}\nlength: 100\nstart_timeout: 60s\n"
    );
    std::fs::write(&path, &body).unwrap();
    let refused = format!("{body}configs:\n  tuned: {{mycnf: {{sync_binlog: 1}}}}\n");
    std::fs::write(tmp.path().join("refused.yaml"), refused).unwrap();
    let out = rmatrix(&["plan", tmp.path().join("refused.yaml").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("would change the external server `theirs`")
    );

    // The server may still be initialising: retry until it answers (up to a minute).
    let out_dir = tmp.path().join("e2e-external");
    let mut last = String::new();
    for attempt in 0..30 {
        let dir = out_dir.with_extension(attempt.to_string());
        let out = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
            .args([
                "run",
                path.to_str().unwrap(),
                "--out",
                dir.to_str().unwrap(),
                "--quiet",
            ])
            .env("EXT_TEST_PW", "ext-secret")
            .output()
            .unwrap();
        if out.status.code() == Some(0) {
            let vars = variables(&dir, "theirs__default");
            assert_eq!(vars["port"], port.to_string());
            let man = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
            assert!(
                man.contains("\"container\": null"),
                "nothing started: {man}"
            );
            assert!(
                !man.contains("ext-secret")
                    && !std::fs::read_to_string(dir.join("results.csv"))
                        .unwrap()
                        .contains("ext-secret")
            );
            return;
        }
        last = std::fs::read_to_string(dir.join("results.csv")).unwrap_or_default();
        std::thread::sleep(std::time::Duration::from_secs(2));
    }
    panic!("external server never measured: {last}");
}

/// `report` re-renders a stored run with the user's own template, in every format, and leaves
/// the stored run as it was.
#[test]
fn report_rerenders_with_a_user_template() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compare/base");
    for f in ["manifest.json", "matrix.yaml", "results.csv"] {
        std::fs::copy(fixture.join(f), run.join(f)).unwrap();
    }
    let template = tmp.path().join("mine.j2");
    std::fs::write(&template, "{{ metric.name }} in {{ metric.unit }}: {{ rows | length }} rows\n{% for s in sections %}{{ s.values.header | join(\",\") }}\n{% endfor %}").unwrap();
    let out = rmatrix(&[
        "report",
        run.to_str().unwrap(),
        "--template",
        template.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let rows = std::fs::read_to_string(run.join("results.csv"))
        .unwrap()
        .lines()
        .count()
        - 1;
    assert!(
        text.starts_with(&format!("qps in queries/s: {rows} rows\n")),
        "{text}"
    );
    assert!(
        !run.join("summary.md").exists(),
        "report prints; it does not write into the run"
    );

    // The rows as stored, written with LF line ends (the fixture's are CRLF).
    let csv = rmatrix(&["report", run.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(
        String::from_utf8_lossy(&csv.stdout),
        std::fs::read_to_string(run.join("results.csv"))
            .unwrap()
            .replace("\r\n", "\n")
    );
    let json = rmatrix(&["report", run.to_str().unwrap(), "--format", "json"]);
    let parsed: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(parsed.as_array().unwrap().len(), rows);

    let bad = rmatrix(&["report", tmp.path().to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2), "bad input");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not an rmatrix run directory"));
}

/// An I/O fault after the server started (the run directory replaced by a file, so every
/// further write fails): rmatrix stops with an error, and no container of the run is left.
#[test]
fn a_write_error_after_start_leaves_no_container() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_matrix(
        tmp.path(),
        "engines: [InnoDB]\nworkloads:\n  w: {slap: {load_type: key}}\nconcurrency: [1]\niterations: 2\nlength: 20s\n",
    );
    let out_dir = tmp.path().join("io-fault-run");
    let run_id = "io-fault-run";
    let listed = || {
        let out = Command::new("docker")
            .args([
                "ps",
                "-aq",
                "--filter",
                &format!("label=rmatrix.run={run_id}"),
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .args([
            "run",
            m.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
            "--quiet",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while listed().is_empty() {
        assert!(
            started.elapsed().as_secs() < 240,
            "the server never started"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "rmatrix ended before the server started"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // The server is up: take the run directory away and put a file in its place.
    std::fs::remove_dir_all(&out_dir).unwrap();
    std::fs::write(&out_dir, "not a directory").unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("error"), "{stderr}");
    assert_eq!(listed(), "", "containers left behind; stderr: {stderr}");
}

/// A slap iteration writes its per-second lines: SELECTs as reads, INSERTs as writes, a p99
/// at or above the p95; its warm-up's seconds go to warmup.csv; the run's per-second chart
/// is drawn into charts/ and report.html.
#[test]
fn slap_iterations_write_per_second_samples() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_matrix(
        tmp.path(),
        "engines: [InnoDB]\nworkloads:\n  w: {slap: {load_type: mixed}}\nconcurrency: [2]\nwarmup: 2s\nlength: 2500ms\n",
    );
    let out_dir = tmp.path().join("slap-samples");
    run_ok(&m, &out_dir);
    crate::common::assert_samples_agree(&out_dir, 2);
    for s in crate::common::csv_rows(&out_dir.join("samples.csv")) {
        let (r, w): (f64, f64) = (
            s["reads_ps"].parse().unwrap(),
            s["writes_ps"].parse().unwrap(),
        );
        assert!(r > 0.0 && w > 0.0, "mixed reads and writes: {s:?}");
        let (p95, p99): (f64, f64) = (
            s["lat_p95_ms"].parse().unwrap(),
            s["lat_p99_ms"].parse().unwrap(),
        );
        assert!(p99 >= p95 && p95 > 0.0, "{s:?}");
    }
    let warmup = crate::common::csv_rows(&out_dir.join("warmup.csv"));
    let seconds: Vec<&str> = warmup.iter().map(|s| s["second"].as_str()).collect();
    // A third line needs the warm-up's last statement to end 1 s late: slap's statements are
    // single and short and InnoDB finds a deadlock at once (no lock wait of seconds).
    assert_eq!(seconds, ["1", "2"], "the warm-up's two seconds");
    assert!(warmup
        .iter()
        .all(|s| s["qps"].parse::<f64>().unwrap() > 0.0));
    let charts: Vec<String> = std::fs::read_dir(out_dir.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        charts.iter().any(|c| c.starts_with("seconds-")),
        "{charts:?}"
    );
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), charts.len());
}
