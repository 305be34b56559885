//! The programs an external-tool workload runs (sysbench, redis-benchmark): chosen by whoever
//! runs rmatrix, through an environment variable, never by the matrix. A matrix is pasted from
//! a blog post; a program it named would run with the user's rights.

use std::ffi::OsString;

use crate::input::yaml::Scalar;
use crate::workloads::Problem;

/// One external program: the variable that chooses it and the name found on `PATH` otherwise.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tool {
    pub(crate) env: &'static str,
    pub(crate) default: &'static str,
}

impl Tool {
    /// The program to start: `$env` when set and not empty, else `default` from `PATH`.
    pub(crate) fn program(&self) -> OsString {
        std::env::var_os(self.env)
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| self.default.into())
    }

    /// What the program says with `--version` (first line), or None when it does not start
    /// or does not answer within 5 s.
    pub(crate) fn version(&self) -> Option<String> {
        version_of(&self.program())
    }

    /// The program as text, for messages.
    pub(crate) fn shown(&self) -> String {
        crate::escape::terminal(&self.program().to_string_lossy())
    }

    /// `refuse_binary` as the schema says it: `binary` read only to be refused.
    pub(crate) fn binary_rule(&self) -> crate::workloads::SchemaRule {
        let description = format!(
            "Refused: the program is the user's choice, through the environment variable {}.",
            self.env
        );
        (
            "binary",
            serde_json::json!({"type": "null", "description": description}),
        )
    }

    /// A matrix that names the program (`binary:`, which older matrices had) is refused, with
    /// how the user chooses it instead.
    pub(crate) fn refuse_binary(&self, binary: &Option<Scalar>) -> Result<(), Problem> {
        match binary {
            None => Ok(()),
            Some(_) => Err(Problem::at_key(
                "binary",
                format!(
                    "a matrix cannot choose the program rmatrix runs: remove `binary`; whoever \
                     runs rmatrix chooses it with the environment variable {} (default: `{}` \
                     from PATH), e.g. `{}=/opt/bin/{} rmatrix run ...`",
                    self.env, self.default, self.env, self.default
                ),
            )),
        }
    }
}

/// What `program --version` says (first line), or None when it does not start or does not
/// answer within 5 s (then it is killed: a check never hangs on it).
pub(crate) fn version_of(program: &std::ffi::OsStr) -> Option<String> {
    use std::io::Read;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let mut child = (Command::new(program).arg("--version"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(5);
    while child.try_wait().ok()?.is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = String::new();
    (child.stdout.take()?.take(4096))
        .read_to_string(&mut out)
        .ok()?;
    out.lines().next().map(str::trim).map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_binary_is_refused_with_the_variable() {
        let t = Tool {
            env: "RMATRIX_TEST_TOOL_UNSET",
            default: "tool",
        };
        assert_eq!(t.program(), OsString::from("tool"));
        assert!(t.refuse_binary(&None).is_ok());
        let p = t
            .refuse_binary(&Some(Scalar::Str("/bin/sh".into())))
            .unwrap_err();
        assert!(p.on_key && p.at == "binary", "{p:?}");
        assert!(
            p.message.contains("RMATRIX_TEST_TOOL_UNSET"),
            "{}",
            p.message
        );
    }
}
