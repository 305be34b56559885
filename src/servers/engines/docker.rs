//! The Docker engine through bollard: the only module that speaks the Docker API.
//! Every container rmatrix starts carries the `rmatrix` label so it can always be found and
//! removed, also after a crash.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use bollard::models::{ContainerCreateBody, HostConfig, PortBinding};
use bollard::query_parameters::{
    BuildImageOptionsBuilder, CreateContainerOptionsBuilder, CreateImageOptionsBuilder,
    ListContainersOptionsBuilder, LogsOptionsBuilder, RemoveContainerOptionsBuilder,
};
use bollard::Docker;

use super::address::{EngineAddr, Transport};
use super::containers::{ContainerSpec, Containers};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};

/// Label on every rmatrix container; its value is the run id.
pub(crate) const LABEL: &str = "rmatrix.run";
/// Label on a kept data set's volume (`servers::dataset`); its value is the set's key.
pub(crate) const DATASET_LABEL: &str = "rmatrix.dataset";
/// A random token per run directory (kept across `--resume`): two runs whose folders share a
/// name (the run id) still never touch each other's containers.
pub(crate) const INSTANCE_LABEL: &str = "rmatrix.instance";

/// Marks a failure to reach the Docker engine (exit code 3).
#[derive(Debug)]
pub(crate) struct EngineUnavailable(pub String);

impl std::fmt::Display for EngineUnavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Docker engine unavailable: {}\nhint: run containers/setup-docker.sh (installs and starts dockerd when none runs)", self.0)
    }
}

impl crate::error::Kinded for EngineUnavailable {
    fn kind(&self) -> crate::error::ErrorKind {
        crate::error::ErrorKind::NoDocker
    }
}

crate::error::kinded!(EngineUnavailable);

/// Seconds bollard allows one request (a cell's client container is waited on in steps).
const TIMEOUT_S: u64 = 120;
/// How long connecting (version negotiation and a ping) may take.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Clone)]
pub struct Engine {
    docker: Docker,
    /// The engine's name in the pool ("local" for the default one).
    name: String,
    /// For an ssh:// engine: the socket whose ssh processes carry the API (kept alive as
    /// long as the engine is).
    _tunnel: Option<super::ssh::SshTunnel>,
}

