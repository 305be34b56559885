//! `rmatrix run`: the pipeline glue. matrix -> plan -> provision -> drive -> record -> report.
//! Failures of one deployment or cell are recorded as data and the run goes on.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rand::distr::{Alphanumeric, SampleString};

use crate::matrix::model::{Matrix, Network, Selector};
use crate::matrix::{expand, Cell, Deployment, LoadedMatrix};
use crate::progress::Progress;
use crate::report;
use crate::results::manifest::{self, DeploymentFacts, DockerFacts, Host, ImageFacts, Manifest};
use crate::results::row::cell_key;
use crate::results::rundir::{MANIFEST, MATRIX_COPY};
use crate::results::{ResultRow, RunDir, FORMAT_VERSION};
use crate::server::docker::Engine;
use crate::server::{self, Deployed, Launch};

pub struct RunOptions {
    pub matrix: Option<PathBuf>,
    /// Exact run directory to create (default: reports/runs/<time>-<name>).
    pub out: Option<PathBuf>,
    pub resume: Option<PathBuf>,
    pub only: Vec<Selector>,
    pub only_text: Vec<String>,
    pub template: Option<PathBuf>,
    pub quiet: bool,
}

pub struct RunOutcome {
    pub dir: PathBuf,
    pub ok: usize,
    pub failed: usize,
    pub interrupted: bool,
}

/// The run was stopped by Ctrl-C (exit code 130).
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

pub async fn run(opts: RunOptions) -> Result<RunOutcome> {
    let (loaded, dir, done) = open_run(&opts)?;
    let m = &loaded.matrix;
    let plan = expand(m, &opts.only);
    let todo: Vec<Deployment> = plan
        .deployments
        .iter()
        .filter_map(|d| {
            let cells: Vec<Cell> = d
                .cells
                .iter()
                .filter(|c| (1..=m.iterations).any(|i| !done.contains(&(cell_key(c), i))))
                .cloned()
                .collect();
            (!cells.is_empty()).then(|| Deployment { cells, ..d.clone() })
        })
        .collect();
    let total: u64 = todo
        .iter()
        .flat_map(|d| d.cells.iter())
        .map(|c| {
            (1..=m.iterations)
                .filter(|i| !done.contains(&(cell_key(c), *i)))
                .count() as u64
        })
        .sum();

    let run_id = dir
        .path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut man = Manifest {
        format_version: FORMAT_VERSION,
        rmatrix_version: env!("CARGO_PKG_VERSION").into(),
        run_id: run_id.clone(),
        matrix_file: loaded.path.display().to_string(),
        matrix_sha256: loaded.sha256.clone(),
        started_at: manifest::now(),
        host: Host::probe(),
        transport: match m.network {
            Network::Host => "tcp 127.0.0.1, host networking (no NAT)".into(),
            Network::Bridge => "tcp 127.0.0.1, bridge network with published port".into(),
        },
        only: opts.only_text.clone(),
        cells_planned: plan.cell_count(),
        ..Manifest::default()
    };
    if let Ok(old) = std::fs::read_to_string(dir.file(MANIFEST)) {
        // Resuming: keep what earlier attempts learnt.
        if let Ok(old) = serde_json::from_str::<Manifest>(&old) {
            man.images = old.images;
            man.deployments = old.deployments;
            man.started_at = old.started_at;
        }
    }
    save_manifest(&dir, &man)?;

    let needs_docker = todo.iter().any(|d| m.servers[&d.server].external.is_none());
    let engine = if needs_docker {
        Some(Engine::connect().await?)
    } else {
        None
    };
    if let Some(e) = &engine {
        let info = e.info().await?;
        man.docker = Some(DockerFacts {
            version: info.version,
            api_version: info.api_version,
        });
    }

    let progress = Progress::new(total, opts.quiet);
    progress.line(format!(
        "rmatrix: {} cells x {} iterations ({} to run) -> {}",
        plan.cell_count(),
        m.iterations,
        total,
        dir.path.display()
    ));
    let mut ctx = RunCtx {
        loaded: &loaded,
        dir: &dir,
        done: &done,
        engine: engine.as_ref(),
        run_id: &run_id,
        password: Alphanumeric.sample_string(&mut rand::rng(), 24),
        progress: &progress,
        man: &mut man,
        images: BTreeMap::new(),
    };
    let interrupted = tokio::select! {
        r = ctx.run_deployments(&todo) => { r?; false }
        _ = tokio::signal::ctrl_c() => true,
    };
    progress.finish();
    if let Some(e) = &engine {
        // Also on Ctrl-C: whatever this run started goes away.
        if let Err(err) = e.remove_labelled(Some(&run_id)).await {
            eprintln!("warning: failed to remove this run's containers: {err:#}");
        }
    }
    let rows = dir.rows()?;
    man.finished_at = Some(manifest::now());
    man.iterations_ok = rows.iter().filter(|r| r.is_ok()).count();
    man.iterations_failed = rows.len() - man.iterations_ok;
    save_manifest(&dir, &man)?;
    let summary = render_summary(&dir, m, opts.template.as_deref())?;
    if !opts.quiet {
        println!("{summary}");
    }
    eprintln!("results: {}", dir.path.display());
    if interrupted {
        return Err(Interrupted.into());
    }
    Ok(RunOutcome {
        dir: dir.path.clone(),
        ok: man.iterations_ok,
        failed: man.iterations_failed,
        interrupted,
    })
}

