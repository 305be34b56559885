//! manifest.json: what was run, where, on what, with which images and server versions.
//! Rewritten after every deployment so a killed run still explains itself.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Manifest {
    pub(crate) format_version: u32,
    pub(crate) rmatrix_version: String,
    /// The commit rmatrix was built from; empty when it was built outside a git checkout.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) rmatrix_commit: String,
    /// Whether tracked files differed from that commit when it was built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) rmatrix_dirty: Option<bool>,
    /// The external programs the run started (sysbench, pgbench, redis-benchmark, perf), by
    /// name: which program and what its `--version` said.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) tools: BTreeMap<String, ToolFacts>,
    pub(crate) run_id: String,
    /// A random token of this run directory, kept across `--resume`, that labels its
    /// containers (the run id is only the folder's name, which other runs may share).
    pub(crate) instance: String,
    /// The run directory's device and inode when it was written: a resume that finds another
    /// one runs in a copy, which gets its own instance token.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(crate) dir_identity: String,
    pub(crate) matrix_file: String,
    pub(crate) matrix_sha256: String,
    /// What counted the servers' instructions (`counted:` callgrind or perf); absent when
    /// nothing did. Counts of two counters are not compared.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) counted: String,
    /// The matrix's parameters as the run resolved them (`--set`, the environment, the
    /// defaults), in their declared order; absent without `params:`. A resume keeps them.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub(crate) params: IndexMap<String, String>,
    pub(crate) started_at: String,
    pub(crate) finished_at: Option<String>,
    pub(crate) host: Host,
    pub(crate) docker: Option<DockerFacts>,
    /// How load reached the servers, e.g. `tcp 127.0.0.1, host networking`.
    pub(crate) transport: String,
    /// How each workload's clients reached the server: `tcp` (at `transport`'s address) or
    /// `unix socket` (the server's, shared from its container).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) workload_transports: BTreeMap<String, String>,
    /// `--only` filters of this run.
    pub(crate) only: Vec<String>,
    pub(crate) images: BTreeMap<String, ImageFacts>,
    /// A pooled run (`--engine`, `--engines`): each engine, its host, where its clients ran.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) engines: Vec<EngineFacts>,
    /// A pooled run: the image of each server on each engine (engine -> server -> image).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) engine_images: BTreeMap<String, BTreeMap<String, ImageFacts>>,
    pub(crate) deployments: Vec<DeploymentFacts>,
    /// How each start of a deployment's server got its tables: loaded by its first
    /// iteration, or restored from a kept data set (and the set's own prepare).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) data: Vec<DataFacts>,
    /// Order of the runs across deployments, and the seed of a shuffled order.
    pub(crate) schedule: ScheduleFacts,
    pub(crate) cells_planned: usize,
    pub(crate) iterations_ok: usize,
    pub(crate) iterations_failed: usize,
}

/// One external program: as started (`RMATRIX_SYSBENCH=...` or the name found on PATH) and
/// the first line of its `--version`, `unknown` when it gave none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ToolFacts {
    pub(crate) program: String,
    pub(crate) version: String,
}

