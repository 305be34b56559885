//! scripts/nightly.sh end to end, with the real rmatrix and real MariaDB servers in Docker, in a
//! temporary store: the first run becomes the baseline, a second run of the same matrix is
//! compared and promoted, and a run whose writes became durable (same cell names, binlog with
//! `sync_binlog=1` and the redo log flushed at every commit) exits 4 and leaves the baseline
//! where it was. Run with `--test-threads=1`; containers are removed even when an assertion
//! fails.

use crate::common::Cleanup;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Removes the containers of every run in the store, on drop (also after a panic). A run's
/// id, and the label of its containers, is its directory's name.
struct StoreCleanup(PathBuf);

impl Drop for StoreCleanup {
    fn drop(&mut self) {
        for id in run_ids(&self.0) {
            drop(Cleanup(id));
        }
    }
}

fn run_ids(store: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(store.join("runs"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

/// One write cell. `durable: false` is the fast baseline (no binlog, redo log flushed once a
/// second); `durable: true` keeps every name and pays a binlog fsync and a redo log fsync per
/// commit, 5-8x slower here. A fresh server per iteration, so restart-to-restart noise is in
/// the samples. 7 iterations of 1 s: fsyncs on this shared disk spread by a CV of 50-80%, and when
/// one side's spread dominates Welch's test has about n - 1 degrees of freedom; with 3
/// iterations even -85% was once only "too noisy to tell", with 5 one run reached p = 0.004.
fn matrix(dir: &Path, file: &str, durable: bool) -> PathBuf {
    let mycnf = if durable {
        "{log_bin: mysql-bin, server_id: 1, sync_binlog: 1, innodb_flush_log_at_trx_commit: 1}"
    } else {
        "{sync_binlog: 0, innodb_flush_log_at_trx_commit: 2}"
    };
    // nightly.sh runs in its own folder: the build folder is given by its full path.
    let build = Path::new(env!("CARGO_MANIFEST_DIR")).join("containers/mariadb");
    let build = build.display();
    let text = format!(
        "name: nightly-test
servers:
  mariadb-10.11: {{build: {{dir: {build}, args: {{suite: bookworm}}}}}}
configs:
  writes:
    mycnf: {mycnf}
engines: [InnoDB]
workloads:
  write: {{slap: {{load_type: write, number_int_cols: 2, number_char_cols: 2, primary_key: autoincrement}}}}
concurrency: [2]
iterations: 7
warmup: 500ms
length: 1s
repeat: {{restart: true}}
report: {{metric: qps, rows: [workload], columns: [engine]}}
"
    );
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    path
}

struct Night {
    code: Option<i32>,
    stderr: String,
    summary: String,
}

/// COMPARE_ARGS of the runs with the real rmatrix. Two runs of the same config a minute
/// apart on this shared 2-core machine drifted by up to 32% (once by 26% at p < 0.01, each
/// run's own spread being small), and `--noise-from` has no run-to-run spread to learn from
/// with one good run. A 60% threshold keeps such drift from being called a regression, while
/// durable writes (-85% and more) still are. What compare resolves on a quiet machine is
/// tests/compare_docker.rs's subject.
const SHARED_MACHINE: &str = "--threshold 60%";

/// Run scripts/nightly.sh from `cwd` (not the repository) with the store given relative to
/// it, the given rmatrix binary and COMPARE_ARGS, and no set-up.
fn nightly(cwd: &Path, store: &str, matrix: &Path, rmatrix: &str, compare_args: &str) -> Night {
    nightly_with(cwd, (store, ""), matrix, rmatrix, compare_args)
}

/// As `nightly`, with RESULTS_DB (empty: unset).
fn nightly_with(
    cwd: &Path,
    (store, results_db): (&str, &str),
    matrix: &Path,
    rmatrix: &str,
    compare_args: &str,
) -> Night {
    let summary = cwd.join("summary.md");
    let _ = std::fs::remove_file(&summary);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/nightly.sh");
    let out = Command::new("bash")
        .arg(script)
        .current_dir(cwd)
        .env("STORE", store)
        .env("MATRIX", matrix)
        .env("RMATRIX", rmatrix)
        .env("SETUP", "0")
        // The matrix (in `cwd`) builds from this repository's containers/, by its full path.
        .env(
            "RMATRIX_BUILD_DIRS",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("containers"),
        )
        .env("COMPARE_ARGS", compare_args)
        .env("RESULTS_DB", results_db)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .expect("run scripts/nightly.sh");
    Night {
        code: out.status.code(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
    }
}

/// Where the store's `last-good` link leads, as a run id.
fn last_good(store: &Path) -> String {
    let target = std::fs::read_link(store.join("last-good")).expect("last-good is a symlink");
    assert!(
        store.join("last-good/results.csv").is_file(),
        "last-good -> {} is not a run",
        target.display()
    );
    target.file_name().unwrap().to_string_lossy().into_owned()
}

/// The promoted runs: the entries of `good/`, each a link to a run of the store.
fn good(store: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(store.join("good"))
        .unwrap()
        .flatten()
        .map(|e| {
            assert!(
                e.path().join("results.csv").is_file(),
                "good/{:?} is not a run",
                e.file_name()
            );
            e.file_name().to_string_lossy().into_owned()
        })
        .collect();
    ids.sort();
    ids
}

#[test]
fn baseline_then_promoted_then_regression_kept_out() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let store = cwd.join("store");
    let _cleanup = StoreCleanup(store.clone());
    let fast = matrix(cwd, "fast.yaml", false);
    let durable = matrix(cwd, "durable.yaml", true);
    let rmatrix = env!("CARGO_BIN_EXE_rmatrix");

    // No binary and no set-up: nothing runs, a clear message.
    let n = nightly(cwd, "store", &fast, "/nonexistent/rmatrix", "");
    assert_eq!(n.code, Some(6), "{}", n.stderr);
    assert!(n.stderr.contains("no rmatrix binary"), "{}", n.stderr);
    assert!(run_ids(&store).is_empty());

    // First night: the run becomes the baseline.
    let n = nightly(cwd, "store", &fast, rmatrix, SHARED_MACHINE);
    assert_eq!(n.code, Some(0), "{}\n{}", n.stderr, n.summary);
    assert!(n.summary.contains("First run"), "{}", n.summary);
    let runs = run_ids(&store);
    assert_eq!(runs.len(), 1);
    let first = runs[0].clone();
    assert_eq!(last_good(&store), first);
    assert_eq!(good(&store), runs);

    // Second night, same matrix: compared with the first, no regression, promoted.
    let n = nightly(cwd, "store", &fast, rmatrix, SHARED_MACHINE);
    assert_eq!(n.code, Some(0), "{}\n{}", n.stderr, n.summary);
    assert!(n.summary.contains("## rmatrix compare"), "{}", n.summary);
    assert!(n.summary.contains("0 regressed"), "{}", n.summary);
    eprintln!("{}", n.summary);
    let runs = run_ids(&store);
    assert_eq!(runs.len(), 2, "distinct run ids: {runs:?}");
    let second = runs.iter().find(|r| **r != first).unwrap().clone();
    assert_eq!(last_good(&store), second);
    assert_eq!(good(&store), runs);

    // Third night, durable writes under the same names: a regression, exit 4, not promoted.
    let n = nightly(cwd, "store", &durable, rmatrix, SHARED_MACHINE);
    assert_eq!(n.code, Some(4), "{}\n{}", n.stderr, n.summary);
    let regressed = n
        .summary
        .lines()
        .find(|l| l.contains("InnoDB / write / c2 | qps"))
        .unwrap_or_else(|| panic!("{}", n.summary));
    assert!(regressed.contains("| **regressed**"), "{regressed}");
    eprintln!("{}", n.summary);
    assert!(n.stderr.contains("not promoted"), "{}", n.stderr);
    assert!(n.summary.contains("Confirmation run"), "{}", n.summary);
    assert_eq!(run_ids(&store).len(), 3, "every run is kept");
    assert_eq!(last_good(&store), second, "the baseline is unchanged");
    assert_eq!(good(&store), runs, "the regressed run is not a good one");

    // A run that fails (here a matrix with an empty axis: exit 2) keeps the baseline too.
    let bad = cwd.join("bad.yaml");
    std::fs::write(&bad, "name: bad\nservers: {}\nworkloads: {}\nlength: 1s\n").unwrap();
    let n = nightly(cwd, "store", &bad, rmatrix, "");
    assert_eq!(n.code, Some(2), "{}", n.stderr);
    assert!(n.stderr.contains("the baseline is kept"), "{}", n.stderr);
    assert_eq!(last_good(&store), second);
    assert_eq!(good(&store), runs);
}

/// The script's calls, with a stand-in for rmatrix that records its arguments: `compare` gets
/// `--noise-from $STORE/good $STORE/last-good $RUN` when its help lists the option, and the
/// exit code of compare decides the promotion. (The real binary is exercised above.)
#[test]
fn compare_gets_the_good_runs_as_noise_and_decides_the_promotion() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let log = cwd.join("calls.log");
    let fake = cwd.join("rmatrix");
    std::fs::write(
        &fake,
        format!(
            r#"#!/usr/bin/env bash
echo "$*" >> '{0}'
case "$1 $2" in
    "compare --help") echo "  --noise-from <PATH>...  runs whose spread is the noise"
        echo "  --fail-on-cannot-tell" ;;
    run\ *) mkdir -p "$4" && echo "summary of $4" > "$4/summary.md" && touch "$4/results.csv" ;;
    compare\ *) echo "compared"
        # The confirmation run's compare may answer otherwise (confirm-exit).
        case "$*" in *store/confirm/*) [ -f '{2}' ] && exit "$(cat '{2}')" ;; esac
        exit "$(cat '{1}')" ;;
esac
"#,
            log.display(),
            cwd.join("compare-exit").display(),
            cwd.join("confirm-exit").display()
        ),
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&fake).status().unwrap();
    let fake = fake.to_str().unwrap();
    let store = cwd.join("store");
    let m = cwd.join("m.yaml");
    let calls = || std::fs::read_to_string(&log).unwrap_or_default();
    let set_compare_exit = |code: i32| std::fs::write(cwd.join("compare-exit"), code.to_string());

    let n = nightly(cwd, "store", &m, fake, "");
    assert_eq!(n.code, Some(0), "{}", n.stderr);
    assert!(
        !calls().lines().any(|l| l.starts_with("compare")),
        "nothing to compare yet:\n{}",
        calls()
    );
    let first = last_good(&store);

    set_compare_exit(0).unwrap();
    let n = nightly(cwd, "store", &m, fake, "");
    assert_eq!(n.code, Some(0), "{}", n.stderr);
    let second = last_good(&store);
    assert_ne!(first, second);
    let compare = calls()
        .lines()
        .find(|l| l.starts_with("compare ") && !l.ends_with("--help"))
        .map(str::to_string)
        .unwrap_or_else(|| panic!("{}", calls()));
    assert_eq!(
        compare,
        format!(
            "compare --noise-from store/good --fail-on-cannot-tell store/last-good \
             store/runs/{second}"
        )
    );
    assert!(n
        .summary
        .contains(&format!("summary of store/runs/{second}")));
    assert_eq!(good(&store), vec![first.clone(), second.clone()]);

    // Regressed, environments differ, compare failed: kept out, the exit code passed on.
    for code in [4, 5, 2] {
        set_compare_exit(code).unwrap();
        let n = nightly(cwd, "store", &m, fake, "");
        assert_eq!(n.code, Some(code), "{}", n.stderr);
        assert_eq!(last_good(&store), second);
        assert_eq!(good(&store), vec![first.clone(), second.clone()]);
    }
    assert_eq!(run_ids(&store).len(), 5);
    // Each regression was measured again on its regressed cells only.
    assert!(
        calls().contains("--only-regressed store/runs/"),
        "{}",
        calls()
    );

    // A regression the confirmation run does not repeat: exit 0, but not promoted.
    set_compare_exit(4).unwrap();
    std::fs::write(cwd.join("confirm-exit"), "0").unwrap();
    let n = nightly(cwd, "store", &m, fake, "");
    assert_eq!(n.code, Some(0), "{}", n.stderr);
    assert!(n.stderr.contains("did not hold"), "{}", n.stderr);
    assert_eq!(last_good(&store), second);
    assert_eq!(good(&store), vec![first.clone(), second.clone()]);
    std::fs::remove_file(cwd.join("confirm-exit")).unwrap();
    assert_eq!(run_ids(&store).len(), 6);

    // A compare that cannot tell (exit 8 of --fail-on-cannot-tell): not promoted, 8 passed on.
    set_compare_exit(8).unwrap();
    let n = nightly(cwd, "store", &m, fake, "");
    assert_eq!(n.code, Some(8), "{}", n.stderr);
    assert!(n.stderr.contains("cannot tell"), "{}", n.stderr);
    assert_eq!(last_good(&store), second);
    assert_eq!(good(&store), vec![first.clone(), second.clone()]);

    // COMPARE_ARGS go to compare, after the noise and before the runs.
    set_compare_exit(0).unwrap();
    let n = nightly(
        cwd,
        "store",
        &m,
        fake,
        "--threshold 10% --metric qps,lat_p99_ms",
    );
    assert_eq!(n.code, Some(0), "{}", n.stderr);
    let third = last_good(&store);
    let compare = calls()
        .lines()
        .rev()
        .find(|l| l.starts_with("compare ") && !l.ends_with("--help"))
        .map(str::to_string);
    assert_eq!(
        compare.as_deref(),
        Some(format!("compare --noise-from store/good --fail-on-cannot-tell --threshold 10% --metric qps,lat_p99_ms store/last-good store/runs/{third}").as_str())
    );

    // A store from before good/ existed (last-good an absolute link): its baseline joins good/.
    let old = cwd.join("old-store");
    let base = old.join("runs/20250101-000000");
    std::fs::create_dir_all(&base).unwrap();
    std::fs::write(base.join("results.csv"), "").unwrap();
    std::os::unix::fs::symlink(&base, old.join("last-good")).unwrap();
    set_compare_exit(0).unwrap();
    let n = nightly(cwd, "old-store", &m, fake, "");
    assert_eq!(n.code, Some(0), "{}", n.stderr);
    let new = last_good(&old);
    assert_eq!(good(&old), vec!["20250101-000000".to_string(), new]);

    // With a results store: an empty one is filled from good/ first, the noise and the
    // history are read from it, and the promoted run is stored.
    std::fs::write(&log, "").unwrap();
    let n = nightly_with(cwd, ("store", "runs.db"), &m, fake, "");
    assert_eq!(n.code, Some(0), "{}", n.stderr);
    let fourth = last_good(&store);
    let seen = calls();
    let lines: Vec<&str> = seen.lines().collect();
    let at = |prefix: &str| lines.iter().position(|l| l.starts_with(prefix));
    let fill = at("store import --store runs.db store/good").unwrap_or_else(|| panic!("{seen}"));
    let compare = at("compare --noise-from runs.db --fail-on-cannot-tell store/last-good")
        .unwrap_or_else(|| panic!("{seen}"));
    let history =
        at(&format!("history runs.db store/runs/{fourth}")).unwrap_or_else(|| panic!("{seen}"));
    let stored = at(&format!("store import --store runs.db store/runs/{fourth}"))
        .unwrap_or_else(|| panic!("{seen}"));
    assert!(
        fill < compare && compare < history && history < stored,
        "{seen}"
    );
}

/// The night on the A/B design (REV): with a stand-in rmatrix, `ab` gets the last good
/// revision and tonight's with the judging options of COMPARE_ARGS and AB_ARGS; its exit code
/// decides: 0 promotes the commit ab resolved, 4 bisects (BISECT=1), 8 is never promoted.
#[test]
fn a_night_side_by_side_promotes_only_what_ab_could_tell() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let log = cwd.join("calls.log");
    let fake = cwd.join("rmatrix");
    // `ab ... --out DIR`: writes DIR/ab.md and an ab.json whose B side resolved to the commit
    // in `commit`, exits with `ab-exit`.
    std::fs::write(
        &fake,
        format!(
            r#"#!/usr/bin/env bash
echo "$*" >> '{log}'
if [ "$1" = ab ]; then
    while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
    mkdir -p "$out/runs/batch-1"
    echo "ab of tonight" > "$out/ab.md"
    printf '{{\n  "a": {{\n    "commit": "%s"\n  }},\n  "b": {{\n    "server": "r-b",\n    "commit": "%s"\n  }}\n}}\n' \
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" "$(cat '{dir}/commit')" > "$out/ab.json"
    exit "$(cat '{dir}/ab-exit')"
fi
"#,
            log = log.display(),
            dir = cwd.display()
        ),
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&fake).status().unwrap();
    let night = |ab_exit: i32, commit: &str| {
        std::fs::write(cwd.join("ab-exit"), ab_exit.to_string()).unwrap();
        std::fs::write(cwd.join("commit"), commit).unwrap();
        let out = Command::new("bash")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/nightly.sh"))
            .current_dir(cwd)
            .env("STORE", "store")
            .env("MATRIX", "m.yaml")
            .env("RMATRIX", &fake)
            .env("SETUP", "0")
            .env("REV", "HEAD")
            .env("AB_ARGS", "--rounds 8 --budget 20m --duet")
            .env("COMPARE_ARGS", "--threshold 3% --fdr --metric qps")
            .env("BISECT", "1")
            .env("GITHUB_STEP_SUMMARY", cwd.join("summary.md"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), stderr)
    };
    let last_good = || std::fs::read_to_string(cwd.join("store/last-good-rev")).unwrap();
    let last_call = || {
        let calls = std::fs::read_to_string(&log).unwrap();
        calls.lines().last().unwrap().to_string()
    };
    let (c1, c2, c3) = ("1".repeat(40), "2".repeat(40), "3".repeat(40));

    // The first night is an A/A of REV: its commit is the last good one, whatever it says.
    let (code, stderr) = night(8, &c1);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(last_good().trim(), c1);
    let call = last_call();
    assert!(
        call.starts_with("ab m.yaml --a HEAD --b HEAD --out store/ab/"),
        "{call}"
    );
    assert!(
        call.ends_with(" --threshold 3% --metric qps --rounds 8 --budget 20m --duet"),
        "{call}"
    );
    // A night ab could tell: tonight's commit is promoted.
    let (code, stderr) = night(0, &c2);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(last_call().starts_with(&format!("ab m.yaml --a {c1} --b HEAD ")));
    assert_eq!(last_good().trim(), c2);
    // Cannot tell: exit 8, not promoted.
    let (code, stderr) = night(8, &c3);
    assert_eq!(code, Some(8), "{stderr}");
    assert!(stderr.contains("cannot tell"), "{stderr}");
    assert_eq!(last_good().trim(), c2);
    // A regression: exit 4, not promoted, bisected between the two commits, measured as ab
    // measured (at the same time: --duet).
    let (code, stderr) = night(4, &c3);
    assert_eq!(code, Some(4), "{stderr}");
    assert_eq!(last_good().trim(), c2);
    let call = last_call();
    assert!(
        call.starts_with(&format!(
            "bisect m.yaml --good {c2} --bad {c3} --out store/bisect/"
        )),
        "{call}"
    );
    assert!(
        call.ends_with(" --paired --duet --threshold 3% --metric qps"),
        "{call}"
    );
    let summary = std::fs::read_to_string(cwd.join("summary.md")).unwrap();
    assert!(summary.contains("ab of tonight"), "{summary}");
    // A damaged store is refused, not passed to git.
    std::fs::write(cwd.join("store/last-good-rev"), "--upload-pack=x\n").unwrap();
    let (code, stderr) = night(0, &c3);
    assert_eq!(code, Some(6), "{stderr}");
}

/// The counted gate (COUNTED_MATRIX) on Redis's real source with ~1.8% of extra instructions
/// planted in GET (scripts/redis-source-repo.sh `work:14`): the night of the commit before it
/// is both gates' baseline; the night of the planted commit passes the throughput gate (a 2%
/// change is far inside this machine's noise) and fails the counted one: exit 4, and neither
/// baseline moves. Counted phases of 10,000 operations, as in source.rs's counted test.
#[test]
fn the_counted_gate_keeps_out_what_the_throughput_gate_lets_through() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path();
    let (repo, commits) = crate::common::redis_source_repo(cwd, "work:14");
    let planted = commits.iter().position(|(_, s)| s == "slow GET").unwrap();
    let commits: Vec<String> = commits.into_iter().map(|(hash, _)| hash).collect();
    let server = format!(
        "servers:\n  redis:\n    source: {{git: {}, rev: \"${{rev}}\", recipe: redis, \
         flags: [USE_SYSTEM_JEMALLOC=yes]}}\n\
         configs:\n  plain: {{redis_conf: {{appendonly: \"no\", save: \"\"}}}}\n",
        repo.display()
    );
    let params = "params:\n  rev: {type: string, default: HEAD}\n";
    std::fs::write(
        cwd.join("m.yaml"),
        format!(
            "name: nightly-src\n{params}{server}\
             workloads:\n  get: {{redis: {{test: get, keyspace: 1000}}}}\n\
             concurrency: [1]\niterations: 2\nwarmup: 200ms\nlength: 1s\n"
        ),
    )
    .unwrap();
    std::fs::write(
        cwd.join("counted.yaml"),
        format!(
            "name: nightly-counted\n{params}{server}\
             workloads:\n  get: {{redis: {{test: get, keyspace: 1000}}}}\n  \
             set: {{redis: {{test: set, keyspace: 1000}}}}\n\
             concurrency: [1]\niterations: 3\nwarmup: 200\nlength: 10000\n\
             counted: callgrind\n"
        ),
    )
    .unwrap();
    let night = |rev: &str| {
        let out = Command::new("bash")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/nightly.sh"))
            .current_dir(cwd)
            .env("STORE", "store")
            .env("MATRIX", cwd.join("m.yaml"))
            .env("COUNTED_MATRIX", cwd.join("counted.yaml"))
            .env("RMATRIX", env!("CARGO_BIN_EXE_rmatrix"))
            .env("SETUP", "0")
            .env("SET", format!("rev={rev}"))
            .env("COMPARE_ARGS", SHARED_MACHINE)
            .env("GITHUB_STEP_SUMMARY", cwd.join("summary.md"))
            .output()
            .unwrap();
        let summary = std::fs::read_to_string(cwd.join("summary.md")).unwrap_or_default();
        let _ = std::fs::remove_file(cwd.join("summary.md"));
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), format!("{stderr}\n{summary}"), summary)
    };
    let store = cwd.join("store");
    let _cleanup = StoreCleanup(store.clone());
    let _counted_cleanup = StoreCleanup(store.join("counted"));
    let (code, said, _) = night(&commits[planted - 1]);
    assert_eq!(code, Some(0), "{said}");
    let (base, counted_base) = (last_good(&store), last_good(&store.join("counted")));
    let (code, said, summary) = night(&commits[planted]);
    assert_eq!(code, Some(4), "{said}");
    assert!(said.contains("counted instructions regressed"), "{said}");
    // The throughput gate passed it or could not tell (2 iterations of a second each).
    assert!(!said.contains("nightly: performance regression"), "{said}");
    // Its table: GET's instructions per operation regressed, SET's did not.
    let row = |w: &str| {
        (summary.lines())
            .find(|l| l.starts_with(&format!("| redis / plain / {w} / c1 | srv_instr_per_op")))
            .unwrap_or_else(|| panic!("{summary}"))
            .to_string()
    };
    assert!(row("get").contains("**regressed**"), "{summary}");
    assert!(!row("set").contains("regressed"), "{summary}");
    assert_eq!(last_good(&store), base, "{said}");
    assert_eq!(last_good(&store.join("counted")), counted_base, "{said}");
}
