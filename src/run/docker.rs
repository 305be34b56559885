//! The Docker side of a worker (`Backend`): images, server containers (readiness and what
//! the server reports), cells driven from this process or from a client container.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::backend::{Backend, Started};
use super::*;
use crate::matrix::model::Counted;

/// One worker's engine (None when no deployment needs Docker) and where its load runs.
pub(super) struct DockerBackend<'a> {
    pub(super) loaded: &'a LoadedMatrix,
    pub(super) progress: &'a Progress,
    /// Image facts go into the run's manifest (saved with the deployment's facts).
    man: &'a Mutex<Manifest>,
    pub(super) engine: Option<Engine>,
    /// Its name in a pooled run, None for one engine.
    engine_name: Option<String>,
    pub(super) client: Client,
    /// The client image on each engine that runs client containers (by engine name), built
    /// on first use.
    client_images: BTreeMap<String, Result<String, String>>,
    /// Image reference per server, or why it could not be had.
    images: BTreeMap<String, Result<String, String>>,
    pub(super) run_id: &'a str,
    pub(super) instance: &'a str,
    pub(super) password: String,
    seed: u64,
    /// The CPUs of this worker's servers and clients for now (a duet's side, `place`).
    placed: Option<String>,
}

/// The CPUs a cell's load runs on: a duet side's (`placed`), else the matrix's
/// `client_cpuset`, else anywhere.
fn client_cpus(placed: Option<&str>, m: &Matrix) -> Option<Arc<[u32]>> {
    (placed.or(m.client_cpuset.as_deref()))
        .and_then(|c| crate::input::untrusted::cpus_of(c).ok())
        .map(Into::into)
}

/// Where a worker's load generator runs.
pub(super) enum Client {
    /// In this process (the local engine: its servers share this host's loopback).
    Process,
    /// In an rmatrix container on this engine's host, with host networking.
    Container(Engine),
}

impl<'a> DockerBackend<'a> {
    /// The backend of `engine` (None: no Docker needed), reached at `addr` in a pool.
    pub(super) fn new(
        s: &RunShared<'a>,
        engine: Option<&Engine>,
        addr: Option<&EngineAddr>,
    ) -> DockerBackend<'a> {
        let client = match (s.client_engine, addr) {
            (Some(c), Some(_)) => Client::Container(c.clone()),
            (None, Some(a)) if a.client_in_container => Client::Container(
                engine
                    .cloned()
                    .expect("invariant: a pool engine is connected"),
            ),
            _ => Client::Process,
        };
        DockerBackend {
            loaded: s.loaded,
            progress: s.progress,
            man: s.man,
            engine: engine.cloned(),
            engine_name: s.engine_name(engine),
            client,
            client_images: BTreeMap::new(),
            images: BTreeMap::new(),
            run_id: s.run_id,
            instance: s.instance,
            password: Alphanumeric.sample_string(&mut rand::rng(), 24),
            seed: s.seed,
            placed: None,
        }
    }
}

impl Backend for DockerBackend<'_> {
    async fn start(&mut self, d: &Deployment, ddir: &Path) -> Started {
        let spec = &self.loaded.matrix.servers[&d.server];
        if spec.external.is_some() {
            let config = &self.loaded.matrix.configs[&d.config];
            return Started {
                container: None,
                server: servers::attach(spec, config)
                    .await
                    .map_err(|e| format!("{e:#}")),
                data: Vec::new(),
            };
        }
        // The run id is the run directory's name (`--out r~1` too): Docker's names take
        // `[A-Za-z0-9_.-]` only.
        let run_id = crate::model::slug(self.run_id);
        let name = match self.instance {
            "" => format!("rmatrix-{run_id}-{}", d.slug()),
            i => format!("rmatrix-{run_id}-{i}-{}", d.slug()),
        };
        let mut data = Vec::new();
        let server = self.start_container(d, &name, ddir, &mut data).await;
        Started {
            container: Some(name).filter(|_| !matches!(server, Err(Unstarted::Before(_)))),
            server: server.map_err(Unstarted::into_reason),
            data,
        }
    }

    async fn measure(&mut self, cell: &Cell, i: u32, deployed: &Deployed) -> CellOutput {
        let m = &self.loaded.matrix;
        let label = format!("{cell} #{i}");
        let external = m.servers[&cell.server].external.is_some();
        match (&self.client, external) {
            (Client::Container(on), false) => {
                let on = on.clone();
                self.progress
                    .status(format!("{label}: client container on engine {}", on.name()));
                self.remote_cell(&on, cell, i, deployed).await
            }
            _ => {
                let live = Arc::new(AtomicU64::new(0));
                let phase = Arc::new(Live::default());
                let ticker = self.ticker(label, live.clone(), phase.clone());
                let measured = drive::measure(m, cell, i, self.seed, deployed, live, phase);
                let cpus = client_cpus(self.placed.as_deref(), m);
                let out = crate::workloads::threads::on_cpus(cpus, measured).await;
                ticker.abort();
                out
            }
        }
    }

    async fn stop(&mut self, deployed: &Deployed, ddir: &Path) -> Result<()> {
        servers::teardown(self.engine.as_ref(), deployed, ddir).await
    }

    async fn oom_killed(&self, deployed: &Deployed) -> bool {
        match (&self.engine, &deployed.container) {
            (Some(e), Some(id)) => e.oom_killed(id).await.unwrap_or(false),
            _ => false,
        }
    }

    async fn other_runs(&self) -> Option<u32> {
        let e = self.engine.as_ref()?;
        e.other_runs(self.instance).await.ok()
    }

    async fn alive(&self) -> bool {
        match &self.engine {
            Some(e) => e.alive().await,
            None => true,
        }
    }

    async fn pause(&self, d: Duration) {
        tokio::time::sleep(d).await;
    }

    fn now(&self) -> Instant {
        Instant::now()
    }

    fn place(&mut self, cpuset: Option<String>) {
        self.placed = cpuset;
    }

    fn placed(&self) -> Option<String> {
        self.placed.clone()
    }
}