/// The commit of this build of rmatrix (`build.rs`) and whether its tree was dirty.
pub(crate) fn build_commit() -> (String, Option<bool>) {
    let dirty = match env!("RMATRIX_GIT_DIRTY") {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    };
    (env!("RMATRIX_GIT_COMMIT").to_string(), dirty)
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ScheduleFacts {
    pub(crate) order: String,
    pub(crate) seed: u64,
    pub(crate) restart: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Host {
    pub(crate) hostname: String,
    pub(crate) cpu_model: String,
    pub(crate) cpus: usize,
    pub(crate) kernel: String,
    pub(crate) memory_bytes: u64,
    pub(crate) os: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct DockerFacts {
    pub(crate) version: String,
    pub(crate) api_version: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct ImageFacts {
    pub(crate) reference: String,
    pub(crate) id: String,
    pub(crate) origin: String,
    /// `name@sha256:...` of a pulled image, as its registry knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) digest: Option<String>,
    /// What a `source:` server's image was built from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) source: Option<SourceFacts>,
    /// A `build:` image's own packages (`packages:`): each file and its sha256.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) packages: Vec<String>,
}

/// A server built from source: the work tree, the commit and how it was built.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub(crate) struct SourceFacts {
    pub(crate) git: String,
    /// The revision as the matrix wrote it (`HEAD`, a tag).
    pub(crate) rev: String,
    pub(crate) commit: String,
    pub(crate) describe: String,
    pub(crate) tree: String,
    pub(crate) subject: String,
    pub(crate) recipe: String,
    pub(crate) flags: Vec<String>,
    pub(crate) suite: String,
    /// Seconds the build took, when this run built it (none: the image was there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) build_seconds: Option<f64>,
}

/// One engine of a pool: its name, address, where its clients ran, and its host (/info).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct EngineFacts {
    pub(crate) name: String,
    pub(crate) address: String,
    /// `process` (this rmatrix) or `container` (an rmatrix container on the engine's host),
    /// or `engine:NAME` when `client_engine` puts every client on one engine.
    pub(crate) client: String,
    pub(crate) host: crate::servers::engines::docker::HostFacts,
    /// Why the engine left the pool mid-run, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) lost: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct DeploymentFacts {
    pub(crate) server: String,
    pub(crate) config: String,
    pub(crate) container: Option<String>,
    /// The engine of a pooled run that ran it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) engine: Option<String>,
    /// The server's `cpuset` and `cpus` (CPU quota) as the matrix gave them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cpuset: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cpus: Option<f64>,
    /// The server's `memory` limit in bytes, as the matrix gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) memory_bytes: Option<u64>,
    /// The kernel killed the server for lack of memory (Docker's `OOMKilled`) during the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) oom_killed: bool,
    /// `SELECT VERSION()`.
    pub(crate) version: Option<String>,
    pub(crate) status: DeploymentStatus,
    pub(crate) error: Option<String>,
    pub(crate) started_at: String,
    pub(crate) finished_at: Option<String>,
    /// How many times the server was started (more than 1 with `repeat: {restart: true}`).
    #[serde(default)]
    pub(crate) starts: u32,
}

/// One way a deployment's server got its tables.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct DataFacts {
    pub(crate) server: String,
    pub(crate) config: String,
    /// Which start of the deployment's server (1 first; more with `repeat: {restart: true}`).
    pub(crate) start: u32,
    pub(crate) how: DataHow,
    /// The kept set's key (`servers::dataset`), where one was made or restored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) dataset: Option<String>,
    /// The prepare's or the copy's wall time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) seconds: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) rows: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) rows_per_s: Option<f64>,
    /// The copy's size (a restore).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) bytes: Option<u64>,
    /// What was checked of a restored copy before it was measured, and how long it took
    /// (the server's start between the copy and the check is in neither).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) verified: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) verify_s: Option<f64>,
    /// Why a kept set was not used (the server then prepared its own tables).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) note: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum DataHow {
    /// Loaded on the measured server by its first iteration.
    #[default]
    Prepared,
    /// Loaded on a server of its own, then kept as a data set.
    Kept,
    /// Copied from a kept set.
    Restored,
}

/// How a deployment's server ended up: verified and used, or why its cells failed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum DeploymentStatus {
    Ok,
    /// It did not start (or the engine could not give it an image).
    #[default]
    Failed,
    /// It started, but a setting of the variant did not take effect.
    ConfigMismatch,
}

pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

impl Host {
    pub(crate) fn probe() -> Host {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let cpuinfo = read("/proc/cpuinfo");
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        let memory_bytes = read("/proc/meminfo")
            .lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .unwrap_or(0);
        let os = read("/etc/os-release")
            .lines()
            .find(|l| l.starts_with("PRETTY_NAME="))
            .map(|l| {
                l.trim_start_matches("PRETTY_NAME=")
                    .trim_matches('"')
                    .to_string()
            })
            .unwrap_or_default();
        Host {
            hostname: read("/proc/sys/kernel/hostname").trim().to_string(),
            cpu_model,
            cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(0),
            kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
            memory_bytes,
            os,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `params` is written only when the matrix declares some, in their order, and a manifest
    /// written before it existed still reads.
    #[test]
    fn parameters_round_trip_and_old_manifests_read() {
        let mut m = Manifest::default();
        assert!(!serde_json::to_string(&m).unwrap().contains("params"));
        m.params.insert("rev".into(), "HEAD".into());
        m.params.insert("iters".into(), "3".into());
        let text = serde_json::to_string(&m).unwrap();
        assert!(
            text.contains(r#""params":{"rev":"HEAD","iters":"3"}"#),
            "{text}"
        );
        let back: Manifest = serde_json::from_str(&text).unwrap();
        assert_eq!(back.params, m.params);
        let old: Manifest =
            serde_json::from_str(r#"{"format_version": 1, "run_id": "r"}"#).unwrap();
        assert!(old.params.is_empty());
    }
}
