//! `rmatrix bisect` refuses bad arguments before it writes its state or builds anything:
//! each case exits 2 with its reason, leaves no `bisect.json`, and the corrected command is
//! not blocked by what the refused one left. A plain git repository stands in for a source
//! tree (nothing is built: every refusal comes first), and Docker is pointed nowhere.

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

/// A repository of three commits (tags `one`, `two`, `three`) and a matrix building it.
fn setup(tmp: &Path) -> std::path::PathBuf {
    let repo = tmp.join("src");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    for tag in ["one", "two", "three"] {
        std::fs::write(repo.join("f"), tag).unwrap();
        git(&repo, &["add", "f"]);
        git(&repo, &["commit", "-qm", tag]);
        git(&repo, &["tag", tag]);
    }
    let matrix = tmp.join("m.yaml");
    std::fs::write(
        &matrix,
        "servers:\n  r: {source: {git: src, rev: three, recipe: redis}}\n\
         workloads:\n  get: {redis: {test: get}}\nlength: 1s\n",
    )
    .unwrap();
    matrix
}

/// `rmatrix COMMAND MATRIX --out OUT EXTRA...` with Docker pointed nowhere: its exit code and
/// stderr, which must hold no panic.
fn command(command: &str, matrix: &Path, out: &Path, extra: &[&str]) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .arg(command)
        .arg(matrix)
        .arg("--out")
        .arg(out)
        .args(extra)
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (o.status.code().unwrap(), stderr)
}

fn bisect(matrix: &Path, out: &Path, extra: &[&str]) -> (i32, String) {
    command("bisect", matrix, out, extra)
}

#[test]
fn bad_bisect_arguments_are_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = setup(tmp.path());
    let out = tmp.path().join("b");
    let cases: [(&[&str], &str); 7] = [
        (&["--good", "two", "--bad", "two"], "are the same commit"),
        (&["--good", "HEAD~1", "--bad", "two"], "are the same commit"),
        (&["--good", "three", "--bad", "one"], "not an ancestor"),
        (
            &["--good", "nope", "--bad", "three"],
            "--good: no commit `nope`",
        ),
        (
            &["--good", "one", "--bad=--upload-pack=x"],
            "--bad: revision",
        ),
        (
            &["--good", "one", "--bad", "three", "--threshold", "lots"],
            "threshold",
        ),
        (
            &["--good", "one", "--bad", "three", "--metric", "speed"],
            "speed",
        ),
    ];
    for (args, says) in cases {
        let (code, stderr) = bisect(&matrix, &out, args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!out.join("bisect.json").exists(), "{args:?} left its state");
    }
    for (args, says) in [
        (&["--paired", "--rounds", "1"][..], "--paired: --rounds 1"),
        (&["--paired", "--max-rounds", "3"][..], "--max-rounds 3"),
        (&["--paired", "--only", "workload=nope"][..], "nope"),
        (
            &["--paired", "--scan-up-to", "65"][..],
            "--paired: --scan-up-to 65: at most 64",
        ),
        (
            &["--scan-up-to", "4"][..],
            "--scan-up-to: only with --paired",
        ),
    ] {
        let all = [&["--good", "one", "--bad", "three"][..], args].concat();
        let (code, stderr) = bisect(&matrix, &out, &all);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
    for (flag, value) in [
        ("--confidence", "150%"),
        ("--assume-run-noise", "-3%"),
        ("--noise-from", "/nonexistent/runs"),
    ] {
        let args = ["--good", "one", "--bad", "three", flag, value];
        let (code, stderr) = bisect(&matrix, &out, &args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(!out.join("bisect.json").exists(), "{args:?} left its state");
    }
    // The corrected command gets past every check: it starts (and, with no engine, stops
    // at the first build), its state written where the refused ones wrote none.
    let (code, stderr) = bisect(&matrix, &out, &["--good", "one", "--bad", "three"]);
    assert!(out.join("bisect.json").exists(), "{code}: {stderr}");
    assert!(stderr.contains("2 commits after"), "{stderr}");
}

/// A `source:` matrix kept and planned outside the clone finds the recipes above the binary.
#[test]
fn a_source_matrix_plans_from_any_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = setup(tmp.path());
    let o = Command::new(env!("CARGO_BIN_EXE_rmatrix"))
        .arg("plan")
        .arg(&matrix)
        .current_dir(tmp.path())
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("r"), "{stderr}");
}

fn ab(matrix: &Path, out: &Path, extra: &[&str]) -> (i32, String) {
    command("ab", matrix, out, extra)
}

/// `rmatrix ab` refuses bad arguments before it builds or writes anything.
#[test]
fn bad_ab_arguments_are_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = setup(tmp.path());
    let out = tmp.path().join("ab");
    let cases: [(&[&str], &str); 12] = [
        (&["--a", "nope", "--b", "three"], "--a: no commit `nope`"),
        (&["--a", "one", "--b=--upload-pack=x"], "--b: revision"),
        (
            &["--a", "one", "--b", "three", "--rounds", "1"],
            "--rounds 1",
        ),
        (
            &["--a", "one", "--b", "three", "--max-rounds", "3"],
            "--max-rounds 3",
        ),
        (
            &["--a", "one", "--b", "three", "--budget", "soon"],
            "--budget soon",
        ),
        (
            &["--a", "one", "--b", "three", "--threshold", "lots"],
            "threshold",
        ),
        (
            &["--a", "one", "--b", "three", "--metric", "speed"],
            "speed",
        ),
        (
            &["--a", "one", "--b", "three", "--confidence", "150%"],
            "150%",
        ),
        (
            &["--a", "one", "--b", "three", "--server", "nope"],
            "`nope` is not a server of the matrix; those are: r",
        ),
        (
            &["--a", "one", "--b", "three", "--only", "workload=nope"],
            "nope",
        ),
        (
            &["--a", "one", "--b", "three", "--control", "workload=nope"],
            "--control: unknown workload `nope`",
        ),
        (
            &["--a", "one", "--b", "three", "--control", "server=r"],
            "without its server",
        ),
    ];
    for (args, says) in cases {
        let (code, stderr) = ab(&matrix, &out, args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
    // The corrected command gets past every check and stops at the engine (exit 3),
    // leaving nothing that would block its retry.
    let (code, stderr) = ab(&matrix, &out, &["--a", "one", "--b", "three"]);
    assert_eq!(code, 3, "{stderr}");
    assert!(stderr.contains("ab: three against one"), "{stderr}");
    assert!(!out.exists(), "{stderr}");
    // An A/B writes a new folder: one there already is refused, not mixed with a new run.
    std::fs::create_dir(&out).unwrap();
    let (code, stderr) = ab(&matrix, &out, &["--a", "one", "--b", "three"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("exists already"), "{stderr}");
}
