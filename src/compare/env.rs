//! The environment a run measured in, and how two runs' environments differ: host (CPU model
//! and count, kernel, memory), rmatrix version, and per deployment (server x config) the
//! image id, the server's version and its effective variables. A difference does not make a
//! comparison wrong, but the reader must know it is there; `--require-same-env` refuses it.
//!
//! Facts a manifest lacks (runs of older rmatrix versions, external servers without an
//! image, deployments that never started) are unknown, and unknown is not compared.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::input::Run;
use crate::results::check::Refused;

/// Variables that differ from one server start to the next by design (a free port, a
/// fresh datadir's uuid, the GTID position, names derived from the host name): they say
/// nothing about the environment.
const PER_INSTANCE: &[&str] = &[
    "port",
    "report_port",
    "server_uid",
    "server_uuid",
    "gtid_binlog_pos",
    "gtid_binlog_state",
    "gtid_current_pos",
    "gtid_slave_pos",
    "gtid_executed",
    "gtid_purged",
    "hostname",
    "general_log_file",
    "slow_query_log_file",
    "wsrep_node_name",
];

/// Variable differences listed before the rest is only counted.
const MAX_VARIABLES: usize = 10;
/// Longer values are cut (a collation list can run to a kilobyte).
const MAX_VALUE_CHARS: usize = 80;

/// What a run's manifest.json and `servers/*/variables.json` say about where it ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(default)]
pub(crate) struct RunEnv {
    pub(crate) cpu_model: String,
    pub(crate) cpus: u64,
    pub(crate) kernel: String,
    pub(crate) memory_bytes: u64,
    pub(crate) rmatrix_version: String,
    pub(crate) deployments: Vec<DeploymentEnv>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(default)]
pub(crate) struct DeploymentEnv {
    pub(crate) server: String,
    pub(crate) config: String,
    pub(crate) image_id: String,
    /// `SELECT VERSION()` (or the Redis/Valkey version).
    pub(crate) version: String,
    /// `None` when the run has no variables.json for this deployment.
    pub(crate) variables: Option<BTreeMap<String, String>>,
    /// The server container's CPUs (`cpuset`) and CPU quota (`cpus`), "none" when unset: a
    /// quota or another core moves a server-bound cell's throughput as much as a release.
    pub(crate) cpuset: String,
    pub(crate) cpus: String,
}

/// One fact that differs; `None` is a variable that one side does not have.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Change {
    pub(crate) what: String,
    pub(crate) baseline: Option<String>,
    pub(crate) candidate: Option<String>,
}

/// The differences of one deployment present in both runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct DeploymentDiff {
    pub(crate) server: String,
    pub(crate) config: String,
    /// `image id` and `server version`.
    pub(crate) facts: Vec<Change>,
    /// Server variables by name, per-instance ones left out.
    pub(crate) variables: Vec<Change>,
}

/// How the candidate's environment differs from the baseline's; empty when it does not.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct EnvDiff {
    /// Run ids.
    pub(crate) baseline: String,
    pub(crate) candidate: String,
    /// `cpu_model`, `cpus`, `kernel`, `memory`, `rmatrix_version`.
    pub(crate) host: Vec<Change>,
    pub(crate) deployments: Vec<DeploymentDiff>,
}

impl EnvDiff {
    pub(crate) fn is_empty(&self) -> bool {
        self.host.is_empty() && self.deployments.is_empty()
    }

    /// What differs for the cells of one server x config (host differences apply to all).
    pub(crate) fn deployment(&self, server: &str, config: &str) -> Option<&DeploymentDiff> {
        self.deployments
            .iter()
            .find(|d| d.server == server && d.config == config)
    }
}

/// `--require-same-env` found differences (exit code 5).
#[derive(Debug)]
pub(crate) struct EnvDiffers(pub Vec<EnvDiff>);

impl std::fmt::Display for EnvDiffers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&refusal(&self.0))
    }
}

impl crate::error::Kinded for EnvDiffers {
    fn kind(&self) -> crate::error::ErrorKind {
        crate::error::ErrorKind::EnvDiffers
    }
}

crate::error::kinded!(EnvDiffers);