/// A new run (matrix file -> fresh directory) or a resumed one (directory -> its matrix and
/// the (cell, iteration) pairs that already succeeded).
/// (cell key, iteration) pairs already measured successfully.
type Done = HashSet<(String, u32)>;

fn open_run(opts: &RunOptions) -> Result<(LoadedMatrix, RunDir, Done)> {
    if let Some(resume) = &opts.resume {
        let dir = RunDir::open(resume)?;
        let text = std::fs::read_to_string(dir.file(MATRIX_COPY))?;
        // Resolve `build:` directories from where the matrix originally lived.
        let original = std::fs::read_to_string(dir.file(MANIFEST))
            .ok()
            .and_then(|t| serde_json::from_str::<Manifest>(&t).ok())
            .map(|m| PathBuf::from(m.matrix_file))
            .unwrap_or_else(|| dir.file(MATRIX_COPY));
        let loaded = crate::matrix::load_str(&text, &original)?;
        let done = dir
            .rows()?
            .iter()
            .filter(|r| r.is_ok())
            .map(|r| (r.cell_key(), r.iteration))
            .collect();
        return Ok((loaded, dir, done));
    }
    let path = opts
        .matrix
        .as_ref()
        .context("a matrix file or --resume DIR is needed")?;
    let loaded = crate::matrix::load_file(path)?;
    let dir = match &opts.out {
        Some(out) => {
            let fresh = !out.exists()
                || std::fs::read_dir(out)
                    .map(|mut d| d.next().is_none())
                    .unwrap_or(false);
            anyhow::ensure!(fresh, "{} exists and is not empty: runs are never overwritten (use --resume to continue one)", out.display());
            std::fs::create_dir_all(out)?;
            RunDir { path: out.clone() }
        }
        None => RunDir::create(Path::new("reports/runs"), &loaded.name())?,
    };
    std::fs::write(dir.file(MATRIX_COPY), &loaded.text)?;
    Ok((loaded, dir, HashSet::new()))
}

fn save_manifest(dir: &RunDir, man: &Manifest) -> Result<()> {
    dir.write_json(MANIFEST, &serde_json::to_value(man)?)
}

