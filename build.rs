//! The commit rmatrix is built from, and whether its tree had changes, for manifest.json:
//! a run says which rmatrix measured it. Built outside a git checkout (a source tarball),
//! both are empty and the manifest says `unknown`.

use std::process::Command;

fn main() {
    let git = |args: &[&str]| -> Option<String> {
        // No optional locks: `git status` would otherwise refresh and rewrite the index,
        // which is one of the files below, so the next build would run this again and
        // compile the whole crate a second time.
        let out = Command::new("git")
            .arg("--no-optional-locks")
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_default();
    // Tracked files only: a scratch file beside the tree does not make the build dirty.
    let dirty = match commit.is_empty() {
        true => String::new(),
        false => git(&["status", "--porcelain", "--untracked-files=no"])
            .map(|s| (!s.is_empty()).to_string())
            .unwrap_or_default(),
    };
    println!("cargo:rustc-env=RMATRIX_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=RMATRIX_GIT_DIRTY={dirty}");
    // Again after a commit or checkout (HEAD, its branch, the index) and after any edit of
    // the sources. `--git-path` finds them in a worktree too.
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    for f in ["HEAD", "index"].into_iter().chain(branch.as_deref()) {
        if let Some(path) = git(&["rev-parse", "--git-path", f]) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    for p in ["src", "Cargo.toml", "Cargo.lock", "build.rs"] {
        println!("cargo:rerun-if-changed={p}");
    }
}
