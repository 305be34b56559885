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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    use super::*;
    use crate::servers::engines::double::{Call, Scripted, CONTAINER};

    /// A family whose server answers after `failing` failed probes (None: never), and
    /// whose config file and data directory the sequence places.
    struct Fake {
        failing: Option<usize>,
        /// Each probe hangs (only the attempt timeout ends it).
        hangs: bool,
        readiness: Readiness,
        read_back: Result<(), &'static str>,
        datadir: Option<&'static str>,
        probes: AtomicUsize,
        inspected: Mutex<Vec<u32>>,
    }

    impl Fake {
        fn ready_after(failing: usize) -> Fake {
            Fake {
                failing: Some(failing),
                hangs: false,
                readiness: Readiness {
                    every: Duration::from_secs(1),
                    attempt_timeout: Duration::from_secs(2),
                    what: "answering",
                },
                read_back: Ok(()),
                datadir: None,
                probes: AtomicUsize::new(0),
                inspected: Mutex::new(Vec::new()),
            }
        }

        fn never_ready() -> Fake {
            Fake {
                failing: None,
                ..Fake::ready_after(0)
            }
        }

        fn probes(&self) -> usize {
            self.probes.load(Ordering::SeqCst)
        }
    }

    struct NotAsked;

    impl Liveness for NotAsked {
        fn ask(&mut self) -> BoxFuture<'_, Result<()>> {
            Box::pin(async { bail!("the start sequence asks no liveness") })
        }
    }

    /// What the fake's read-back gives: a server at `endpoint`, nothing checked.
    fn reported(endpoint: Endpoint) -> Deployed {
        Deployed {
            endpoint,
            container: None,
            version: "fake 1.0".into(),
            variables: BTreeMap::new(),
            checks: Vec::new(),
            socket: None,
            cgroup: None,
            counters: Default::default(),
            pid: None,
            data_volume: None,
            dumps: None,
        }
    }

    impl Family for Fake {
        fn build_example(&self) -> &'static str {
            "fake-1"
        }

        fn config_block(&self) -> ConfigBlock {
            ConfigBlock {
                key: "fakecnf",
                file: "fake.conf",
                bare_flags: false,
                check_key: |_| Ok(()),
            }
        }

        fn container_port(&self) -> u16 {
            7000
        }

        fn user(&self) -> &'static str {
            "admin"
        }

        /// A config file (copied in when the launch copies files) and a directory.
        fn setup(&self, _: &Launch, _: &ConfigSpec, dir: &Path, port: u16) -> Result<Setup> {
            let file = dir.join("fake.conf");
            std::fs::write(&file, "answer = yes\n")?;
            Ok(Setup {
                args: vec![format!("--port={port}")],
                env: vec![("FAKE_MODE".into(), "test".into())],
                mounts: vec![
                    (file, "/etc/fake.conf".into()),
                    (dir.to_path_buf(), "/srv/fake".into()),
                ],
                ..Setup::default()
            })
        }

        fn readiness(&self) -> Readiness {
            self.readiness
        }

        fn probe<'a>(&'a self, _: &'a Endpoint) -> BoxFuture<'a, Result<()>> {
            let tried = self.probes.fetch_add(1, Ordering::SeqCst);
            let hangs = self.hangs;
            let ready = self.failing.is_some_and(|n| tried >= n);
            Box::pin(async move {
                if hangs {
                    std::future::pending::<()>().await;
                }
                match ready {
                    true => Ok(()),
                    false => bail!("connection refused"),
                }
            })
        }

        fn read_back<'a>(
            &'a self,
            endpoint: Endpoint,
            _: &'a ConfigSpec,
        ) -> BoxFuture<'a, Result<Deployed>> {
            Box::pin(async move {
                self.read_back.map_err(|e| anyhow::anyhow!(e))?;
                Ok(reported(endpoint))
            })
        }

        fn inspect(&self, _: &ConfigSpec, pid: u32, _: &mut Deployed) {
            self.inspected.lock().unwrap().push(pid);
        }

        /// Only the lines that say ERROR, as a family picks what explains a failed start.
        fn failed_start(&self, log: &str) -> String {
            let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR")).collect();
            format!("server log: {}", errors.join(" | "))
        }

        fn liveness<'a>(&'a self, _: &'a Endpoint) -> Box<dyn Liveness + 'a> {
            Box::new(NotAsked)
        }

        fn datadir(&self) -> Option<&'static str> {
            self.datadir
        }
    }

    fn launch<'a>() -> Launch<'a> {
        Launch {
            run_id: "run1",
            instance: "tok1",
            password: "secret",
            host_network: true,
            start_timeout: Duration::from_secs(5),
            cpuset: Some("1".into()),
            cpus: None,
            memory: None,
            copy_files: false,
            host_side: None,
            data_volume: None,
            counted: false,
        }
    }

    const LOG: &str = "starting\n[ERROR] unknown setting `answer`\nshutting down\n";

    async fn start_on(
        engine: &Scripted,
        family: &Fake,
        launch: &Launch<'_>,
        dir: &Path,
    ) -> Result<Deployed> {
        start(
            engine,
            family,
            launch,
            "rmatrix-run1-srv",
            "fake:1",
            &ConfigSpec::default(),
            dir,
        )
        .await
    }

    fn c(call: fn(String) -> Call) -> Call {
        call(CONTAINER.into())
    }

    /// The calls of a start whose container was removed after `polls` asks of its exit code.
    fn discarded_after(polls: usize) -> Vec<Call> {
        let mut calls = vec![Call::Start("rmatrix-run1-srv".into())];
        calls.extend((0..polls).map(|_| c(Call::ExitCode)));
        calls.extend([c(Call::Logs), c(Call::Remove)]);
        calls
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_ready_after_failed_probes_is_read_back_and_kept() {
        let tmp = tempfile::tempdir().unwrap();
        // No such process: no cgroup is read, and `inspect` is still given the pid.
        let pid = 4_000_000_000;
        let engine = Scripted::default().pid(pid);
        let family = Fake::ready_after(3);
        let began = tokio::time::Instant::now();
        let d = start_on(&engine, &family, &launch(), tmp.path())
            .await
            .unwrap();
        // One probe `every` second until the fourth answers; the exit code asked before each.
        assert_eq!(family.probes(), 4);
        assert_eq!(began.elapsed(), Duration::from_secs(3));
        let mut calls = vec![Call::Start("rmatrix-run1-srv".into())];
        calls.extend((0..4).map(|_| c(Call::ExitCode)));
        calls.push(c(Call::Pid));
        assert_eq!(engine.calls(), calls);
        assert_eq!(d.container.as_deref(), Some(CONTAINER));
        assert_eq!((d.version.as_str(), d.pid), ("fake 1.0", Some(pid)));
        assert!(d.cgroup.is_none());
        assert_eq!(*family.inspected.lock().unwrap(), [pid]);
        assert_eq!(
            (d.endpoint.host.as_str(), d.endpoint.user.as_str()),
            ("127.0.0.1", "admin")
        );
        assert_eq!(d.endpoint.password, "secret");
        // The container as the launch and the family describe it, on the endpoint's port.
        let specs = engine.specs();
        let [spec] = &specs[..] else {
            panic!("one container started")
        };
        assert_eq!(
            (spec.name.as_str(), spec.image.as_str()),
            ("rmatrix-run1-srv", "fake:1")
        );
        assert_eq!(
            (spec.run_id.as_str(), spec.instance.as_str()),
            ("run1", "tok1")
        );
        assert_eq!(spec.args, [format!("--port={}", d.endpoint.port)]);
        assert_eq!(spec.env, [("FAKE_MODE".to_string(), "test".to_string())]);
        assert!(spec.host_network && spec.publish.is_none());
        assert_eq!(spec.cpuset.as_deref(), Some("1"));
        assert!(!tmp.path().join("server.log").exists());
    }

    #[tokio::test(start_paused = true)]
    async fn a_bridge_network_publishes_the_container_port_on_the_endpoint() {
        let tmp = tempfile::tempdir().unwrap();
        let engine = Scripted::default();
        let bridge = Launch {
            host_network: false,
            ..launch()
        };
        let d = start_on(&engine, &Fake::ready_after(0), &bridge, tmp.path())
            .await
            .unwrap();
        let spec = &engine.specs()[0];
        assert!(!spec.host_network);
        assert_eq!(spec.publish, Some((7000, d.endpoint.port)));
        // No pid: nothing to inspect.
        assert_eq!(d.pid, None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_that_exits_while_awaited_fails_with_its_own_log_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let engine = Scripted::default().exits_after(2, 1).log(LOG);
        let family = Fake::never_ready();
        let e = start_on(&engine, &family, &launch(), tmp.path())
            .await
            .err()
            .expect("a failed start");
        // The family's lines of the log first, then why the start failed.
        assert_eq!(
            format!("{e:#}"),
            "server log: [ERROR] unknown setting `answer`: \
             server exited with code 1 before answering"
        );
        assert_eq!(family.probes(), 2);
        assert_eq!(engine.calls(), discarded_after(3));
        let kept = std::fs::read_to_string(tmp.path().join("server.log")).unwrap();
        assert_eq!(kept, LOG);
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_that_never_answers_fails_at_the_start_timeout_and_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let engine = Scripted::default().log(LOG);
        let family = Fake::never_ready();
        let began = tokio::time::Instant::now();
        let e = start_on(&engine, &family, &launch(), tmp.path())
            .await
            .err()
            .expect("a failed start");
        assert_eq!(
            format!("{e:#}"),
            "server log: [ERROR] unknown setting `answer`: \
             server did not answer within 5s (last error: connection refused)"
        );
        // Probes at 0..=6 s: the one after the timeout passed fails the start.
        assert_eq!(family.probes(), 7);
        assert_eq!(began.elapsed(), Duration::from_secs(6));
        assert_eq!(engine.calls(), discarded_after(7));
        assert!(tmp.path().join("server.log").exists());
    }

    #[tokio::test(start_paused = true)]
    async fn a_probe_that_hangs_is_cut_at_its_attempt_timeout() {
        let tmp = tempfile::tempdir().unwrap();
        let engine = Scripted::default();
        let family = Fake {
            hangs: true,
            ..Fake::never_ready()
        };
        let e = start_on(&engine, &family, &launch(), tmp.path())
            .await
            .err()
            .expect("a failed start");
        let e = format!("{e:#}");
        assert!(
            e.ends_with(
                "server did not answer within 5s (last error: connection attempt timed out)"
            ),
            "{e}"
        );
        // Tries end at 2, 5 and 8 s, one second apart.
        assert_eq!(family.probes(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_container_that_cannot_start_leaves_nothing_to_remove() {
        let tmp = tempfile::tempdir().unwrap();
        let engine = Scripted::default().start_fails("no such image: fake:1");
        let family = Fake::ready_after(0);
        let e = start_on(&engine, &family, &launch(), tmp.path())
            .await
            .err()
            .expect("a failed start");
        assert_eq!(format!("{e:#}"), "no such image: fake:1");
        assert_eq!(engine.calls(), [Call::Start("rmatrix-run1-srv".into())]);
        assert_eq!(family.probes(), 0);
        assert!(!tmp.path().join("server.log").exists());
    }

    /// Whatever fails once the container runs (the engine, the pid, the read-back), the
    /// container is removed and the error carries the family's lines of its log.
    #[tokio::test(start_paused = true)]
    async fn every_failure_after_the_container_started_removes_it() {
        let engine_gone = || Scripted::default().exit_code_fails("engine gone");
        let no_pid = || Scripted::default().pid_fails("inspect failed");
        let unremovable = || Scripted::default().exits_after(0, 137).remove_fails("busy");
        let plain = Scripted::default;
        let refused = Fake {
            read_back: Err("access denied"),
            ..Fake::ready_after(0)
        };
        let cases: [(Scripted, Fake, &str, Vec<Call>); 4] = [
            (
                engine_gone().log(LOG),
                Fake::ready_after(0),
                "engine gone",
                discarded_after(1),
            ),
            (no_pid().log(LOG), Fake::ready_after(0), "inspect failed", {
                let mut calls = discarded_after(1);
                calls.insert(2, c(Call::Pid));
                calls
            }),
            (plain().log(LOG), refused, "access denied", {
                let mut calls = discarded_after(1);
                calls.insert(2, c(Call::Pid));
                calls
            }),
            // A removal that fails does not hide why the start failed.
            (
                unremovable().log(LOG),
                Fake::never_ready(),
                "server exited with code 137 before answering",
                discarded_after(1),
            ),
        ];
        for (engine, family, why, calls) in cases {
            let tmp = tempfile::tempdir().unwrap();
            let e = start_on(&engine, &family, &launch(), tmp.path())
                .await
                .err()
                .expect("a failed start");
            let expected = format!("server log: [ERROR] unknown setting `answer`: {why}");
            assert_eq!(format!("{e:#}"), expected);
            assert_eq!(engine.calls(), calls, "{why}");
            assert!(tmp.path().join("server.log").exists(), "{why}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_kept_data_set_is_mounted_at_the_family_datadir_only() {
        let on_set = &Launch {
            data_volume: Some("rmatrix-dataset-1".into()),
            ..launch()
        };
        let volumes = |datadir| async move {
            let tmp = tempfile::tempdir().unwrap();
            let engine = Scripted::default();
            let family = Fake {
                datadir,
                ..Fake::ready_after(0)
            };
            start_on(&engine, &family, on_set, tmp.path())
                .await
                .unwrap();
            engine.specs()[0].volumes.clone()
        };
        let mounted = [("rmatrix-dataset-1".to_string(), "/var/lib/fake".to_string())];
        assert_eq!(volumes(Some("/var/lib/fake")).await, mounted);
        assert!(volumes(None).await.is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn files_are_copied_in_when_the_engine_may_be_elsewhere() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap();
        let started = |copy_files| {
            let dir = dir.clone();
            async move {
                let engine = Scripted::default();
                let launch = Launch {
                    copy_files,
                    ..launch()
                };
                start_on(&engine, &Fake::ready_after(0), &launch, &dir)
                    .await
                    .unwrap();
                engine.specs().remove(0)
            }
        };
        let bound = started(false).await;
        assert!(bound.files.is_empty());
        assert_eq!(bound.mounts.len(), 2);
        // The file goes in through the engine; a directory cannot, and stays a mount.
        let copied = started(true).await;
        let file = ("/etc/fake.conf".to_string(), b"answer = yes\n".to_vec());
        assert_eq!(copied.files, [file]);
        assert_eq!(copied.mounts, [(dir, "/srv/fake".to_string())]);
    }

    /// A host side that picks port 4321 and reads the server back itself.
    struct Remote {
        awaited: Mutex<Vec<(String, u16, Option<u32>)>>,
        ready: Result<(), &'static str>,
    }

    impl HostSide for Remote {
        fn free_port(&self) -> BoxFuture<'_, Result<u16>> {
            Box::pin(async { Ok(4321) })
        }

        fn await_ready<'a>(
            &'a self,
            container: &'a str,
            endpoint: &'a Endpoint,
            pid: Option<u32>,
        ) -> BoxFuture<'a, Result<Deployed>> {
            Box::pin(async move {
                let seen = (container.to_string(), endpoint.port, pid);
                self.awaited.lock().unwrap().push(seen);
                self.ready.map_err(|e| anyhow::anyhow!(e))?;
                Ok(reported(endpoint.clone()))
            })
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_behind_its_engines_host_is_awaited_there() {
        for ready in [Ok(()), Err("no answer on the engine's host")] {
            let tmp = tempfile::tempdir().unwrap();
            let engine = Scripted::default().pid(77).log(LOG);
            let family = Fake::ready_after(0);
            let remote = Remote {
                awaited: Mutex::new(Vec::new()),
                ready,
            };
            let there = Launch {
                host_side: Some(&remote),
                ..launch()
            };
            let started = start_on(&engine, &family, &there, tmp.path()).await;
            // Port and wait are the engine host's: this process neither probes nor polls.
            assert_eq!(family.probes(), 0);
            let awaited = remote.awaited.lock().unwrap().clone();
            assert_eq!(awaited, [(CONTAINER.to_string(), 4321, Some(77))]);
            assert_eq!(engine.specs()[0].args, ["--port=4321"]);
            let mut calls = vec![Call::Start("rmatrix-run1-srv".into()), c(Call::Pid)];
            match started {
                Ok(d) => assert_eq!(d.container.as_deref(), Some(CONTAINER)),
                Err(e) => {
                    let e = format!("{e:#}");
                    assert!(e.ends_with("no answer on the engine's host"), "{e}");
                    calls.extend([c(Call::Logs), c(Call::Remove)]);
                }
            }
            assert_eq!(engine.calls(), calls);
        }
    }

    #[tokio::test]
    async fn a_teardown_keeps_the_log_and_removes_container_sockets_and_data() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join(SOCKET_DIR)).unwrap();
        let engine = Scripted::default().log(LOG);
        let mut d = reported(launch().endpoint(1, "admin"));
        d.container = Some(CONTAINER.into());
        d.data_volume = Some("rmatrix-run1-srv-data".into());
        crate::servers::teardown(Some(&engine), &d, tmp.path())
            .await
            .unwrap();
        let calls = [
            c(Call::Logs),
            c(Call::Remove),
            Call::RemoveVolume("rmatrix-run1-srv-data".into()),
        ];
        assert_eq!(engine.calls(), calls);
        let kept = std::fs::read_to_string(tmp.path().join("server.log")).unwrap();
        assert_eq!(kept, LOG);
        assert!(!tmp.path().join(SOCKET_DIR).exists());
        // A server rmatrix did not start (an external one) is left alone.
        let engine = Scripted::default();
        d.container = None;
        crate::servers::teardown(Some(&engine), &d, tmp.path())
            .await
            .unwrap();
        assert!(engine.calls().is_empty());
        // A failed removal fails the teardown, and its volume is kept.
        let engine = Scripted::default().remove_fails("busy");
        d.container = Some(CONTAINER.into());
        let e = crate::servers::teardown(Some(&engine), &d, tmp.path()).await;
        assert_eq!(format!("{:#}", e.unwrap_err()), "busy");
        assert_eq!(engine.calls(), [c(Call::Logs), c(Call::Remove)]);
    }
}
