//! The git side of a source build: which work tree a matrix names (a local one, where it
//! was pointed), which commit a revision is, the tree of a commit as a tar, and the commits
//! between two revisions. git runs as a program with arguments, never through a shell, with
//! the user's and the system's git config left out, every setting of the repository's own
//! config that could start a program overridden, and every call bounded in time.

use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};

/// Longest a git question may take (rev-parse, describe, rev-list).
const ASK_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest `git archive` of one tree may take.
const ARCHIVE_TIMEOUT: Duration = Duration::from_secs(600);
/// Largest tree accepted as a tar (MariaDB's source is about 400 MB).
const MAX_ARCHIVE_BYTES: usize = 4 << 30;

/// One commit as the manifest records it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Commit {
    /// The full commit hash.
    pub(crate) commit: String,
    /// The hash of its tree: two commits with one tree build one image.
    pub(crate) tree: String,
    /// `git describe --tags --always`: the nearest tag and the distance from it.
    pub(crate) describe: String,
    /// The first line of its message.
    pub(crate) subject: String,
}

/// The work tree `written` names (relative to `base`, the matrix's folder), refused when it
/// is a URL, holds `..`, passes through a symbolic link, or is not the top of a git work
/// tree (a folder inside one would let git read what lies above it).
pub(crate) fn work_tree(base: &Path, written: &str) -> Result<PathBuf, String> {
    let shown = crate::input::untrusted::printable(written);
    if written.is_empty() || written.starts_with('-') {
        return Err(format!("`{shown}` is no path of a git work tree"));
    }
    if written.contains("://") || scp_like(written) {
        return Err(format!(
            "`{shown}` is a URL: rmatrix builds from a git work tree on this host; clone it \
             first (`git clone URL DIR`) and name DIR"
        ));
    }
    let path = Path::new(written);
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(format!(
            "`{shown}` climbs out of where it points with `..`: name the work tree by a path \
             without `..`"
        ));
    }
    let full = base.join(path);
    let full = std::path::absolute(&full).unwrap_or(full);
    let real = full.canonicalize().map_err(|e| format!("`{shown}`: {e}"))?;
    if real != full {
        return Err(format!(
            "`{shown}` passes through a symbolic link (it leads to {}): name the work tree by \
             its own path",
            crate::input::untrusted::printable(&real.display().to_string())
        ));
    }
    let top = git(&real, &["rev-parse", "--show-toplevel"], ASK_TIMEOUT)
        .map_err(|e| format!("`{shown}` is not a git work tree: {e}"))?;
    let top = PathBuf::from(String::from_utf8_lossy(&top).trim());
    if top.canonicalize().ok().as_ref() != Some(&real) {
        return Err(format!(
            "`{shown}` is inside the git work tree {}, not its top: name the top",
            crate::input::untrusted::printable(&top.display().to_string())
        ));
    }
    Ok(real)
}

/// `host:path`, git's scp-like URL: a colon before the first slash.
fn scp_like(written: &str) -> bool {
    let head = written.split('/').next().unwrap_or("");
    head.contains(':')
}

/// Whether `rev` may be handed to git as a revision: a name or hash with `~`, `^`, `@{}`,
/// never an option (`--upload-pack=x`), a range (`a..b`) or a path (`rev:file`).
pub(crate) fn check_rev(rev: &str) -> Result<(), String> {
    let shown = crate::input::untrusted::printable(rev);
    let chars_ok = rev
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._/~^@{}+-".contains(c));
    if rev.is_empty() || rev.len() > 256 || !chars_ok {
        return Err(format!(
            "revision `{shown}` may hold letters, digits and `._/~^@{{}}+-` only (a hash, a \
             tag, a branch, `HEAD~3`)"
        ));
    }
    if rev.starts_with('-') {
        return Err(format!(
            "revision `{shown}` starts with `-`: git would read it as an option"
        ));
    }
    if rev.contains("..") {
        return Err(format!("revision `{shown}` is a range: name one commit"));
    }
    Ok(())
}