/// An engine's host, from Docker's /info: what the manifest records per engine.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct HostFacts {
    pub(crate) name: String,
    pub(crate) cpus: i64,
    pub(crate) memory_bytes: i64,
    pub(crate) kernel: String,
    pub(crate) os: String,
    pub(crate) server_version: String,
    pub(crate) api_version: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct EngineInfo {
    pub(crate) version: String,
    pub(crate) api_version: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ImageInfo {
    pub reference: String,
    pub(crate) id: String,
    /// `pulled`, `present`, `built` or `cached` (built earlier from the same content).
    pub(crate) origin: String,
    /// The registry digest (`name@sha256:...`), for an image that came from a registry.
    pub(crate) digest: Option<String>,
}

impl Engine {
    /// The engine the Docker CLI would use here (`DOCKER_HOST`, a context, the default
    /// socket).
    pub async fn connect() -> Result<Engine> {
        let addr =
            super::address::from_env(&super::address::Env::current()).map_err(EngineUnavailable)?;
        Engine::connect_to(&addr).await
    }

    /// Connect and negotiate the API version down to the engine's (Debian's docker.io 20.10
    /// speaks 1.41 at most), whatever the transport.
    pub(crate) async fn connect_to(addr: &EngineAddr) -> Result<Engine> {
        use crate::escape::terminal;
        use bollard::API_DEFAULT_VERSION as V;
        // The name and address are the user's (`--engine`, a hosts file, DOCKER_HOST).
        let unavailable = |e: String| {
            EngineUnavailable(format!(
                "engine {} ({}): {}",
                terminal(&addr.name),
                terminal(&addr.url()),
                terminal(&e)
            ))
        };
        let tunnel = match &addr.transport {
            Transport::Ssh(a) => {
                Some(super::ssh::SshTunnel::start(a).map_err(|e| unavailable(format!("{e:#}")))?)
            }
            _ => None,
        };
        // What ssh said, where it said anything: the reason an ssh:// engine did not answer.
        let why = |e: String| match tunnel.as_ref().map(|t| t.last_error()) {
            Some(ssh) if !ssh.is_empty() => unavailable(format!("{e} (ssh: {ssh})")),
            _ => unavailable(e),
        };
        let docker = match &addr.transport {
            Transport::Unix(p) => Docker::connect_with_unix(&p.display().to_string(), TIMEOUT_S, V),
            Transport::Tcp {
                authority,
                tls: None,
            } => Docker::connect_with_http(&format!("tcp://{authority}"), TIMEOUT_S, V),
            Transport::Tcp {
                authority,
                tls: Some(t),
            } => Docker::connect_with_ssl(
                &format!("tcp://{authority}"),
                &t.key(),
                &t.cert(),
                &t.ca(),
                TIMEOUT_S,
                V,
            ),
            Transport::Ssh(_) => {
                let path = tunnel.as_ref().expect("invariant: ssh has a tunnel").path();
                Docker::connect_with_unix(&path.display().to_string(), TIMEOUT_S, V)
            }
        }
        .map_err(|e| why(e.to_string()))?;
        // An address that never answers must not hang the run for bollard's 2 minutes.
        let docker = tokio::time::timeout(CONNECT_TIMEOUT, async {
            let d = docker.negotiate_version().await?;
            d.ping().await?;
            Ok::<_, bollard::errors::Error>(d)
        })
        .await
        .map_err(|_| why(format!("no answer within {} s", CONNECT_TIMEOUT.as_secs())))?
        .map_err(|e| why(e.to_string()))?;
        Ok(Engine {
            docker,
            name: addr.name.clone(),
            _tunnel: tunnel,
        })
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Does the engine still answer (a short ping)?
    pub(crate) async fn alive(&self) -> bool {
        matches!(
            tokio::time::timeout(CONNECT_TIMEOUT, self.docker.ping()).await,
            Ok(Ok(_))
        )
    }

    /// The engine's host as Docker's /info describes it.
    pub(crate) async fn host_facts(&self) -> Result<HostFacts> {
        let i = self.docker.info().await?;
        Ok(HostFacts {
            name: i.name.unwrap_or_default(),
            cpus: i.ncpu.unwrap_or(0),
            memory_bytes: i.mem_total.unwrap_or(0),
            kernel: i.kernel_version.unwrap_or_default(),
            os: i.operating_system.unwrap_or_default(),
            server_version: i.server_version.unwrap_or_default(),
            api_version: self.docker.client_version().to_string(),
        })
    }

    pub(crate) async fn info(&self) -> Result<EngineInfo> {
        let v = self.docker.version().await?;
        Ok(EngineInfo {
            version: v.version.unwrap_or_default(),
            api_version: self.docker.client_version().to_string(),
        })
    }

    /// The first registry digest of an image (none for one built here).
    async fn digest(&self, reference: &str) -> Option<String> {
        self.docker
            .inspect_image(reference)
            .await
            .ok()
            .and_then(|i| i.repo_digests)
            .and_then(|d| d.into_iter().next())
    }

    pub(crate) async fn image_id(&self, reference: &str) -> Option<String> {
        self.docker
            .inspect_image(reference)
            .await
            .ok()
            .and_then(|i| i.id)
    }

    /// Use a public image, pulling it when it is not present.
    pub(crate) async fn ensure_pulled(&self, reference: &str) -> Result<ImageInfo> {
        if let Some(id) = self.image_id(reference).await {
            return Ok(ImageInfo {
                reference: reference.into(),
                id,
                origin: "present".into(),
                digest: self.digest(reference).await,
            });
        }
        let (name, tag) = match reference.rsplit_once(':') {
            Some((n, t)) if !t.contains('/') => (n, t),
            _ => (reference, "latest"),
        };
        let opts = CreateImageOptionsBuilder::default()
            .from_image(name)
            .tag(tag)
            .build();
        let mut stream = self.docker.create_image(Some(opts), None, None);
        while let Some(msg) = stream.next().await {
            msg.map_err(|e| anyhow!("failed to pull image `{reference}`: {e}\nhint: check the name, or build it from a directory under containers/ with `build:`"))?;
        }
        let id = self
            .image_id(reference)
            .await
            .ok_or_else(|| anyhow!("image `{reference}` missing after pull"))?;
        Ok(ImageInfo {
            reference: reference.into(),
            id,
            origin: "pulled".into(),
            digest: self.digest(reference).await,
        })
    }

    /// Build the context `tar` as the image `reference` (`from`: where the context came
    /// from, for messages).
    pub(crate) async fn build_tar(
        &self,
        reference: &str,
        tar: Vec<u8>,
        args: &BTreeMap<String, String>,
        from: &str,
    ) -> Result<ImageInfo> {
        let opts = BuildImageOptionsBuilder::default()
            .dockerfile("Dockerfile")
            .t(reference)
            .rm(true)
            .forcerm(true)
            .networkmode("host")
            .buildargs(&args.iter().collect::<HashMap<_, _>>())
            .build();
        let mut stream = self
            .docker
            .build_image(opts, None, Some(bollard::body_full(tar.into())));
        let mut output = Vec::<String>::new();
        while let Some(msg) = stream.next().await {
            match msg {
                Ok(info) => {
                    if let Some(s) = info.stream {
                        output.push(s);
                    }
                    if let Some(err) = info.error_detail.and_then(|d| d.message) {
                        bail!(
                            "failed to build {} from {}: {err}\n{}",
                            reference,
                            from,
                            tail(&output.concat(), 15)
                        );
                    }
                }
                Err(e) => bail!(
                    "failed to build {} from {}: {e}\n{}",
                    reference,
                    from,
                    tail(&output.concat(), 15)
                ),
            }
        }
        let id = self
            .image_id(reference)
            .await
            .ok_or_else(|| anyhow!("image {reference} missing after build"))?;
        Ok(ImageInfo {
            reference: reference.to_string(),
            id,
            origin: "built".into(),
            digest: None,
        })
    }

    /// Copy files into a created container (one tar at `/`).
    async fn upload(&self, id: &str, files: &[(String, Vec<u8>)]) -> Result<()> {
        let mut builder = tar::Builder::new(Vec::new());
        for (path, data) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder.append_data(&mut header, path.trim_start_matches('/'), data.as_slice())?;
        }
        self.upload_tar(id, builder.into_inner()?).await
    }

    /// Unpack `tar` at `/` of a created container.
    async fn upload_tar(&self, id: &str, tar: Vec<u8>) -> Result<()> {
        let opts = bollard::query_parameters::UploadToContainerOptionsBuilder::default()
            .path("/")
            .build();
        self.docker
            .upload_to_container(id, Some(opts), bollard::body_full(tar.into()))
            .await?;
        Ok(())
    }

    /// `path` of a container as a tar (its last part is the archive's top folder).
    pub(crate) async fn download(&self, id: &str, path: &str) -> Result<Vec<u8>> {
        let opts = bollard::query_parameters::DownloadFromContainerOptionsBuilder::default()
            .path(path)
            .build();
        let mut stream = self.docker.download_from_container(id, Some(opts));
        let mut out = Vec::new();
        while let Some(chunk) = stream.next().await {
            out.extend_from_slice(&chunk.with_context(|| format!("failed to copy {path}"))?);
        }
        Ok(out)
    }

    /// Wait until the container exits; its exit code.
    pub(crate) async fn wait(&self, id: &str) -> Result<i64> {
        let mut stream = self.docker.wait_container(id, None);
        match stream.next().await {
            Some(Ok(r)) => Ok(r.status_code),
            // bollard reports a non-zero exit as this error.
            Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => Ok(code),
            Some(Err(e)) => Err(e.into()),
            None => Ok(self.exit_code(id).await?.unwrap_or(-1)),
        }
    }

    /// What the container wrote to its standard output only.
    pub(crate) async fn stdout(&self, id: &str) -> Result<Vec<u8>> {
        let opts = LogsOptionsBuilder::default()
            .stdout(true)
            .stderr(false)
            .build();
        let mut stream = self.docker.logs(id, Some(opts));
        let mut out = Vec::new();
        while let Some(chunk) = stream.next().await {
            out.extend_from_slice(&chunk?.into_bytes());
        }
        Ok(out)
    }

    /// Stop a container's main process with SIGTERM, waiting up to `grace` for it to exit
    /// (a server's clean shutdown) before Docker kills it.
    pub(crate) async fn stop(&self, id: &str, grace: std::time::Duration) -> Result<()> {
        let opts = bollard::query_parameters::StopContainerOptionsBuilder::default()
            .t(i32::try_from(grace.as_secs()).unwrap_or(i32::MAX))
            .build();
        self.docker
            .stop_container(id, Some(opts))
            .await
            .with_context(|| format!("failed to stop container {id}"))
    }

    /// Create a named volume with `labels`.
    pub(crate) async fn create_volume(&self, name: &str, labels: &[(&str, &str)]) -> Result<()> {
        let labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let req = bollard::models::VolumeCreateRequest {
            name: Some(name.to_string()),
            labels: Some(labels),
            ..Default::default()
        };
        self.docker
            .create_volume(req)
            .await
            .with_context(|| format!("failed to create volume {name}"))?;
        Ok(())
    }

    /// A volume's labels, None when there is no such volume.
    pub(crate) async fn volume(&self, name: &str) -> Result<Option<HashMap<String, String>>> {
        use bollard::errors::Error::DockerResponseServerError as Server;
        match self.docker.inspect_volume(name).await {
            Ok(v) => Ok(Some(v.labels)),
            Err(Server {
                status_code: 404, ..
            }) => Ok(None),
            Err(e) => Err(e).with_context(|| format!("failed to inspect volume {name}")),
        }
    }

    /// The tags of repository `repo` (`rmatrix/client`) on this engine, as `repo:tag`.
    pub(crate) async fn tags_of(&self, repo: &str) -> Result<Vec<String>> {
        let filters = HashMap::from([("reference".to_string(), vec![format!("{repo}:*")])]);
        let opts = bollard::query_parameters::ListImagesOptions {
            filters: Some(filters),
            ..Default::default()
        };
        let images = self.docker.list_images(Some(opts)).await?;
        let prefix = format!("{repo}:");
        Ok((images.into_iter().flat_map(|i| i.repo_tags))
            .filter(|t| t.starts_with(&prefix))
            .collect())
    }

    /// Remove the tag `reference` (and its image when no other tag names it). An image a
    /// container still uses is refused by the engine: that error is returned.
    pub(crate) async fn remove_image(&self, reference: &str) -> Result<()> {
        self.docker
            .remove_image(
                reference,
                None::<bollard::query_parameters::RemoveImageOptions>,
                None,
            )
            .await
            .with_context(|| format!("failed to remove image {reference}"))?;
        Ok(())
    }

    /// The names of the volumes carrying `label` (`key` or `key=value`), with their labels.
    pub(crate) async fn volumes_labelled(
        &self,
        label: &str,
    ) -> Result<Vec<(String, HashMap<String, String>)>> {
        let filters = HashMap::from([("label".to_string(), vec![label.to_string()])]);
        let opts = bollard::query_parameters::ListVolumesOptions {
            filters: Some(filters),
        };
        let list = self.docker.list_volumes(Some(opts)).await?;
        Ok(list
            .volumes
            .unwrap_or_default()
            .into_iter()
            .map(|v| (v.name, v.labels))
            .collect())
    }

    /// Remove the containers of one run directory, then its volumes (a deployment's copy
    /// of a data set): by its instance token, or by run id for a run made before tokens
    /// existed. Returns how many containers.
    pub(crate) async fn remove_run(&self, run_id: &str, instance: &str) -> Result<usize> {
        let label = match instance.is_empty() {
            true => format!("{LABEL}={run_id}"),
            false => format!("{INSTANCE_LABEL}={instance}"),
        };
        let n = self.remove_labelled(&label).await?;
        for (volume, _) in self.volumes_labelled(&label).await? {
            self.remove_volume(&volume).await?;
        }
        Ok(n)
    }

    /// How many rmatrix runs other than the one with instance token `instance` have
    /// containers running on this engine (runs told apart by their tokens).
    pub(crate) async fn other_runs(&self, instance: &str) -> Result<u32> {
        let filters = HashMap::from([("label", vec![LABEL]), ("status", vec!["running"])]);
        let opts = ListContainersOptionsBuilder::default()
            .filters(&filters)
            .build();
        let list = self.docker.list_containers(Some(opts)).await?;
        let tokens: std::collections::BTreeSet<String> = list
            .into_iter()
            .filter_map(|c| c.labels?.get(INSTANCE_LABEL).cloned())
            .filter(|t| t != instance)
            .collect();
        Ok(tokens.len() as u32)
    }

    /// Remove every rmatrix container of every run, and their volumes (`rmatrix clean`).
    /// Returns how many containers.
    pub(crate) async fn remove_all(&self) -> Result<usize> {
        let n = self.remove_labelled(LABEL).await?;
        for (volume, _) in self.volumes_labelled(LABEL).await? {
            self.remove_volume(&volume).await?;
        }
        Ok(n)
    }

    async fn remove_labelled(&self, label: &str) -> Result<usize> {
        let filters = HashMap::from([("label", vec![label])]);
        let opts = ListContainersOptionsBuilder::default()
            .all(true)
            .filters(&filters)
            .build();
        let list = self.docker.list_containers(Some(opts)).await?;
        let mut n = 0;
        for c in list {
            if let Some(id) = c.id {
                self.remove(&id).await?;
                n += 1;
            }
        }
        Ok(n)
    }
}

/// Docker's containers through bollard.
impl Containers for Engine {
    /// Create and start a container; returns its id.
    async fn start(&self, spec: &ContainerSpec) -> Result<String> {
        let mut host = HostConfig {
            binds: Some(
                spec.mounts
                    .iter()
                    .map(|(h, c)| format!("{}:{}:ro", h.display(), c))
                    .chain(
                        spec.writable
                            .iter()
                            .map(|(h, c)| format!("{}:{}", h.display(), c)),
                    )
                    .chain(spec.volumes.iter().map(|(v, c)| format!("{v}:{c}")))
                    .collect(),
            ),
            cpuset_cpus: spec.cpuset.clone(),
            nano_cpus: spec.cpus.map(|c| (c * 1e9).round() as i64),
            memory: spec.memory.and_then(|b| i64::try_from(b).ok()),
            memory_swap: spec.memory.and_then(|b| i64::try_from(b).ok()),
            pid_mode: spec.pid_host.then(|| "host".to_string()),
            cap_add: (!spec.cap_add.is_empty()).then(|| spec.cap_add.clone()),
            ..Default::default()
        };
        let mut exposed = None;
        if spec.host_network {
            host.network_mode = Some("host".into());
        } else if let Some((cport, hport)) = spec.publish {
            let key = format!("{cport}/tcp");
            host.port_bindings = Some(HashMap::from([(
                key.clone(),
                Some(vec![PortBinding {
                    host_ip: Some("127.0.0.1".into()),
                    host_port: Some(hport.to_string()),
                }]),
            )]));
            exposed = Some(vec![key]);
        }
        let body = ContainerCreateBody {
            image: Some(spec.image.clone()),
            cmd: Some(spec.args.clone()),
            entrypoint: spec.entrypoint.clone(),
            env: Some(spec.env.iter().map(|(k, v)| format!("{k}={v}")).collect()),
            labels: Some(HashMap::from([
                (LABEL.to_string(), spec.run_id.clone()),
                (INSTANCE_LABEL.to_string(), spec.instance.clone()),
            ])),
            exposed_ports: exposed,
            host_config: Some(host),
            ..Default::default()
        };
        let opts = CreateContainerOptionsBuilder::default()
            .name(&spec.name)
            .build();
        let created = self
            .docker
            .create_container(Some(opts), body)
            .await
            .with_context(|| {
                format!(
                    "failed to create container {} from {}",
                    spec.name, spec.image
                )
            })?;
        if let Some(tar) = &spec.archive {
            if let Err(e) = self.upload_tar(&created.id, tar.clone()).await {
                let _ = self.remove(&created.id).await;
                return Err(e.context(format!("failed to copy files into {}", spec.name)));
            }
        }
        if !spec.files.is_empty() {
            if let Err(e) = self.upload(&created.id, &spec.files).await {
                let _ = self.remove(&created.id).await;
                return Err(e.context(format!("failed to copy files into {}", spec.name)));
            }
        }
        if let Err(e) = self.docker.start_container(&created.id, None).await {
            let _ = self.remove(&created.id).await;
            return Err(e).with_context(|| format!("failed to start container {}", spec.name));
        }
        Ok(created.id)
    }

    /// The container's main process as this host sees it (for its cgroup).
    async fn pid(&self, id: &str) -> Result<Option<u32>> {
        let info = self.docker.inspect_container(id, None).await?;
        let pid = info.state.and_then(|s| s.pid).unwrap_or(0);
        Ok(u32::try_from(pid).ok().filter(|p| *p > 0))
    }

    /// Whether the kernel killed the container for lack of memory (its `OOMKilled` state).
    /// Asked when a cell failed: the client may see the connection reset before Docker has
    /// seen the container exit, so a running one is asked again for up to a second.
    async fn oom_killed(&self, id: &str) -> Result<bool> {
        for _ in 0..10 {
            let state = self.docker.inspect_container(id, None).await?.state;
            let state = state.unwrap_or_default();
            if state.oom_killed == Some(true) {
                return Ok(true);
            }
            if state.running != Some(true) {
                return Ok(false);
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        Ok(false)
    }

    async fn exit_code(&self, id: &str) -> Result<Option<i64>> {
        let info = self.docker.inspect_container(id, None).await?;
        let state = info.state.unwrap_or_default();
        if state.running.unwrap_or(false) {
            Ok(None)
        } else {
            Ok(Some(state.exit_code.unwrap_or(-1)))
        }
    }

    /// The container's stdout and stderr (where the server writes its log).
    async fn logs(&self, id: &str) -> String {
        let opts = LogsOptionsBuilder::default()
            .stdout(true)
            .stderr(true)
            .build();
        let mut stream = self.docker.logs(id, Some(opts));
        let mut out = String::new();
        while let Some(Ok(chunk)) = stream.next().await {
            out.push_str(&chunk.to_string());
        }
        out
    }

    /// Remove a container, stopping it first. One already gone counts as removed; one whose
    /// removal another request started (a killed attempt's, Docker answers 409) is waited for.
    async fn remove(&self, id: &str) -> Result<()> {
        use bollard::errors::Error::DockerResponseServerError as Server;
        let opts = RemoveContainerOptionsBuilder::default()
            .force(true)
            .v(true)
            .build();
        for _ in 0..60 {
            match self.docker.remove_container(id, Some(opts.clone())).await {
                Ok(())
                | Err(Server {
                    status_code: 404, ..
                }) => return Ok(()),
                Err(Server {
                    status_code: 409, ..
                }) => tokio::time::sleep(std::time::Duration::from_millis(500)).await,
                Err(e) => {
                    return Err(e).with_context(|| format!("failed to remove container {id}"))
                }
            }
        }
        anyhow::bail!(
            "failed to remove container {id}: its removal was still in progress after 30 s"
        )
    }

    /// Remove a volume (one already gone counts as removed).
    async fn remove_volume(&self, name: &str) -> Result<()> {
        use bollard::errors::Error::DockerResponseServerError as Server;
        match self
            .docker
            .remove_volume(name, None::<bollard::query_parameters::RemoveVolumeOptions>)
            .await
        {
            Ok(())
            | Err(Server {
                status_code: 404, ..
            }) => Ok(()),
            Err(e) => Err(e).with_context(|| format!("failed to remove volume {name}")),
        }
    }
}

/// The last `n` lines of a text.
pub(crate) fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A tar of the build directory and a hash of its content (paths and bytes, sorted), so the
/// image is rebuilt exactly when something in the directory changed.
/// The build context of `dir` as a tar, and the hash of its files and of the build
/// arguments (so that each set of arguments has its own image tag).
pub(crate) fn build_context(
    dir: &Path,
    args: &BTreeMap<String, String>,
) -> Result<(Vec<u8>, String)> {
    let mut files = Vec::new();
    collect_files(dir, dir, &mut files)?;
    files.sort();
    let mut hasher = Sha256::new();
    let mut builder = tar::Builder::new(Vec::new());
    for rel in &files {
        let full = dir.join(rel);
        // A FIFO in the folder is refused, not waited on.
        let data = crate::input::file::read(&full, crate::input::file::BUILD_FILE)?;
        let mode = file_mode(&full);
        hasher.update(rel.to_string_lossy().as_bytes());
        hasher.update([0]);
        hasher.update(mode.to_le_bytes());
        hasher.update(&data);
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(mode);
        header.set_cksum();
        builder.append_data(&mut header, rel, data.as_slice())?;
    }
    // Sorted by name; none adds nothing, so a folder without arguments keeps its hash.
    for (name, value) in args {
        hasher.update(b"ARG\0");
        hasher.update(name.as_bytes());
        hasher.update([0]);
        hasher.update(value.as_bytes());
        hasher.update([0]);
    }
    let tar = builder.into_inner()?;
    Ok((tar, format!("{:x}", hasher.finalize())))
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in
        std::fs::read_dir(dir).with_context(|| format!("failed to read {}", dir.display()))?
    {
        let entry = entry?;
        let path = entry.path();
        let kind = entry.file_type()?;
        // A link is never followed: it could lead the context to any file of this machine.
        if kind.is_symlink() {
            bail!(
                "{} is a symbolic link: a build folder holds files only",
                path.display()
            );
        }
        if kind.is_dir() {
            collect_files(root, &path, out)?;
        } else {
            out.push(
                path.strip_prefix(root)
                    .expect("invariant: walked under root")
                    .to_path_buf(),
            );
        }
    }
    Ok(())
}

#[cfg(unix)]
fn file_mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0o644)
}
#[cfg(not(unix))]
fn file_mode(_: &Path) -> u32 {
    0o644
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_hash_follows_content() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("Dockerfile"), "FROM x\n").unwrap();
        let none = BTreeMap::new();
        let (_, h1) = build_context(tmp.path(), &none).unwrap();
        let (_, h2) = build_context(tmp.path(), &none).unwrap();
        assert_eq!(h1, h2);
        std::fs::write(tmp.path().join("Dockerfile"), "FROM y\n").unwrap();
        let (_, h3) = build_context(tmp.path(), &none).unwrap();
        assert_ne!(h1, h3);
    }

    #[test]
    fn a_fifo_in_a_build_folder_is_refused_not_waited_on() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("Dockerfile"), "FROM x\n").unwrap();
        let fifo = std::ffi::CString::new(tmp.path().join("pipe").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let e = build_context(tmp.path(), &BTreeMap::new()).unwrap_err();
        assert!(
            format!("{e:#}").contains("pipe is not a regular file (a FIFO)"),
            "{e:#}"
        );
    }

    #[test]
    fn context_hash_follows_build_args() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join("Dockerfile"),
            "ARG suite\nFROM debian:$suite\n",
        )
        .unwrap();
        let args = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let hash = |a: &BTreeMap<String, String>| build_context(tmp.path(), a).unwrap().1;
        let bookworm = hash(&args(&[("suite", "bookworm")]));
        assert_eq!(bookworm, hash(&args(&[("suite", "bookworm")])));
        assert_ne!(bookworm, hash(&args(&[("suite", "trixie")])));
        assert_ne!(bookworm, hash(&args(&[])));
        // Name and value are separated: `a=bc` is not `ab=c`.
        assert_ne!(hash(&args(&[("a", "bc")])), hash(&args(&[("ab", "c")])));
        // The same arguments in another order are the same set.
        let two = hash(&args(&[("suite", "trixie"), ("package", "valkey-server")]));
        assert_eq!(
            two,
            hash(&args(&[("package", "valkey-server"), ("suite", "trixie")]))
        );
    }
}
