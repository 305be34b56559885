//! What a server family answers (`Family`), and the one start-up sequence around it: write
//! its config, start its container, wait until it answers, read back what it runs with.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Result};

use super::deployed::{attach_retrying, Deployed, Endpoint, Launch};
pub(crate) use super::deployed::{BoxFuture, HostSide};
use super::engines::{ContainerSpec, Containers};
use super::seal::Seal;
use super::spec::{ConfigBlock, ConfigSpec, ExternalSpec, ServerSpec};
use crate::measure::cgroup::Cgroup;
use crate::measure::counters::Status;
use crate::measure::server_seconds::CounterSource;
use crate::model::ResultRow;

/// How a container becomes ready: `probe` is tried every `every`, each try bounded by
/// `attempt_timeout`, until it succeeds, the container exits, or the start timeout passes.
#[derive(Debug, Clone, Copy)]
pub struct Readiness {
    pub(crate) every: Duration,
    pub(crate) attempt_timeout: Duration,
    /// What a ready server does, for messages: "answering a query", "answering PING".
    pub(crate) what: &'static str,
}

/// What a family adds to the container every family shares (name, image, label, network).
#[derive(Debug, Default)]
pub struct Setup {
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    /// Read-only files (host path, container path).
    pub(crate) mounts: Vec<(PathBuf, String)>,
    /// Writable directories (host path, container path).
    pub(crate) writable: Vec<(PathBuf, String)>,
    /// The server's unix socket on this host, where it has one.
    pub(crate) socket: Option<PathBuf>,
}

/// Where a family's server puts its unix socket: `<dir>/sock` on this host, mounted at
/// `SOCKET_DIR_IN_CONTAINER`. Returns the directory and the socket's host path, which is
/// offered to clients only on the host network (as the TCP endpoint is).
pub(crate) fn socket_dir(
    launch: &Launch,
    dir: &Path,
    name: &str,
) -> Result<(PathBuf, Option<PathBuf>)> {
    let sock_dir = dir.join(SOCKET_DIR);
    std::fs::create_dir_all(&sock_dir)?;
    let sock_dir = sock_dir.canonicalize()?;
    let socket = launch.host_network.then(|| sock_dir.join(name));
    Ok((sock_dir, socket))
}

/// The folder of a server's directory that `socket_dir` makes.
const SOCKET_DIR: &str = "sock";

/// The server's unix sockets outlive its container as files in the run directory, where
/// `cp -r` and archivers stop on them; they answer nothing once the server is gone.
pub(crate) fn remove_socket_dir(dir: &Path) -> Result<()> {
    match std::fs::remove_dir_all(dir.join(SOCKET_DIR)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            bail!("failed to remove {}: {e}", dir.join(SOCKET_DIR).display())
        }
        _ => Ok(()),
    }
}

/// Where `socket_dir` is mounted in the container.
pub(crate) const SOCKET_DIR_IN_CONTAINER: &str = "/run/rmatrix-sock";
/// sun_path holds 108 bytes; a longer host path cannot be connected to as it is.
pub(crate) const MAX_SOCKET_PATH: usize = 100;

/// A path to connect to `socket` by, within `MAX_SOCKET_PATH`: the path itself, or the same
/// socket through an open descriptor of its directory (`/proc/self/fd/<n>/<name>`), which
/// the returned handle keeps open.
pub(crate) fn short_socket_path(socket: &Path) -> Result<(String, Option<std::fs::File>)> {
    if socket.as_os_str().len() <= MAX_SOCKET_PATH {
        return Ok((socket.display().to_string(), None));
    }
    let (Some(parent), Some(name)) = (socket.parent(), socket.file_name()) else {
        bail!("{} is no socket path", socket.display());
    };
    let dir = std::fs::File::open(parent)
        .map_err(|e| anyhow::anyhow!("failed to open {}: {e}", parent.display()))?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&dir);
    Ok((
        format!("/proc/self/fd/{fd}/{}", name.to_string_lossy()),
        Some(dir),
    ))
}

/// A deployment the family's server would refuse (or run otherwise than the matrix says),
/// found before any container starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// Where, below `configs.<config>` (e.g. `<block>.<setting>`).
    pub(crate) at: String,
    pub(crate) message: String,
}

/// A kept connection the stall watchdog asks whether the server still answers, with a
/// question no counter a driver records counts (a new connection per ask would add its
/// handshake to them). After a failed ask the watchdog starts from a new one.
pub trait Liveness: Send {
    fn ask(&mut self) -> BoxFuture<'_, Result<()>>;
}

/// One server family: what a matrix may say about it, how to start it, when it is ready,
/// what it runs with. Listed in `kind.rs`; nothing outside its folder names it. The
/// counters a driver reads around a measured phase are the family's too, read on the
/// driver's own connection.
pub trait Family: Sync {
    /// Whether an image or build name (its last path part, lower-case) names a server of
    /// this family, when the matrix gives no `kind`.
    fn claims(&self, _name: &str) -> bool {
        false
    }

