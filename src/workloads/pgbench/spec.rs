//! `pgbench: {...}`: pgbench itself against the cell's server: a built-in script or the
//! matrix's own script text, its query protocol, the scale its tables are initialised at.

use serde::{Deserialize, Serialize};

use crate::input::yaml::Scalar;
use crate::workloads::arrival::{Shape, Spacing};
use crate::workloads::tools::Tool;
use crate::workloads::{Facts, Problem};

/// pgbench's built-in scripts (`-b`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
pub(crate) enum Builtin {
    #[serde(rename = "tpcb-like")]
    TpcbLike,
    #[serde(rename = "simple-update")]
    SimpleUpdate,
    #[serde(rename = "select-only")]
    SelectOnly,
}

impl Builtin {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Builtin::TpcbLike => "tpcb-like",
            Builtin::SimpleUpdate => "simple-update",
            Builtin::SelectOnly => "select-only",
        }
    }
}

/// How pgbench sends its statements (`-M`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Protocol {
    #[default]
    Simple,
    Extended,
    Prepared,
}

impl Protocol {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Protocol::Simple => "simple",
            Protocol::Extended => "extended",
            Protocol::Prepared => "prepared",
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PgbenchSpec {
    /// A built-in script (`tpcb-like` when neither this nor `script` is given).
    #[serde(default)]
    pub(crate) builtin: Option<Builtin>,
    /// A script's text (pgbench's `-f`), written to a file of rmatrix's own.
    #[serde(default)]
    pub(crate) script: Option<String>,
    /// The scale the tables are initialised at (`pgbench -i -s`): 100,000 accounts each.
    #[serde(default = "d_scale")]
    pub(crate) scale: u32,
    #[serde(default)]
    pub(crate) protocol: Protocol,
    /// pgbench's worker threads (`-j`); pgbench's own default, 1, when not given.
    #[serde(default)]
    pub(crate) jobs: Option<u32>,
    /// Open loop: transactions later than this (ms) count as late, and those already
    /// late when their time comes are skipped (`--latency-limit`).
    #[serde(default)]
    pub(crate) latency_limit_ms: Option<f64>,
    #[serde(default = "d_db")]
    pub(crate) db: String,
    /// Read only to be refused: the program is the user's choice (`PGBENCH`).
    #[serde(default, skip_serializing)]
    pub(crate) binary: Option<Scalar>,
}

fn d_scale() -> u32 {
    1
}
fn d_db() -> String {
    "pgbench".into()
}

/// The pgbench program: `RMATRIX_PGBENCH`, else `pgbench` from PATH.
pub(crate) const PGBENCH: Tool = Tool {
    env: "RMATRIX_PGBENCH",
    default: "pgbench",
};

/// What `scale` may be.
const SCALE: std::ops::RangeInclusive<u32> = 1..=10_000;

/// `check` as the schema says it: what single options may be, `builtin` or `script` (not
/// both), and `binary` refused. (`jobs` is bounded by the cells' fewest clients too.)
pub(crate) fn schema_rules() -> Vec<crate::workloads::SchemaRule> {
    use serde_json::json;
    let given = json!({"not": {"type": "null"}});
    let both = json!({"required": ["builtin", "script"], "properties": {"builtin": given, "script": given}});
    vec![
        ("", json!({"not": both})),
        (
            "scale",
            json!({"minimum": SCALE.start(), "maximum": SCALE.end()}),
        ),
        ("jobs", json!({"minimum": 1})),
        ("latency_limit_ms", json!({"exclusiveMinimum": 0})),
        ("db", crate::input::patterns::sql_identifier()),
        PGBENCH.binary_rule(),
    ]
}

/// Meta-commands of a script that run a shell command on the client's host.
const SHELL_COMMANDS: [&str; 2] = ["shell", "setshell"];
const MAX_SCRIPT_BYTES: usize = 64 * 1024;

impl PgbenchSpec {
    pub(crate) fn builtin(&self) -> Builtin {
        self.builtin.unwrap_or(Builtin::TpcbLike)
    }

