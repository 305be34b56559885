//! What a server's container needs of an engine (`Containers`): start one as a
//! `ContainerSpec` says, its log, whether it still runs, its main process, whether the kernel
//! killed it for lack of memory, and its removal with its data volume. Docker's `Engine`
//! (`docker.rs`, through bollard) implements it; the start sequence (`servers::family::start`)
//! and a deployment's teardown (`servers::teardown`) are generic over it, so that a double
//! (`double.rs`) stands in for the engine in their unit tests, and another backend (a Docker
//! Swarm, issue 58) can stand at the same seam. Nothing here names an engine's own types.

use std::future::Future;
use std::path::PathBuf;

use anyhow::Result;

/// What to start: the image, its arguments and environment, files to mount read-only.
#[derive(Debug, Clone, Default)]
pub struct ContainerSpec {
    pub(crate) name: String,
    pub(crate) image: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    /// (host path, container path), mounted read-only.
    pub(crate) mounts: Vec<(PathBuf, String)>,
    /// (host path, container path), mounted read-write (e.g. a directory for a unix socket).
    pub(crate) writable: Vec<(PathBuf, String)>,
    pub(crate) run_id: String,
    /// This run directory's token (empty for runs made before it existed).
    pub(crate) instance: String,
    /// Host networking, or bridge with `publish = Some((container_port, host_port))` on 127.0.0.1.
    pub(crate) host_network: bool,
    pub(crate) publish: Option<(u16, u16)>,
    /// Host CPUs the container may run on (`--cpuset-cpus`), all when None.
    pub(crate) cpuset: Option<String>,
    /// A CPU quota in CPUs (`--cpus`, sent as `NanoCpus`), none when None.
    pub(crate) cpus: Option<f64>,
    /// A memory limit in bytes (`--memory`, with no swap beyond it), none when None.
    pub(crate) memory: Option<u64>,
    /// Files copied into the container before it starts (path in it, content): they go
    /// through the API, so they reach an engine on another host too.
    pub(crate) files: Vec<(String, Vec<u8>)>,
    /// The host's process namespace (`--pid host`): a client container reads the server's
    /// cgroup through the server's pid.
    pub(crate) pid_host: bool,
    /// Capabilities added to Docker's default set (e.g. `SYS_PTRACE`).
    pub(crate) cap_add: Vec<String>,
    /// Named volumes (volume, container path), mounted read-write (a build's compiler cache).
    pub(crate) volumes: Vec<(String, String)>,
    /// A tar unpacked at `/` before the container starts (a source tree).
    pub(crate) archive: Option<Vec<u8>>,
    /// The image's entrypoint replaced (a helper that runs one command in a server's image).
    pub(crate) entrypoint: Option<Vec<String>>,
}

/// The operations on a server's container: what starting it, waiting for it, reading it and
/// removing it ask of an engine. Containers are named by the id `start` returned.
pub trait Containers: Sync {
    /// Create and start a container as `spec` says; its id. One that could not be started is
    /// not left behind.
    fn start(&self, spec: &ContainerSpec) -> impl Future<Output = Result<String>> + Send;

    /// None while the container runs; its exit code once it has stopped.
    fn exit_code(&self, id: &str) -> impl Future<Output = Result<Option<i64>>> + Send;

    /// The container's main process as the engine's host sees it (None: not running).
    fn pid(&self, id: &str) -> impl Future<Output = Result<Option<u32>>> + Send;

    /// What the container wrote (stdout and stderr, where a server writes its log); what
    /// could be read of it when reading fails part way.
    fn logs(&self, id: &str) -> impl Future<Output = String> + Send;

    /// Whether the kernel killed the container for lack of memory. Asked when a cell failed:
    /// the engine may see the container exit after its client saw the connection reset.
    fn oom_killed(&self, id: &str) -> impl Future<Output = Result<bool>> + Send;

    /// Remove a container, stopping it first; one already gone counts as removed.
    fn remove(&self, id: &str) -> impl Future<Output = Result<()>> + Send;

    /// Remove a volume (a deployment's copy of a kept data set); one already gone counts as
    /// removed.
    fn remove_volume(&self, name: &str) -> impl Future<Output = Result<()>> + Send;
}
