//! The system's Python 3 with Debian's packages, which scripts/setup.sh installs: the real
//! readers some tests hand rmatrix's outputs to (tests/ref/*.py). `/usr/bin/python3`, not the
//! first `python3` on PATH: a pyenv's or a venv's interpreter does not see Debian's packages.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

pub const PYTHON: &str = "/usr/bin/python3";

/// What tests/ref/`script` printed with `args` (and `env`), once it exited 0. A missing
/// interpreter or reader fails the test with what to run, never passes it.
pub fn reference<I, S>(script: &str, args: I, env: &[(&str, &OsStr)]) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/ref")
        .join(script);
    let out = Command::new(PYTHON)
        .arg(&path)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("{PYTHON}: {e}: run scripts/setup.sh"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "tests/ref/{script} failed ({}):\n{stderr}",
        out.status
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}