    pub(crate) fn check(&self, facts: &Facts) -> Result<(), Problem> {
        PGBENCH.refuse_binary(&self.binary)?;
        crate::input::untrusted::sql_identifier("database", &self.db)
            .map_err(|msg| Problem::at("db", msg))?;
        if self.builtin.is_some() && self.script.is_some() {
            return Err(Problem::at_key(
                "script",
                "give `builtin` or `script`, not both",
            ));
        }
        if let Some(s) = &self.script {
            check_script(s).map_err(|msg| Problem::at("script", msg))?;
        }
        if !SCALE.contains(&self.scale) {
            return Err(Problem::at(
                "scale",
                format!("`scale` must be {}..{}", SCALE.start(), SCALE.end()),
            ));
        }
        if let Some(j) = self.jobs {
            let fewest = facts.concurrency.iter().copied().min().unwrap_or(1);
            if j == 0 || j > fewest {
                return Err(Problem::at(
                    "jobs",
                    format!(
                        "`jobs` must be 1..{fewest}: pgbench runs no more threads than clients, \
                         and the fewest clients of this workload's cells are {fewest}"
                    ),
                ));
            }
        }
        match (&facts.pace, self.latency_limit_ms) {
            (None, Some(_)) => Err(Problem::at_key(
                "latency_limit_ms",
                "`latency_limit_ms` applies in open loop only: give the matrix a `load.rate`",
            )),
            (_, Some(l)) if !(l > 0.0 && l.is_finite()) => Err(Problem::at(
                "latency_limit_ms",
                "`latency_limit_ms` must be a positive number of milliseconds",
            )),
            (Some(p), _)
                if !matches!(p.shape, Shape::Constant(_)) || p.spacing != Spacing::Poisson =>
            {
                Err(Problem::at(
                    "",
                    "pgbench's `--rate` is a constant rate of Poisson arrivals: it cannot \
                     follow `load.shape` steps or a wave, or `arrivals: even`; use an `oltp` \
                     workload for those",
                ))
            }
            _ => Ok(()),
        }
    }
}

/// A script pasted from a blog post runs on this host: no shell meta-command, no control
/// character but newlines and tabs, at most 64 KiB.
fn check_script(text: &str) -> Result<(), String> {
    if text.len() > MAX_SCRIPT_BYTES {
        return Err(format!("a script holds at most {MAX_SCRIPT_BYTES} bytes"));
    }
    if text.trim().is_empty() {
        return Err("the script is empty".into());
    }
    for (n, line) in text.lines().enumerate() {
        if line.chars().any(|c| c.is_control() && c != '\t') {
            return Err(format!(
                "line {} of the script holds a control character",
                n + 1
            ));
        }
    }
    if let Some((at, name)) = shell_command(text) {
        let line = text[..at].matches('\n').count() + 1;
        return Err(format!(
            "line {line} of the script holds `\\{name}`: a script from a matrix runs no shell \
             command"
        ));
    }
    Ok(())
}

/// Where the first `\shell` or `\setshell` starts, and which. pgbench starts a meta-command
/// at any backslash outside a quoted string, after SQL on the same line too (`SELECT 1;
/// \shell ...`), reads its name case-blind and joins lines ended by a backslash; so every
/// backslash is looked at, quoted or not (a false alarm in a string literal is cheap), with
/// line continuations and blanks after the backslash skipped.
fn shell_command(text: &str) -> Option<(usize, &'static str)> {
    let bytes = text.as_bytes();
    for (at, _) in text.match_indices('\\') {
        let mut name = String::new();
        let mut i = at + 1;
        while i < bytes.len() && name.len() < "setshell".len() {
            match bytes[i] {
                b'\\' if bytes[i + 1..].starts_with(b"\n") => i += 2,
                b'\\' if bytes[i + 1..].starts_with(b"\r\n") => i += 3,
                b' ' | b'\t' if name.is_empty() => i += 1,
                b if b.is_ascii_alphabetic() => {
                    name.push(b.to_ascii_lowercase() as char);
                    i += 1;
                }
                _ => break,
            }
        }
        let ends = i >= bytes.len() || !bytes[i].is_ascii_alphanumeric();
        if let Some(shell) = SHELL_COMMANDS.iter().find(|m| name == **m) {
            if ends {
                return Some((at, shell));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_runs_no_shell() {
        assert!(check_script("\\set aid random(1, 100000)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n").is_ok());
        let e = check_script("SELECT 1;\n  \\SHELL rm -rf ~\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("\\shell"), "{e}");
        assert!(check_script("\\setshell x echo 1").is_err());
        assert!(check_script("SELECT 1;\u{7}").is_err());
        assert!(check_script("  \n").is_err());
    }

    #[test]
    fn a_shell_meta_command_is_found_where_pgbench_would_start_one() {
        for bad in [
            "SELECT 1; \\shell touch /tmp/x\n",
            "SELECT 1;\\setshell v echo 1\n",
            "\\set a 1\nSELECT :a; \\SetShell v echo 1\n",
            "\\ shell id\n",
            "\\sh\\\nell id\n",
            "\\set\\\r\nshell x id\n",
            "SELECT 'a';\\shell\n",
        ] {
            let e = check_script(bad).unwrap_err();
            assert!(e.contains("runs no shell command"), "{bad:?}: {e}");
        }
        let e = check_script("SELECT 1;\nSELECT 2; \\shell id\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("\\shell"), "{e}");
        for good in [
            "\\set shell 1\nSELECT :shell;\n",
            "\\sleep 1 ms\n",
            "SELECT '\\shellfish';\n",
            "\\setshells x\n",
        ] {
            assert!(check_script(good).is_ok(), "{good:?}");
        }
    }
}