    /// A build of this family for examples in messages: `<folder>-<version>`, a name of
    /// containers/builds.yaml.
    fn build_example(&self) -> &'static str;

    /// What counting its server's instructions needs (`counted: callgrind`); None: the
    /// family cannot be counted yet.
    fn counted(&self) -> Option<super::images::counted::CountedServer> {
        None
    }

    /// A shell command run after a build's own packages were installed into the family's
    /// image (`packages:`), e.g. emptying the datadir their scripts initialised.
    fn after_packages(&self) -> &'static str {
        ""
    }

    /// The recipes that build this family's servers from a source tree (`source: {recipe}`).
    fn recipes(&self) -> &'static [super::images::source::Recipe] {
        &[]
    }

    /// The family's settings block of a config: its key, file and key check.
    fn config_block(&self) -> ConfigBlock;

    /// A config this family's server (as the matrix names it) cannot run with, before any
    /// container starts; `server` and `config` are the deployment's names in the matrix.
    fn refuses(
        &self,
        _server: &str,
        _spec: &ServerSpec,
        _config: &str,
        _settings: &ConfigSpec,
    ) -> Option<Refusal> {
        None
    }

    /// The port the server listens on inside its container (published on a bridge).
    fn container_port(&self) -> u16;

    /// The account created with the run's random password.
    fn user(&self) -> &'static str;

    /// The container's arguments, environment and mounts for `config`; config files are
    /// written into `dir`. The server listens on `port` (host network) or `container_port`.
    fn setup(&self, launch: &Launch, config: &ConfigSpec, dir: &Path, port: u16) -> Result<Setup>;

    fn readiness(&self) -> Readiness;

    /// One readiness try: Ok when the server answers as a ready one does.
    fn probe<'a>(&'a self, endpoint: &'a Endpoint) -> BoxFuture<'a, Result<()>>;

    /// The server's version and settings, and the variant's settings checked against them.
    fn read_back<'a>(
        &'a self,
        endpoint: Endpoint,
        config: &'a ConfigSpec,
    ) -> BoxFuture<'a, Result<Deployed>>;

    /// After `read_back` of a container: checks only the server's process on this host can
    /// answer (`pid`, the container's main process), added to `deployed.checks`.
    fn inspect(&self, _config: &ConfigSpec, _pid: u32, _deployed: &mut Deployed) {}

    /// After `read_back`: checks of what the server reports against its matrix entry (the
    /// server the image or build name promised), added to `deployed.checks`.
    fn confirm(&self, _spec: &ServerSpec, _deployed: &mut Deployed) {}

    /// The lines of a server log that explain a failed start.
    fn failed_start(&self, log: &str) -> String;

    /// The family's own columns of a results row, from the counters of a measured phase.
    fn result_columns(&self, _counters: &Status, _row: &mut ResultRow) {}

    /// A connection for the stall watchdog, made on its first ask.
    fn liveness<'a>(&'a self, endpoint: &'a Endpoint) -> Box<dyn Liveness + 'a>;

    /// A blocking connection that reads the server's counters once a second
    /// (`measure::server_seconds`); an error when the family reads none that way.
    fn counter_source(&self, _endpoint: &Endpoint) -> Result<Box<dyn CounterSource>> {
        bail!("this family reads no per-second counters")
    }

    /// Where the server keeps its data in its container, for data sets kept across servers
    /// (`servers::dataset`); None when the family keeps none.
    fn datadir(&self) -> Option<&'static str> {
        None
    }

    /// Whether a setting of the family's block (its name with `_` for `-`) leaves the data
    /// files as a prepare writes them, so that a set kept under one value serves a server
    /// under another. Unknown settings do not: they make a set of their own.
    fn keeps_data_format(&self, _setting: &str) -> bool {
        false
    }

    /// The server's checksum of each table of `schemas`, by `schema.table`.
    fn checksums<'a>(
        &'a self,
        _endpoint: &'a Endpoint,
        _schemas: &'a [String],
    ) -> BoxFuture<'a, Result<BTreeMap<String, String>>> {
        Box::pin(async { bail!("this family keeps no data sets") })
    }

    /// Write a prepared set's seal into its server (before it stops), or read it back from
    /// a copy (None: the copy has none).
    fn write_seal<'a>(
        &'a self,
        _endpoint: &'a Endpoint,
        _seal: &'a Seal,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async { bail!("this family keeps no data sets") })
    }

    fn read_seal<'a>(&'a self, _endpoint: &'a Endpoint) -> BoxFuture<'a, Result<Option<Seal>>> {
        Box::pin(async { bail!("this family keeps no data sets") })
    }
}

