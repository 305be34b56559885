//! A server ready for load, whatever its kind: where to connect and what it reported.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use anyhow::{anyhow, Result};

use super::check::Check;
use super::engines::ContainerSpec;
use super::spec::ExternalSpec;
use crate::measure::cgroup::Cgroup;
use crate::measure::server_seconds::CounterSlot;

/// Where clients connect. The password is never printed or written to results.
#[derive(Clone)]
pub struct Endpoint {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) user: String,
    pub(crate) password: String,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}:{}", self.user, self.host, self.port)
    }
}

impl Endpoint {
    /// Where an external server listens, with the password read from its environment variable.
    pub(crate) fn external(ext: &ExternalSpec) -> Result<Endpoint> {
        let password = match &ext.password_env {
            Some(var) => std::env::var(var)
                .map_err(|_| anyhow!("environment variable {var} (password_env) is not set"))?,
            None => String::new(),
        };
        Ok(Endpoint {
            host: ext.host.clone(),
            port: ext.port,
            user: ext.user.clone(),
            password,
        })
    }
}

/// Tries at an external server before its deployment fails, the pause between them, and the
/// most each try may take: a closed port fails in about 4 s, a host that never answers in at
/// most 29 s.
pub(crate) const EXTERNAL_ATTEMPTS: u32 = 5;
pub(crate) const EXTERNAL_RETRY_PAUSE: Duration = Duration::from_secs(1);
pub(crate) const EXTERNAL_ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);

/// Attach to an external server, retrying what may pass (a refused or reset connection, no
/// answer in time) up to `EXTERNAL_ATTEMPTS` times; an answer that refuses (a wrong
/// password, a missing privilege) fails at once, since trying again cannot change it.
pub(crate) async fn attach_retrying<T, F, Fut>(endpoint: &Endpoint, mut attempt: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let mut last = anyhow!("no attempt made");
    for n in 1..=EXTERNAL_ATTEMPTS {
        match tokio::time::timeout(EXTERNAL_ATTEMPT_TIMEOUT, attempt()).await {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(e)) if !unreachable(&e) => {
                return Err(e.context(format!(
                    "external server {endpoint:?} refused (not retried: it answered)"
                )))
            }
            Ok(Err(e)) => last = e,
            Err(_) => last = anyhow!("no answer within {} s", EXTERNAL_ATTEMPT_TIMEOUT.as_secs()),
        }
        if n < EXTERNAL_ATTEMPTS {
            tokio::time::sleep(EXTERNAL_RETRY_PAUSE).await;
        }
    }
    Err(last.context(format!(
        "external server {endpoint:?} unreachable after {EXTERNAL_ATTEMPTS} attempts {} s apart",
        EXTERNAL_RETRY_PAUSE.as_secs()
    )))
}

/// A failure to reach the server at all (an I/O error somewhere in the chain), as opposed to
/// an answer from it.
fn unreachable(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<std::io::Error>())
}

/// A server ready for load.
pub struct Deployed {
    pub endpoint: Endpoint,
    /// None for an external server (nothing to stop).
    pub(crate) container: Option<String>,
    pub version: String,
    pub variables: BTreeMap<String, String>,
    pub(crate) checks: Vec<Check>,
    /// The server's unix socket on this host, where it has one (a container on the host
    /// network, `family::socket_dir`).
    pub(crate) socket: Option<std::path::PathBuf>,
    /// The container's cgroup, where its usage can be read (not for an external server).
    pub cgroup: Option<Cgroup>,
    /// The connection that reads its counters once a second, kept across iterations.
    pub(crate) counters: CounterSlot,
    /// The server's main process as this host sees it (a container rmatrix started here).
    pub(crate) pid: Option<u32>,
    /// The volume its datadir is (a copy of a kept data set), removed with the container.
    pub(crate) data_volume: Option<String>,
    /// Where its callgrind dumps land on this host (a counted server, `servers::images::counted`).
    pub(crate) dumps: Option<std::path::PathBuf>,
}