/// The commit `rev` names in `repo`.
pub(crate) fn resolve(repo: &Path, rev: &str) -> Result<Commit> {
    check_rev(rev).map_err(|e| anyhow!(e))?;
    let at = format!("{rev}^{{commit}}");
    let commit = ask(
        repo,
        &["rev-parse", "--verify", "--quiet", "--end-of-options", &at],
    )
    .map_err(|_| anyhow!("no commit `{rev}` in {}", repo.display()))?;
    let tree = ask(
        repo,
        &["rev-parse", "--verify", &format!("{commit}^{{tree}}")],
    )?;
    let describe = ask(repo, &["describe", "--tags", "--always", &commit])?;
    let subject = ask(
        repo,
        &["log", "-1", "--no-show-signature", "--format=%s", &commit],
    )?;
    Ok(Commit {
        commit,
        tree,
        describe,
        subject: crate::input::untrusted::printable(&subject),
    })
}

/// The commits after `good` up to and including `bad`, oldest first: those that descend
/// from `good` and lead to `bad` (`--first-parent`: along `bad`'s first parents only).
pub(crate) fn between(
    repo: &Path,
    good: &str,
    bad: &str,
    first_parent: bool,
) -> Result<Vec<String>> {
    let range = format!("{good}..{bad}");
    let mut args = vec!["rev-list", "--reverse", "--ancestry-path"];
    if first_parent {
        args.push("--first-parent");
    }
    args.extend(["--end-of-options", &range]);
    let out = ask(repo, &args)?;
    Ok(out.lines().map(String::from).collect())
}

/// Whether `ancestor` is an ancestor of (or is) `of`.
pub(crate) fn is_ancestor(repo: &Path, ancestor: &str, of: &str) -> bool {
    git(
        repo,
        &[
            "merge-base",
            "--is-ancestor",
            "--end-of-options",
            ancestor,
            of,
        ],
        ASK_TIMEOUT,
    )
    .is_ok()
}

/// The tree of `commit` as a tar, its files under `src/`.
pub(crate) fn archive(repo: &Path, commit: &str) -> Result<Vec<u8>> {
    git(
        repo,
        &[
            "archive",
            "--format=tar",
            "--prefix=src/",
            "--end-of-options",
            commit,
        ],
        ARCHIVE_TIMEOUT,
    )
}

/// One line of git's answer, trimmed.
fn ask(repo: &Path, args: &[&str]) -> Result<String> {
    let out = git(repo, args, ASK_TIMEOUT)?;
    Ok(String::from_utf8_lossy(&out).trim().to_string())
}

/// Settings of a repository's own config that name a program git would run for the
/// commands used here, each overridden with a harmless value. Filter drivers are named by
/// the repository itself, so those are found per repository (`filter_overrides`).
const NEUTRAL: [(&str, &str); 12] = [
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.sshCommand", "false"),
    ("core.askPass", "false"),
    ("core.editor", "false"),
    ("diff.external", ""),
    ("log.showSignature", "false"),
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("protocol.allow", "never"),
];

/// Run git in `repo` with `args`; its standard output, or its message when it fails.
fn git(repo: &Path, args: &[&str], timeout: Duration) -> Result<Vec<u8>> {
    let mut overrides: Vec<(String, String)> = NEUTRAL
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    overrides.extend(filter_overrides(repo)?);
    run(repo, args, &overrides, timeout)
}

/// Every filter driver the repository's config defines, emptied: `git archive` would run
/// a driver's `smudge` or `process` program for each file its attributes send through it.
/// An empty command is no filter; `required` off keeps git from refusing the file.
fn filter_overrides(repo: &Path) -> Result<Vec<(String, String)>> {
    let args = [
        "config",
        "--null",
        "--name-only",
        "--get-regexp",
        r"^filter\.",
    ];
    let out = match run(repo, &args, &[], ASK_TIMEOUT) {
        Ok(out) => out,
        // `git config --get-regexp` fails (exit 1) when nothing matches.
        Err(_) => return Ok(Vec::new()),
    };
    let mut overrides = Vec::new();
    for key in out.split(|&b| b == 0).filter(|k| !k.is_empty()) {
        let key = String::from_utf8_lossy(key);
        let Some((driver, _)) = key.rsplit_once('.') else {
            continue;
        };
        for (setting, value) in [
            ("smudge", ""),
            ("clean", ""),
            ("process", ""),
            ("required", "false"),
        ] {
            let pair = (format!("{driver}.{setting}"), value.to_string());
            if !overrides.contains(&pair) {
                overrides.push(pair);
            }
        }
    }
    Ok(overrides)
}

