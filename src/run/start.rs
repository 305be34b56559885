//! Starting a deployment (image, container, readiness, variant verified) and measuring a
//! cell in a client container: the parts of a worker that talk to Docker.

use std::time::{Duration, Instant};

use anyhow::Result;

use super::*;

impl RunCtx<'_> {
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
        let res = match (&spec.image, self.loaded.build_dirs.get(server)) {
            (Some(image), _) => engine.ensure_pulled(image).await,
            (None, Some(b)) => engine.ensure_built(server, &b.dir, &b.args).await,
            _ => Err(anyhow::anyhow!("server {server} has no image")),
        };
        let r = match res {
            Ok(info) => {
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

    /// Start (or attach to) the server of `d`, record what it reports and verify the
    /// variant. The inner error is the reason its cells fail.
    pub(super) async fn start(&mut self, d: &Deployment) -> Result<Result<Deployed, String>> {
        let m = &self.loaded.matrix;
        let config = &m.configs[&d.config];
        let ddir = self.dir.deployment_dir(&d.slug())?;
        let mut facts = DeploymentFacts {
            server: d.server.clone(),
            config: d.config.clone(),
            engine: self.engine_name.clone(),
            cpuset: m.servers[&d.server].cpuset.clone(),
            cpus: m.servers[&d.server].cpus,
            started_at: manifest::now(),
            ..DeploymentFacts::default()
        };
        self.progress
            .status(format!("{}/{}: starting server", d.server, d.config));
        let started = Instant::now();
        let spec = &m.servers[&d.server];
        let deployed: Result<Deployed> = if spec.external.is_some() {
            servers::provision(spec, None, "", "", config, &ddir).await
        } else {
            match self.image(&d.server).await {
                Err(e) => Err(anyhow::anyhow!(e)),
                Ok(image) => {
                    let engine = self.engine.clone().expect("invariant: docker connected");
                    // With client containers the server is awaited and read back on its
                    // engine's host too: this process may not reach it at 127.0.0.1.
                    let host_side = match self.client {
                        Client::Container(_) => match self.client_image(&engine).await {
                            Ok(client) => Some(drive::OnEngineHost {
                                engine: &engine,
                                image: client,
                                matrix: &self.loaded.text,
                                server: &d.server,
                                config: &d.config,
                                run_id: self.run_id,
                                instance: self.instance,
                                start_timeout: start_timeout(m),
                            }),
                            Err(e) => return self.start_failed(facts, d, e),
                        },
                        Client::Process => None,
                    };
                    let launch = Launch {
                        engine: &engine,
                        run_id: self.run_id,
                        instance: self.instance,
                        password: &self.password,
                        host_network: m.network == Network::Host,
                        start_timeout: start_timeout(m),
                        cpuset: m.servers[&d.server].cpuset.clone(),
                        cpus: m.servers[&d.server].cpus,
                        copy_files: host_side.is_some(),
                        host_side: host_side.as_ref().map(|h| h as &dyn HostSide),
                    };
                    let name = match self.instance {
                        "" => format!("rmatrix-{}-{}", self.run_id, d.slug()),
                        i => format!("rmatrix-{}-{i}-{}", self.run_id, d.slug()),
                    };
                    facts.container = Some(name.clone());
                    servers::provision(spec, Some(&launch), &name, &image, config, &ddir).await
                }
            }
        };
        let deployed = match deployed {
            Ok(dep) => dep,
            Err(e) => return self.start_failed(facts, d, format!("{e:#}")),
        };
        facts.version = Some(deployed.version.clone());
        self.progress.line(format!(
            "{}/{}: {} ready in {:.1}s",
            d.server,
            d.config,
            deployed.version,
            started.elapsed().as_secs_f64()
        ));
        std::fs::write(
            ddir.join("variables.json"),
            serde_json::to_string_pretty(&deployed.variables)? + "\n",
        )?;
        std::fs::write(
            ddir.join("verified.json"),
            serde_json::to_string_pretty(&deployed.checks)? + "\n",
        )?;
        if let Some(reason) = deployed.mismatch() {
            self.progress
                .line(format!("{}/{}: {reason}", d.server, d.config));
            facts.status = DeploymentStatus::ConfigMismatch;
            facts.error = Some(reason.clone());
            if let Err(e) = servers::teardown(self.engine.as_ref(), &deployed, &ddir).await {
                self.progress.line(format!("warning: {e:#}"));
            }
            facts.finished_at = Some(manifest::now());
            self.record_deployment(facts)?;
            return Ok(Err(reason));
        }
        facts.status = DeploymentStatus::Ok;
        self.record_deployment(facts)?;
        Ok(Ok(deployed))
    }

    /// A deployment whose server did not start: say why and record it; the reason is what
    /// its cells fail with.
    pub(super) fn start_failed(
        &mut self,
        mut facts: DeploymentFacts,
        d: &Deployment,
        why: String,
    ) -> Result<Result<Deployed, String>> {
        let reason = format!("server failed to start: {why}");
        self.progress
            .line(format!("{}/{}: {reason}", d.server, d.config));
        facts.status = DeploymentStatus::Failed;
        facts.error = Some(reason.clone());
        self.record_deployment(facts)?;
        Ok(Err(reason))
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
            row: ResultRow::for_cell(cell, kind, i).failed(&e),
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
        let phase = [m.warmup, Some(m.length)]
            .iter()
            .flatten()
            .map(|l| l.as_duration())
            .sum::<Option<Duration>>();
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