/// Render summary.md from what the run directory holds.
pub fn render_summary(dir: &RunDir, m: &Matrix, template: Option<&Path>) -> Result<String> {
    let rows = dir.rows()?;
    let man: Manifest = std::fs::read_to_string(dir.file(MANIFEST))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let facts = report::markdown::RunFacts {
        run_id: man.run_id.clone(),
        started_at: man.started_at.clone(),
        servers: man
            .deployments
            .iter()
            .map(|d| report::markdown::ServerView {
                name: format!("{} / {}", d.server, d.config),
                version: d.version.clone().unwrap_or_else(|| "n/a".into()),
                image: man
                    .images
                    .get(&d.server)
                    .map(|i| i.reference.clone())
                    .unwrap_or_else(|| "external".into()),
            })
            .collect(),
    };
    let template = match template {
        Some(p) => std::fs::read_to_string(p)
            .with_context(|| format!("failed to read template {}", p.display()))?,
        None => report::markdown::DEFAULT_TEMPLATE.to_string(),
    };
    let text = report::markdown::render(&template, &report::markdown::context(m, &rows, &facts))?;
    std::fs::write(dir.file(crate::results::rundir::SUMMARY_MD), &text)?;
    Ok(text)
}

struct RunCtx<'a> {
    loaded: &'a LoadedMatrix,
    dir: &'a RunDir,
    done: &'a HashSet<(String, u32)>,
    engine: Option<&'a Engine>,
    run_id: &'a str,
    password: String,
    progress: &'a Progress,
    man: &'a mut Manifest,
    /// Image reference per server, or why it could not be had.
    images: BTreeMap<String, Result<String, String>>,
}