/// Start `image` for one deployment on `engine`: its container, readiness, read-back. On
/// failure the container is removed and the error carries the server's own log lines.
pub async fn start(
    engine: &impl Containers,
    family: &dyn Family,
    launch: &Launch<'_>,
    name: &str,
    image: &str,
    config: &ConfigSpec,
    dir: &Path,
) -> Result<Deployed> {
    let port = match launch.host_side {
        Some(h) => h.free_port().await?,
        None => free_port()?,
    };
    let mut setup = family.setup(launch, config, dir, port)?;
    let dumps = match launch.counted {
        true => Some(super::images::counted::dump_dir(dir)?),
        false => None,
    };
    if let Some(d) = &dumps {
        let in_container = super::images::counted::DUMP_DIR_IN_CONTAINER.to_string();
        setup.writable.push((d.clone(), in_container));
        let random = super::images::counted::fixed_random(dir)?;
        for device in ["/dev/urandom", "/dev/random"] {
            setup.mounts.push((random.clone(), device.to_string()));
        }
    }
    let (copied, mounts): (Vec<_>, Vec<_>) = setup
        .mounts
        .into_iter()
        .partition(|(host, _)| launch.copy_files && host.is_file());
    let mut files = Vec::new();
    for (host, in_container) in copied {
        let data = std::fs::read(&host)
            .map_err(|e| anyhow::anyhow!("failed to read {}: {e}", host.display()))?;
        files.push((in_container, data));
    }
    let volumes = match (&launch.data_volume, family.datadir()) {
        (Some(v), Some(datadir)) => vec![(v.clone(), datadir.to_string())],
        _ => Vec::new(),
    };
    let spec = ContainerSpec {
        args: setup.args,
        env: setup.env,
        mounts,
        files,
        writable: setup.writable,
        volumes,
        ..launch.container(name, image, family.container_port(), port)
    };
    let id = engine.start(&spec).await?;
    let endpoint = launch.endpoint(port, family.user());
    let ready = match launch.host_side {
        // The pid and its cgroup are the engine host's: only a client there reads them.
        Some(h) => match engine.pid(&id).await {
            Ok(pid) => h.await_ready(&id, &endpoint, pid).await,
            Err(e) => Err(e),
        },
        None => ready_here(engine, family, launch, &id, endpoint, config).await,
    };
    let mut deployed = match ready {
        Ok(d) => d,
        Err(e) => {
            let log = discard(engine, &id, dir).await;
            return Err(e.context(family.failed_start(&log)));
        }
    };
    deployed.container = Some(id);
    deployed.socket = setup.socket;
    deployed.dumps = dumps;
    Ok(deployed)
}

/// Wait for a server this process reaches, read it back, and inspect its process here.
async fn ready_here(
    engine: &impl Containers,
    family: &dyn Family,
    launch: &Launch<'_>,
    id: &str,
    endpoint: Endpoint,
    config: &ConfigSpec,
) -> Result<Deployed> {
    wait_ready(family, &endpoint, launch.start_timeout, || {
        engine.exit_code(id)
    })
    .await?;
    let pid = engine.pid(id).await?;
    read_back_and_inspect(family, endpoint, config, pid).await
}

/// A container that never became ready: keep its log in `dir`, remove it, return the log.
async fn discard(engine: &impl Containers, id: &str, dir: &Path) -> String {
    let log = engine.logs(id).await;
    let _ = std::fs::write(dir.join("server.log"), &log);
    let _ = engine.remove(id).await;
    log
}

/// The server's settings, and the checks only its process answers, where `pid` is in this
/// host's /proc (or, in a client container, the engine host's).
pub(crate) async fn read_back_and_inspect(
    family: &dyn Family,
    endpoint: Endpoint,
    config: &ConfigSpec,
    pid: Option<u32>,
) -> Result<Deployed> {
    let mut deployed = family.read_back(endpoint, config).await?;
    if let Some(pid) = pid {
        family.inspect(config, pid, &mut deployed);
    }
    deployed.cgroup = pid.and_then(Cgroup::of_pid);
    deployed.pid = pid;
    Ok(deployed)
}

/// Attach to a server someone else runs. Its config is never changed, only read.
pub(crate) async fn attach(
    family: &dyn Family,
    ext: &ExternalSpec,
    config: &ConfigSpec,
) -> Result<Deployed> {
    let endpoint = Endpoint::external(ext)?;
    attach_retrying(&endpoint, || family.read_back(endpoint.clone(), config)).await
}

/// The one waiting loop: probe until ready or `timeout`; fail early when `exited` reports
/// the server's exit code.
pub(crate) async fn wait_ready<F, Fut>(
    family: &dyn Family,
    endpoint: &Endpoint,
    timeout: Duration,
    mut exited: F,
) -> Result<()>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Option<i64>>>,
{
    let ready = family.readiness();
    // Tokio's clock (the system's, unless a test pauses it).
    let start = tokio::time::Instant::now();
    loop {
        if let Some(code) = exited().await? {
            bail!("server exited with code {code} before {}", ready.what);
        }
        let last_err =
            match tokio::time::timeout(ready.attempt_timeout, family.probe(endpoint)).await {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) => format!("{e:#}"),
                Err(_) => "connection attempt timed out".to_string(),
            };
        if start.elapsed() > timeout {
            bail!(
                "server did not answer within {}s (last error: {last_err})",
                timeout.as_secs()
            );
        }
        tokio::time::sleep(ready.every).await;
    }
}

/// A port nobody listens on now: the kernel picks it, we release it for the server.
pub(crate) fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}