impl Deployed {
    /// Why the variant did not take effect, if it did not.
    pub(crate) fn mismatch(&self) -> Option<String> {
        let bad: Vec<String> = self
            .checks
            .iter()
            .filter(|c| c.status == "mismatch")
            .map(|c| {
                format!(
                    "{}: expected {}, server reports {}",
                    c.variable,
                    c.expected,
                    c.actual.as_deref().unwrap_or("nothing")
                )
            })
            .collect();
        (!bad.is_empty()).then(|| format!("config did not take effect: {}", bad.join("; ")))
    }
}

/// How a server's container is started for this run (on the engine given beside it:
/// `family::start`).
pub struct Launch<'a> {
    pub run_id: &'a str,
    /// The run directory's token, labelled on every container (see `docker::INSTANCE_LABEL`).
    pub instance: &'a str,
    pub password: &'a str,
    pub host_network: bool,
    pub start_timeout: Duration,
    /// The server's `cpuset` (host CPUs its container may use).
    pub cpuset: Option<String>,
    /// The server's `cpus` (its CPU quota).
    pub cpus: Option<f64>,
    /// The server's `memory` limit in bytes.
    pub memory: Option<u64>,
    /// Copy the config files in through the API instead of bind-mounting them: the engine
    /// may be on another host, where this run directory's paths do not exist.
    pub copy_files: bool,
    /// Set when the server's port is reachable only from its engine's host.
    pub host_side: Option<&'a dyn HostSide>,
    /// The volume mounted at the family's datadir (a copy of a kept data set,
    /// `servers::dataset`); None: the image's own, empty one.
    pub data_volume: Option<String>,
    /// Run the server under callgrind (`counted: callgrind`): its dumps go to a folder of
    /// the deployment's directory.
    pub counted: bool,
}

impl Launch<'_> {
    /// The parts of a server's container every kind shares: name, image, this run's label and
    /// the network (host, or `container_port` published on 127.0.0.1:`port`). Callers add
    /// args, environment and mounts.
    pub(crate) fn container(
        &self,
        name: &str,
        image: &str,
        container_port: u16,
        port: u16,
    ) -> ContainerSpec {
        ContainerSpec {
            name: name.to_string(),
            image: image.to_string(),
            args: Vec::new(),
            env: Vec::new(),
            mounts: Vec::new(),
            writable: Vec::new(),
            run_id: self.run_id.to_string(),
            instance: self.instance.to_string(),
            host_network: self.host_network,
            publish: (!self.host_network).then_some((container_port, port)),
            cpuset: self.cpuset.clone(),
            cpus: self.cpus,
            memory: self.memory,
            ..ContainerSpec::default()
        }
    }

    /// Where a container started by this launch listens.
    pub(crate) fn endpoint(&self, port: u16, user: &str) -> Endpoint {
        Endpoint {
            host: "127.0.0.1".into(),
            port,
            user: user.into(),
            password: self.password.into(),
        }
    }
}

/// A boxed future: a family is picked at run time (`ServerKind::family`, the registry).
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where a server's port is reachable only from its engine's host (an engine on another
/// machine): the port is picked, and the waiting and read-back done, there (in an rmatrix
/// container with host networking), not in this process. Implemented by the client side
/// (`drive::OnEngineHost`), which runs those containers.
pub trait HostSide: Sync {
    /// A free port on the engine's host.
    fn free_port(&self) -> BoxFuture<'_, Result<u16>>;

    /// Wait until the server of `container` (main process `pid` on the engine's host)
    /// answers at `endpoint`, then read back what it runs with, on the engine's host; fail
    /// early when the container exits.
    fn await_ready<'a>(
        &'a self,
        container: &'a str,
        endpoint: &'a Endpoint,
        pid: Option<u32>,
    ) -> BoxFuture<'a, Result<Deployed>>;
}