impl RunCtx<'_> {
    async fn run_deployments(&mut self, todo: &[Deployment]) -> Result<()> {
        for d in todo {
            self.run_deployment(d).await?;
        }
        Ok(())
    }

    /// Image of a container server: built or pulled once per run.
    async fn image(&mut self, server: &str) -> Result<String, String> {
        if let Some(r) = self.images.get(server) {
            return r.clone();
        }
        let spec = &self.loaded.matrix.servers[server];
        let engine = self
            .engine
            .expect("invariant: docker is connected when a server needs it");
        self.progress.status(format!("{server}: preparing image"));
        let res = match (&spec.image, self.loaded.build_dirs.get(server)) {
            (Some(image), _) => engine.ensure_pulled(image).await,
            (None, Some(dir)) => engine.ensure_built(server, dir).await,
            _ => Err(anyhow::anyhow!("server {server} has no image")),
        };
        let r = match res {
            Ok(info) => {
                self.progress
                    .line(format!("image {} ({})", info.reference, info.origin));
                self.man.images.insert(
                    server.to_string(),
                    ImageFacts {
                        reference: info.reference.clone(),
                        id: info.id,
                        origin: info.origin,
                    },
                );
                Ok(info.reference)
            }
            Err(e) => Err(format!("{e:#}")),
        };
        self.images.insert(server.to_string(), r.clone());
        r
    }

    async fn run_deployment(&mut self, d: &Deployment) -> Result<()> {
        let m = &self.loaded.matrix;
        let config = &m.configs[&d.config];
        let ddir = self.dir.deployment_dir(&d.slug())?;
        let mut facts = DeploymentFacts {
            server: d.server.clone(),
            config: d.config.clone(),
            started_at: manifest::now(),
            ..DeploymentFacts::default()
        };
        self.progress
            .status(format!("{}/{}: starting server", d.server, d.config));
        let started = Instant::now();
        let spec = &m.servers[&d.server];
        let deployed: Result<Deployed> = if spec.external.is_some() {
            server::provision(spec, None, "", "", config, &ddir).await
        } else {
            match self.image(&d.server).await {
                Err(e) => Err(anyhow::anyhow!(e)),
                Ok(image) => {
                    let launch = Launch {
                        engine: self.engine.expect("invariant: docker connected"),
                        run_id: self.run_id,
                        password: &self.password,
                        host_network: m.network == Network::Host,
                        start_timeout: m
                            .start_timeout
                            .and_then(|l| l.as_duration())
                            .unwrap_or(Duration::from_secs(180)),
                    };
                    let name = format!("rmatrix-{}-{}", self.run_id, d.slug());
                    facts.container = Some(name.clone());
                    server::provision(spec, Some(&launch), &name, &image, config, &ddir).await
                }
            }
        };
        let deployed = match deployed {
            Ok(dep) => dep,
            Err(e) => {
                let reason = format!("server failed to start: {e:#}");
                self.progress
                    .line(format!("{}/{}: {reason}", d.server, d.config));
                facts.status = "failed".into();
                facts.error = Some(reason.clone());
                self.finish_deployment(facts)?;
                return self.fail_cells(d, &reason);
            }
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
        let outcome = match deployed.mismatch() {
            Some(reason) => {
                self.progress
                    .line(format!("{}/{}: {reason}", d.server, d.config));
                facts.status = "config-mismatch".into();
                facts.error = Some(reason.clone());
                self.fail_cells(d, &reason)
            }
            None => {
                facts.status = "ok".into();
                self.run_cells(d, &deployed).await
            }
        };
        if let Err(e) = server::teardown(self.engine, &deployed, &ddir).await {
            self.progress.line(format!("warning: {e:#}"));
        }
        self.finish_deployment(facts)?;
        outcome
    }

    fn finish_deployment(&mut self, mut facts: DeploymentFacts) -> Result<()> {
        facts.finished_at = Some(manifest::now());
        self.man
            .deployments
            .retain(|f| !(f.server == facts.server && f.config == facts.config));
        self.man.deployments.push(facts);
        save_manifest(self.dir, self.man)
    }

    fn pending(&self, cell: &Cell) -> Vec<u32> {
        let key = cell_key(cell);
        (1..=self.loaded.matrix.iterations)
            .filter(|i| !self.done.contains(&(key.clone(), *i)))
            .collect()
    }

    fn fail_cells(&mut self, d: &Deployment, reason: &str) -> Result<()> {
        for cell in &d.cells {
            let kind = self.loaded.matrix.workloads[&cell.workload].kind();
            for i in self.pending(cell) {
                self.dir
                    .append(&ResultRow::for_cell(cell, kind, i).failed(reason))?;
                self.progress.advance();
            }
        }
        Ok(())
    }

    async fn run_cells(&mut self, d: &Deployment, deployed: &Deployed) -> Result<()> {
        let m = &self.loaded.matrix;
        for cell in &d.cells {
            let workload = &m.workloads[&cell.workload];
            for i in self.pending(cell) {
                let row = ResultRow::for_cell(cell, workload.kind(), i);
                let live = Arc::new(AtomicU64::new(0));
                let label = format!("{cell} #{i}");
                let ticker = self.ticker(label.clone(), live.clone());
                let result = crate::drive::run_iteration(workload, deployed, cell, m, live).await;
                ticker.abort();
                let row = match result {
                    Ok(meas) => meas.into_row(row),
                    Err(e) => row.failed(&format!("{e:#}")),
                };
                let pos = self.progress.position() + 1;
                self.progress.line(match row.is_ok() {
                    true => format!(
                        "[{pos}/{}] {label}: {:.0} qps, p95 {:.3} ms, {} errors",
                        self.progress.length(),
                        row.qps.unwrap_or(0.0),
                        row.lat_p95_ms.unwrap_or(0.0),
                        row.errors.unwrap_or(0)
                    ),
                    false => format!(
                        "[{pos}/{}] {label}: FAILED: {}",
                        self.progress.length(),
                        row.error
                    ),
                });
                self.dir.append(&row)?;
                self.progress.advance();
            }
        }
        Ok(())
    }

    /// Once a second, show the cell and its live rate on the status line.
    fn ticker(&self, label: String, live: Arc<AtomicU64>) -> tokio::task::JoinHandle<()> {
        let bar = self.progress.bar_handle();
        tokio::spawn(async move {
            let mut last = 0;
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tick.tick().await;
                let now = live.load(Ordering::Relaxed);
                bar.set_message(format!("{label}: {} q/s", now - last));
                last = now;
            }
        })
    }
}