/// Run git with `overrides` given as config through the environment (`GIT_CONFIG_COUNT`:
/// a key may hold any character, where `-c key=value` would split at its first `=`).
fn run(
    repo: &Path,
    args: &[&str],
    overrides: &[(String, String)],
    timeout: Duration,
) -> Result<Vec<u8>> {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_ATTR_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_PAGER", "cat")
        .env("GIT_CONFIG_COUNT", overrides.len().to_string())
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_EXTERNAL_DIFF")
        .env_remove("GIT_SSH")
        .env_remove("GIT_SSH_COMMAND")
        .env_remove("GIT_ASKPASS");
    for (i, (key, value)) in overrides.iter().enumerate() {
        command.env(format!("GIT_CONFIG_KEY_{i}"), key);
        command.env(format!("GIT_CONFIG_VALUE_{i}"), value);
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| anyhow!("failed to run git: {e}"))?;
    let mut stdout = child.stdout.take().expect("invariant: piped");
    let mut stderr = child.stderr.take().expect("invariant: piped");
    let out = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let r = (&mut stdout)
            .take(MAX_ARCHIVE_BYTES as u64 + 1)
            .read_to_end(&mut buf);
        r.map(|_| buf)
    });
    let err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut stderr).take(64 * 1024).read_to_end(&mut buf);
        buf
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "git {} did not finish within {} s",
                args[0],
                timeout.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let out = out
        .join()
        .map_err(|_| anyhow!("git output reader failed"))??;
    let err = err.join().unwrap_or_default();
    if !status.success() {
        let msg = String::from_utf8_lossy(&err);
        bail!(
            "git {} failed: {}",
            args[0],
            crate::escape::terminal(msg.trim())
        );
    }
    if out.len() > MAX_ARCHIVE_BYTES {
        bail!("git {} wrote more than {MAX_ARCHIVE_BYTES} bytes", args[0]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, args: &[&str]) {
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

    fn repo() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        sh(tmp.path(), &["init", "-q", "-b", "main"]);
        for i in 0..3 {
            std::fs::write(tmp.path().join("f"), format!("{i}\n")).unwrap();
            sh(tmp.path(), &["add", "f"]);
            sh(tmp.path(), &["commit", "-qm", &format!("change {i}")]);
        }
        sh(tmp.path(), &["tag", "v1", "HEAD~2"]);
        tmp
    }

    /// A repository whose own config names a program for every hook-like setting, a
    /// commit with a signature for `log.showSignature` to check and attributes that send
    /// every file through a filter driver: asking about it and archiving it run none.
    #[test]
    fn a_repositorys_own_config_runs_no_program() {
        let r = repo();
        let marks = tempfile::tempdir().unwrap();
        let program = |name: &str| {
            let path = marks.path().join(format!("{name}.sh"));
            let mark = marks.path().join(format!("{name}.ran"));
            std::fs::write(
                &path,
                format!("#!/bin/sh\ntouch '{}'\ncat\n", mark.display()),
            )
            .unwrap();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
            path.display().to_string()
        };
        let hooks = r.path().join(".git/hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        std::fs::write(
            hooks.join("post-checkout"),
            "#!/bin/sh\ntouch /nonexistent\n",
        )
        .unwrap();
        std::fs::write(
            r.path().join(".gitattributes"),
            "* filter=evil\nf filter=odd=name\n",
        )
        .unwrap();
        sh(r.path(), &["add", ".gitattributes"]);
        sh(r.path(), &["commit", "-qm", "attributes"]);
        // A commit carrying a signature: `log.showSignature` would hand it to gpg.program.
        let head = ask(r.path(), &["cat-file", "commit", "HEAD"]).unwrap();
        let (header, message) = head.split_once("\n\n").unwrap();
        let signed = format!(
            "{header}\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n -----END PGP SIGNATURE-----\n\n{message}\n"
        );
        let object = marks.path().join("signed");
        std::fs::write(&object, signed).unwrap();
        let id = ask(
            r.path(),
            &[
                "hash-object",
                "-t",
                "commit",
                "-w",
                object.to_str().unwrap(),
            ],
        )
        .unwrap();
        sh(r.path(), &["update-ref", "refs/heads/main", &id]);
        // The traps are set last: the set-up above runs plain git.
        for (key, name) in [
            ("log.showSignature", ""),
            ("gpg.program", "gpg"),
            ("gpg.ssh.program", "gpgssh"),
            ("core.fsmonitor", "fsmonitor"),
            ("core.pager", "pager"),
            ("pager.log", "pagerlog"),
            ("diff.external", "diff"),
            ("core.sshCommand", "ssh"),
            ("filter.evil.smudge", "smudge"),
            ("filter.evil.clean", "clean"),
            ("filter.odd=name.smudge", "odd"),
            ("filter.evil.required", ""),
        ] {
            let value = if name.is_empty() {
                "true".to_string()
            } else {
                program(name)
            };
            sh(r.path(), &["config", key, &value]);
        }
        let commit = resolve(r.path(), "HEAD").unwrap();
        assert_eq!(commit.commit, id);
        assert_eq!(commit.subject, "attributes");
        let tar = archive(r.path(), &commit.commit).unwrap();
        assert!(!tar.is_empty());
        between(r.path(), "v1", "HEAD", false).unwrap();
        let ran: Vec<_> = std::fs::read_dir(marks.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".ran"))
            .collect();
        assert!(ran.is_empty(), "programs ran: {ran:?}");
        // The same repository through plain git does run them: the test sets a real trap.
        let plain = Command::new("git")
            .arg("-C")
            .arg(r.path())
            .args(["log", "-1", "--format=%s"])
            .output()
            .unwrap();
        assert!(plain.status.success());
        assert!(marks.path().join("gpg.ran").exists(), "the trap is not set");
    }

    #[test]
    fn revisions_that_are_options_ranges_or_paths_are_refused() {
        for bad in [
            "--upload-pack=x",
            "-c",
            "a..b",
            "HEAD:file",
            "a b",
            "x\ny",
            "",
            "$(id)",
        ] {
            assert!(check_rev(bad).is_err(), "{bad:?}");
        }
        for ok in [
            "HEAD",
            "HEAD~3",
            "v1.2.3",
            "origin/main",
            "abc123",
            "main@{1}",
            "HEAD^2",
        ] {
            assert!(check_rev(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn a_work_tree_is_named_by_its_own_top() {
        let r = repo();
        let base = r.path().parent().unwrap();
        let name = r.path().file_name().unwrap().to_str().unwrap();
        assert_eq!(
            work_tree(base, name).unwrap(),
            r.path().canonicalize().unwrap()
        );
        std::fs::create_dir(r.path().join("sub")).unwrap();
        let e = work_tree(r.path(), "sub").unwrap_err();
        assert!(e.contains("not its top"), "{e}");
        let e = work_tree(r.path(), "../x").unwrap_err();
        assert!(e.contains("`..`"), "{e}");
        let link = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(r.path(), link.path().join("l")).unwrap();
        let e = work_tree(link.path(), "l").unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
        let plain = tempfile::tempdir().unwrap();
        let e = work_tree(plain.path(), ".").unwrap_err();
        assert!(e.contains("not a git work tree"), "{e}");
        for url in [
            "https://example.invalid/r.git",
            "host:repo",
            "ext::sh -c id",
        ] {
            assert!(work_tree(base, url).unwrap_err().contains("URL"), "{url}");
        }
    }

    #[test]
    fn commits_resolve_and_list_oldest_first() {
        let r = repo();
        let head = resolve(r.path(), "HEAD").unwrap();
        assert_eq!(head.commit.len(), 40);
        assert_eq!(head.subject, "change 2");
        assert!(head.describe.starts_with("v1-2-g"), "{}", head.describe);
        let first = resolve(r.path(), "v1").unwrap();
        let list = between(r.path(), &first.commit, &head.commit, false).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[1], head.commit);
        assert!(is_ancestor(r.path(), &first.commit, &head.commit));
        assert!(!is_ancestor(r.path(), &head.commit, &first.commit));
        assert!(resolve(r.path(), "nope")
            .unwrap_err()
            .to_string()
            .contains("no commit"));
        let tar = archive(r.path(), &head.commit).unwrap();
        let mut a = tar::Archive::new(tar.as_slice());
        let names: Vec<String> = a
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        assert!(names.contains(&"src/f".to_string()), "{names:?}");
    }
}