/// Read the environment of the run directory `dir` from its manifest (if any) and its
/// deployments' variables.json files.
pub(crate) fn load(dir: &Path, manifest: Option<&Value>) -> Result<RunEnv, Refused> {
    let Some(m) = manifest else {
        return Ok(RunEnv::default());
    };
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let mut deployments: Vec<DeploymentEnv> = Vec::new();
    for d in m["deployments"].as_array().into_iter().flatten() {
        let (server, config) = (text(&d["server"]), text(&d["config"]));
        if deployments
            .iter()
            .any(|e| e.server == server && e.config == config)
        {
            continue;
        }
        let slug = crate::matrix::plan::slug(&format!("{server}__{config}"));
        let path = dir.join("servers").join(slug).join("variables.json");
        let variables =
            match crate::input::file::read_text_optional(&path, crate::input::file::SERVER_FILE)? {
                Some(t) => Some(
                    serde_json::from_str(&t).map_err(|source| Refused::NotJson { path, source })?,
                ),
                None => None,
            };
        let or_none = |v: &Value| match v {
            Value::Null => "none".to_string(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        deployments.push(DeploymentEnv {
            image_id: text(&m["images"][&server]["id"]),
            version: text(&d["version"]),
            cpuset: or_none(&d["cpuset"]),
            cpus: or_none(&d["cpus"]),
            server,
            config,
            variables,
        });
    }
    let host = &m["host"];
    Ok(RunEnv {
        cpu_model: text(&host["cpu_model"]),
        cpus: host["cpus"].as_u64().unwrap_or(0),
        kernel: text(&host["kernel"]),
        memory_bytes: host["memory_bytes"].as_u64().unwrap_or(0),
        rmatrix_version: text(&m["rmatrix_version"]),
        deployments,
    })
}

/// How `cand`'s environment differs from `base`'s.
pub(crate) fn diff(base: &Run, cand: &Run) -> EnvDiff {
    let (b, c) = (&base.env, &cand.env);
    let mut host = Vec::new();
    fact(&mut host, "cpu_model", &b.cpu_model, &c.cpu_model);
    fact(&mut host, "cpus", &count(b.cpus), &count(c.cpus));
    fact(&mut host, "kernel", &b.kernel, &c.kernel);
    if b.memory_bytes != c.memory_bytes {
        let (bm, cm) = memory_texts(b.memory_bytes, c.memory_bytes);
        fact(&mut host, "memory", &bm, &cm);
    }
    fact(
        &mut host,
        "rmatrix_version",
        &b.rmatrix_version,
        &c.rmatrix_version,
    );
    let deployments = b
        .deployments
        .iter()
        .filter_map(|bd| {
            let cd = c
                .deployments
                .iter()
                .find(|d| d.server == bd.server && d.config == bd.config)?;
            let mut facts = Vec::new();
            fact(&mut facts, "image id", &bd.image_id, &cd.image_id);
            fact(&mut facts, "server version", &bd.version, &cd.version);
            fact(&mut facts, "cpuset", &bd.cpuset, &cd.cpuset);
            fact(&mut facts, "cpus (CPU quota)", &bd.cpus, &cd.cpus);
            let variables = match (&bd.variables, &cd.variables) {
                (Some(bv), Some(cv)) => variable_changes(bv, cv),
                _ => Vec::new(),
            };
            (!facts.is_empty() || !variables.is_empty()).then(|| DeploymentDiff {
                server: bd.server.clone(),
                config: bd.config.clone(),
                facts,
                variables,
            })
        })
        .collect();
    EnvDiff {
        baseline: base.run_id.clone(),
        candidate: cand.run_id.clone(),
        host,
        deployments,
    }
}

/// A short Markdown block listing each difference as `what: baseline -> candidate`; nothing
/// when the environments are the same.
pub(crate) fn markdown(d: &EnvDiff) -> String {
    if d.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "**Environment differs** between {} and {}:\n\n",
        code(&d.baseline),
        code(&d.candidate)
    );
    for line in lines(d, code) {
        out.push_str(&format!("- {line}\n"));
    }
    out.push('\n');
    out
}

/// The difference lines, names and values shown by `show`, variables capped at
/// `MAX_VARIABLES`.
fn lines(d: &EnvDiff, show: fn(&str) -> String) -> Vec<String> {
    let value = |v: &Option<String>| v.as_deref().map_or("(absent)".into(), show);
    let line = |what: String, c: &Change| {
        format!("{what}: {} -> {}", value(&c.baseline), value(&c.candidate))
    };
    let scope = |dep: &DeploymentDiff| format!("{} / {}", show(&dep.server), show(&dep.config));
    let mut out: Vec<String> = d.host.iter().map(|c| line(c.what.clone(), c)).collect();
    for dep in &d.deployments {
        out.extend(
            dep.facts
                .iter()
                .map(|c| line(format!("{}: {}", scope(dep), c.what), c)),
        );
    }
    let variables: Vec<String> = d
        .deployments
        .iter()
        .flat_map(|dep| {
            dep.variables
                .iter()
                .map(move |c| line(format!("{}: variable {}", scope(dep), show(&c.what)), c))
        })
        .collect();
    let rest = variables.len().saturating_sub(MAX_VARIABLES);
    out.extend(variables.into_iter().take(MAX_VARIABLES));
    if rest > 0 {
        out.push(format!(
            "and {rest} more variable differences (servers/*/variables.json)"
        ));
    }
    out
}

/// The error text of `--require-same-env`, plain text for the terminal.
fn refusal(diffs: &[EnvDiff]) -> String {
    let mut out = String::from(
        "the runs' environments differ (--require-same-env); without that option the \
         differences are shown above the tables",
    );
    for d in diffs {
        out.push_str(&format!(
            "\n  {} -> {}:",
            plain(&d.baseline),
            plain(&d.candidate)
        ));
        for line in lines(d, plain) {
            out.push_str(&format!("\n    {line}"));
        }
    }
    out
}

fn fact(out: &mut Vec<Change>, what: &str, base: &str, cand: &str) {
    if !base.is_empty() && !cand.is_empty() && base != cand {
        out.push(Change {
            what: what.into(),
            baseline: Some(base.into()),
            candidate: Some(cand.into()),
        });
    }
}

fn count(n: u64) -> String {
    if n == 0 {
        String::new()
    } else {
        n.to_string()
    }
}

/// MiB, unless the two are equal at that precision; then bytes. Unknown (0) stays empty.
fn memory_texts(b: u64, c: u64) -> (String, String) {
    let mib = |n: u64| format!("{} MiB", n / (1 << 20));
    let bytes = |n: u64| format!("{n} bytes");
    let show = if mib(b) == mib(c) { bytes } else { mib };
    let known = |n: u64| if n == 0 { String::new() } else { show(n) };
    (known(b), known(c))
}

fn variable_changes(b: &BTreeMap<String, String>, c: &BTreeMap<String, String>) -> Vec<Change> {
    let names: BTreeSet<&String> = b.keys().chain(c.keys()).collect();
    names
        .into_iter()
        .filter(|n| !PER_INSTANCE.contains(&n.as_str()))
        .filter(|n| b.get(*n) != c.get(*n))
        .map(|n| Change {
            what: n.clone(),
            baseline: b.get(n).cloned(),
            candidate: c.get(n).cloned(),
        })
        .collect()
}

/// Control characters spelled out (`\n`), long values cut.
fn printable(s: &str) -> String {
    let cut: String = s.chars().take(MAX_VALUE_CHARS).collect();
    let mut out = crate::escape::terminal(&cut);
    if cut.len() < s.len() {
        out.push('…');
    }
    out
}

fn plain(s: &str) -> String {
    if s.is_empty() {
        "(empty)".into()
    } else {
        printable(s)
    }
}

/// A Markdown code span that holds any text: a fence longer than the longest backtick run
/// inside, padded when the text starts or ends with a backtick; no newline can end the list
/// item early.
pub(crate) fn code(s: &str) -> String {
    if s.is_empty() {
        return "(empty)".into();
    }
    let s = printable(s);
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
        Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    fn run(id: &str, kernel: &str, variables: &[(&str, &str)]) -> Run {
        Run {
            run_id: id.into(),
            env: RunEnv {
                cpu_model: "Xeon".into(),
                cpus: 2,
                kernel: kernel.into(),
                memory_bytes: 8 << 30,
                rmatrix_version: "0.1.0".into(),
                deployments: vec![DeploymentEnv {
                    server: "mariadb-10.11".into(),
                    config: "default".into(),
                    image_id: "sha256:aa".into(),
                    version: "10.11.19".into(),
                    variables: vars(variables),
                    cpuset: "none".into(),
                    cpus: "none".into(),
                }],
            },
            ..Run::default()
        }
    }

    #[test]
    fn same_environment_is_empty_and_prints_nothing() {
        let a = run("a", "6.1", &[("port", "3306"), ("sync_binlog", "0")]);
        let b = run("b", "6.1", &[("port", "40001"), ("sync_binlog", "0")]);
        let d = diff(&a, &b);
        assert!(d.is_empty(), "{d:?}: a port is per instance");
        assert_eq!(markdown(&d), "");
        // Unknown facts (an older manifest) are not differences.
        let mut old = run("old", "", &[]);
        old.env.cpus = 0;
        old.env.memory_bytes = 0;
        old.env.deployments[0].variables = None;
        assert!(diff(&old, &a).is_empty());
    }

    #[test]
    fn host_and_variable_differences_are_listed() {
        let a = run("a", "6.1", &[("sync_binlog", "0"), ("old_only", "1")]);
        let mut b = run("b", "6.18", &[("sync_binlog", "1"), ("new_only", "x")]);
        b.env.cpus = 4;
        b.env.memory_bytes = 16 << 30;
        b.env.deployments[0].image_id = "sha256:bb".into();
        b.env.deployments[0].cpus = "0.3".into();
        let d = diff(&a, &b);
        assert_eq!(
            d.host.iter().map(|c| c.what.as_str()).collect::<Vec<_>>(),
            ["cpus", "kernel", "memory"]
        );
        let dep = d.deployment("mariadb-10.11", "default").unwrap();
        assert_eq!(dep.facts.len(), 2);
        assert_eq!(dep.variables.len(), 3);
        assert_eq!(
            markdown(&d),
            "**Environment differs** between `a` and `b`:\n\n\
             - cpus: `2` -> `4`\n\
             - kernel: `6.1` -> `6.18`\n\
             - memory: `8192 MiB` -> `16384 MiB`\n\
             - `mariadb-10.11` / `default`: image id: `sha256:aa` -> `sha256:bb`\n\
             - `mariadb-10.11` / `default`: cpus (CPU quota): `none` -> `0.3`\n\
             - `mariadb-10.11` / `default`: variable `new_only`: (absent) -> `x`\n\
             - `mariadb-10.11` / `default`: variable `old_only`: `1` -> (absent)\n\
             - `mariadb-10.11` / `default`: variable `sync_binlog`: `0` -> `1`\n\n"
        );
        let err = EnvDiffers(vec![d]).to_string();
        assert!(
            err.contains("\n  a -> b:\n    cpus: 2 -> 4\n    kernel: 6.1 -> 6.18\n"),
            "{err}"
        );
    }

    #[test]
    fn long_variable_lists_are_capped_with_a_count() {
        let many: Vec<(String, String)> = (0..25)
            .map(|i| (format!("v{i:02}"), i.to_string()))
            .collect();
        let refs: Vec<(&str, &str)> = many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let d = diff(&run("a", "6.1", &[]), &run("b", "6.1", &refs));
        let md = markdown(&d);
        assert_eq!(md.lines().filter(|l| l.starts_with("- ")).count(), 11);
        assert!(md.contains("- and 15 more variable differences"), "{md}");
    }

    #[test]
    fn markdown_holds_any_text() {
        assert_eq!(code("a|b"), "`a|b`");
        assert_eq!(code("x`y"), "``x`y``");
        assert_eq!(code("`"), "`` ` ``");
        assert_eq!(code("a\nb"), "`a\\nb`");
        assert_eq!(code(""), "(empty)");
        assert!(code(&"z".repeat(200)).ends_with("…`"));
        let d = diff(
            &run("a", "6.1", &[("v", "1")]),
            &run("b", "6.1", &[("v", "two\n- lines | `x`")]),
        );
        let md = markdown(&d);
        assert_eq!(md.lines().filter(|l| !l.is_empty()).count(), 2, "{md}");
        assert!(md.contains("-> `` two\\n- lines | `x` ``"), "{md}");
    }
}