/// Each package file of a build and its sha256, as the manifest records them.
fn package_facts(files: &[std::path::PathBuf]) -> Vec<String> {
    use sha2::Digest;
    files
        .iter()
        .map(|f| {
            let sum = std::fs::read(f)
                .map(|d| format!("sha256:{:x}", sha2::Sha256::digest(&d)))
                .unwrap_or_else(|e| format!("unreadable: {e}"));
            format!("{} {sum}", f.display())
        })
        .collect()
}

/// What the manifest records of a `source:` server's image.
fn source_facts(
    src: &crate::servers::images::build::SourceBuild,
    seconds: Option<f64>,
) -> crate::results::manifest::SourceFacts {
    crate::results::manifest::SourceFacts {
        git: src.repo.display().to_string(),
        rev: src.rev.clone(),
        commit: src.commit.commit.clone(),
        describe: src.commit.describe.clone(),
        tree: src.commit.tree.clone(),
        subject: src.commit.subject.clone(),
        recipe: src.recipe.name.to_string(),
        flags: src.flags.clone(),
        suite: src.suite.clone(),
        build_seconds: seconds,
    }
}

/// Why a container server is not running: `Before` its container was asked for (no
/// image, no client image), or after.
enum Unstarted {
    Before(String),
    After(String),
}

impl Unstarted {
    fn into_reason(self) -> String {
        match self {
            Unstarted::Before(r) | Unstarted::After(r) => r,
        }
    }
}

impl DockerBackend<'_> {
    /// Image of a container server: built or pulled once per run.
    pub(super) async fn image(&mut self, server: &str) -> Result<String, String> {
        if let Some(r) = self.images.get(server) {
            return r.clone();
        }
        let spec = &self.loaded.matrix.servers[server];
        let engine = self
            .engine
            .clone()
            .expect("invariant: docker is connected when a server needs it");
        self.progress.status(format!("{server}: preparing image"));
        let source = self.loaded.sources.get(server);
        let res = match (&spec.image, self.loaded.build_dirs.get(server), source) {
            (Some(image), _, _) => engine.ensure_pulled(image).await.map(|i| (i, None)),
            (None, Some(b), _) => engine
                .ensure_built_with(
                    server,
                    &b.dir,
                    &b.args,
                    &b.packages,
                    spec.kind().family().after_packages(),
                )
                .await
                .map(|i| (i, None)),
            (None, None, Some(src)) => {
                let progress = self.progress;
                let status = move |s: String| progress.status(format!("{server}: {s}"));
                let built = src
                    .ensure(&engine, self.run_id, self.instance, &status)
                    .await;
                built.map(|b| (b.image, Some(source_facts(src, b.seconds))))
            }
            _ => Err(anyhow::anyhow!("server {server} has no image")),
        };
        // Under callgrind the server runs from an image of its own; perf counts it as it is.
        let under_callgrind = self.loaded.matrix.counted == Some(Counted::Callgrind);
        let counted = (spec.kind().family().counted()).filter(|_| under_callgrind);
        let res = match (res, counted) {
            (Ok((base, source)), Some(c)) => {
                self.progress
                    .status(format!("{server}: preparing its counted image"));
                crate::servers::images::counted::ensure(&engine, &base.reference, &base.id, &c)
                    .await
                    .map(|info| (info, source))
            }
            (res, _) => res,
        };
        let r = match res {
            Ok((info, source)) => {
                if let Some(s) = &source {
                    let took = s
                        .build_seconds
                        .map(|t| format!(", built in {t:.0} s"))
                        .unwrap_or_default();
                    self.progress.line(format!(
                        "{server}: {} ({}) with recipe {}{took}",
                        crate::escape::terminal(&s.describe),
                        &s.commit[..12],
                        s.recipe
                    ));
                }
                let on = match &self.engine_name {
                    Some(n) => format!(" on engine {n}"),
                    None => String::new(),
                };
                self.progress
                    .line(format!("image {} ({}){on}", info.reference, info.origin));
                let facts = ImageFacts {
                    reference: info.reference.clone(),
                    id: info.id,
                    origin: info.origin,
                    digest: info.digest,
                    source,
                    packages: self
                        .loaded
                        .build_dirs
                        .get(server)
                        .map(|b| package_facts(&b.packages))
                        .unwrap_or_default(),
                };
                let mut man = self.man.lock().expect("manifest lock");
                if let Some(n) = &self.engine_name {
                    man.engine_images
                        .entry(n.clone())
                        .or_default()
                        .insert(server.to_string(), facts.clone());
                }
                man.images.entry(server.to_string()).or_insert(facts);
                Ok(info.reference)
            }
            Err(e) => Err(format!("{e:#}")),
        };
        self.images.insert(server.to_string(), r.clone());
        r
    }

    /// Start the server container of `d` as `name` (on a copy of its kept data set, where
    /// the matrix keeps them), wait for it and read back what it reports; how it got its
    /// tables goes into `data`.
    async fn start_container(
        &mut self,
        d: &Deployment,
        name: &str,
        ddir: &Path,
        data: &mut Vec<DataFacts>,
    ) -> Result<Deployed, Unstarted> {
        let m = &self.loaded.matrix;
        let image = self.image(&d.server).await.map_err(Unstarted::Before)?;
        match self.start_on_copy(d, name, &image, ddir).await {
            Ok(on) => {
                data.extend(on.data);
                return Ok(on.deployed);
            }
            Err(not) => data.extend(not.note.is_some().then_some(not)),
        }
        let engine = self.engine.clone().expect("invariant: docker connected");
        // With client containers the server is awaited and read back on its engine's host
        // too: this process may not reach it at 127.0.0.1.
        let host_side = match self.client {
            Client::Container(_) => Some(drive::OnEngineHost {
                engine: &engine,
                image: self
                    .client_image(&engine)
                    .await
                    .map_err(Unstarted::Before)?,
                matrix: &self.loaded.text,
                server: &d.server,
                config: &d.config,
                run_id: self.run_id,
                instance: self.instance,
                start_timeout: start_timeout(m),
            }),
            Client::Process => None,
        };
        let password = self.password.clone();
        let launch = Launch {
            host_side: host_side.as_ref().map(|h| h as &dyn HostSide),
            ..self.launch(d, &password, None)
        };
        let spec = &m.servers[&d.server];
        let config = &m.configs[&d.config];
        servers::provision(spec, &engine, &launch, name, &image, config, ddir)
            .await
            .map_err(|e| Unstarted::After(format!("{e:#}")))
    }

    /// How `d`'s server container is started (its server reached from this process), its
    /// datadir on `data_volume` when given.
    pub(super) fn launch<'l>(
        &'l self,
        d: &Deployment,
        password: &'l str,
        data_volume: Option<String>,
    ) -> Launch<'l> {
        let m = &self.loaded.matrix;
        let spec = &m.servers[&d.server];
        Launch {
            run_id: self.run_id,
            instance: self.instance,
            password,
            host_network: m.network == Network::Host,
            start_timeout: start_timeout(m),
            cpuset: self.placed.clone().or_else(|| spec.cpuset.clone()),
            cpus: spec.cpus,
            memory: spec.memory_bytes(),
            copy_files: !matches!(self.client, Client::Process),
            host_side: None,
            data_volume,
            counted: m.counted == Some(Counted::Callgrind),
        }
    }

    /// Once a second, show the cell on the status line: the measured phase's last second
    /// (throughput, p95, errors) once the driver shows it, else the operations counted
    /// (preparing, warming up, an external tool's server probe).
    fn ticker(
        &self,
        label: String,
        live: Arc<AtomicU64>,
        phase: Arc<Live>,
    ) -> tokio::task::JoinHandle<()> {
        let bar = self.progress.bar_handle();
        tokio::spawn(async move {
            let mut last = 0;
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tick.tick().await;
                let now = live.load(Ordering::Relaxed);
                bar.set_message(match phase.last_second() {
                    Some(s) => format!(
                        "{label}: second {}: {:.0} q/s, p95 {:.3} ms, {:.0} errors/s",
                        s.second, s.qps, s.lat_pct_ms, s.errors_ps
                    ),
                    None => format!("{label}: {} q/s", now - last),
                });
                last = now;
            }
        })
    }

    /// One cell iteration measured by a client container on `on` (the engine's host):
    /// a failure to run it is the cell's failure, like any other.
    pub(super) async fn remote_cell(
        &mut self,
        on: &Engine,
        cell: &Cell,
        i: u32,
        deployed: &Deployed,
    ) -> CellOutput {
        let m = &self.loaded.matrix;
        let kind = m.workloads[&cell.workload].kind();
        let failed = |e: String| CellOutput {
            server_seconds: Vec::new(),
            profile: None,
            counted_functions: None,
            loaded: None,
            row: ResultRow::for_cell(cell, kind, i).failed(&e),
            counters: Default::default(),
            samples: Vec::new(),
            warmup_samples: Vec::new(),
            operations: Vec::new(),
        };
        let image = match self.client_image(on).await {
            Ok(i) => i,
            Err(e) => return failed(e),
        };
        let pid = match (&self.engine, &deployed.container) {
            (Some(e), Some(id)) => e.pid(id).await.ok().flatten(),
            _ => None,
        };
        let spec = CellSpec {
            matrix: self.loaded.text.clone(),
            cell: cell.key().as_str().to_string(),
            iteration: i,
            run_seed: self.seed,
            host: deployed.endpoint.host.clone(),
            port: deployed.endpoint.port,
            user: deployed.endpoint.user.clone(),
            password: deployed.endpoint.password.clone(),
            version: deployed.version.clone(),
            variables: deployed.variables.clone(),
            server_pid: pid,
        };
        let phase = m.length.and_then(|length| {
            [m.warmup, Some(length)]
                .iter()
                .flatten()
                .map(|l| l.as_duration())
                .sum::<Option<Duration>>()
        });
        // Time-bounded phases: twice their length and 10 minutes for preparing; a
        // count-bounded one: an hour (the client's own stall watchdog comes first).
        let limit = phase
            .map(|d| d * 2 + Duration::from_secs(600))
            .unwrap_or(Duration::from_secs(3600));
        let remote = drive::Remote::new(on, &image, self.run_id, self.instance, "client", limit);
        match drive::in_container(&remote, &spec).await {
            Ok(out) => out,
            Err(e) => failed(format!("{e:#}")),
        }
    }

    /// The client image on `on`, built once per engine and run.
    pub(super) async fn client_image(&mut self, on: &Engine) -> Result<String, String> {
        if let Some(r) = self.client_images.get(on.name()) {
            return r.clone();
        }
        self.progress
            .status(format!("engine {}: building the client image", on.name()));
        let r = drive::client_image(on).await.map_err(|e| {
            format!(
                "the client image could not be built on engine {}: {e:#}",
                on.name()
            )
        });
        self.client_images.insert(on.name().to_string(), r.clone());
        r
    }
}

/// How long a server may take to answer after its container starts.
pub(super) fn start_timeout(m: &Matrix) -> Duration {
    m.start_timeout
        .and_then(|l| l.as_duration())
        .unwrap_or(Duration::from_secs(180))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_runs_on_the_duet_side_else_the_client_cpuset() {
        let matrix = |extra: &str| {
            let text = format!(
                "servers: {{r: {{image: redis:7, cpuset: \"1\"}}}}\n\
                 workloads: {{get: {{redis: {{test: get}}}}}}\nlength: 1s\n{extra}"
            );
            crate::matrix::load_str(&text, Path::new("m.yaml"))
                .unwrap()
                .matrix
        };
        let (pinned, free) = (matrix("client_cpuset: \"0-1\"\n"), matrix(""));
        let cpus = |placed, m| client_cpus(placed, m).map(|c| c.to_vec());
        assert_eq!(cpus(None, &pinned), Some(vec![0, 1]));
        assert_eq!(cpus(Some("1"), &pinned), Some(vec![1]));
        assert_eq!(cpus(Some("0"), &free), Some(vec![0]));
        assert_eq!(cpus(None, &free), None);
    }
}
