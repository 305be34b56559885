//! `rmatrix run`: the pipeline glue. matrix -> plan -> provision -> drive -> record -> report.
//! Failures of one deployment or cell are recorded as data and the run goes on.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rand::distr::{Alphanumeric, SampleString};

use crate::matrix::model::{Matrix, Network, Selector};
use crate::matrix::schedule::schedule;
use crate::matrix::{expand, Cell, Deployment, LoadedMatrix};
use crate::measure::cgroup::Window;
use crate::measure::seconds::Live;
use crate::model::CellKey;
use crate::progress::Progress;
use crate::report;
use crate::results::manifest::{
    self, DeploymentFacts, DeploymentStatus, DockerFacts, Host, ImageFacts, Manifest,
};
use crate::results::rundir::{MANIFEST, MATRIX_COPY};
use crate::results::samples::SampleSink;
use crate::results::{ResultRow, RunDir, FORMAT_VERSION};
use crate::servers::docker::Engine;
use crate::servers::{self, Deployed, Launch};
use crate::workloads::stall::DEFAULT_STALL_TIMEOUT;
use crate::workloads::Ctx;

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
    let opened = open_run(&opts)?;
    let (loaded, done) = (&opened.loaded, &opened.done);
    let m = &loaded.matrix;
    let plan = expand(m, &opts.only);
    let rows = match &opened.dir {
        Some(dir) => dir.rows()?,
        None => Vec::new(),
    };
    let stops = sweep_stops(m, &rows);
    let missing = |c: &Cell| {
        if past_the_stop(m, &stops, c) {
            return 0;
        }
        (1..=m.iterations)
            .filter(|i| !done.contains(&(c.key(), *i)))
            .count() as u64
    };
    let total: u64 = plan
        .deployments
        .iter()
        .flat_map(|d| d.cells.iter())
        .map(missing)
        .sum();
    let has_work = |d: &Deployment| {
        d.cells
            .iter()
            .any(|c| missing(c) > 0 || adaptive_left(m, c, &rows, done))
    };
    if let (Some(dir), false) = (&opened.dir, plan.deployments.iter().any(has_work)) {
        // Nothing to measure: the run stays exactly as it is (manifest, summary and all).
        eprintln!(
            "nothing to resume: every iteration of {} is measured",
            dir.path.display()
        );
        let current = dir.current_rows()?;
        let failed = current.iter().filter(|r| !r.is_ok()).count();
        return Ok(RunOutcome {
            dir: dir.path.clone(),
            ok: current.len() - failed,
            failed,
            interrupted: false,
        });
    }

    // The engine answers before anything is written: a run that cannot start leaves no
    // folder behind (a new run) and its stored files as they were (a resumed one).
    let needs_docker = plan
        .deployments
        .iter()
        .any(|d| has_work(d) && m.servers[&d.server].external.is_none());
    let engine = if needs_docker {
        Some(Engine::connect().await?)
    } else {
        None
    };
    let docker = match &engine {
        Some(e) => {
            let info = e.info().await?;
            Some(DockerFacts {
                version: info.version,
                api_version: info.api_version,
            })
        }
        None => None,
    };

    let dir = match opened.dir {
        Some(dir) => dir,
        None => create_run_dir(&opts, loaded)?,
    };
    let mut man = match opened.old {
        // Resuming: the run keeps its identity (id, host, start, schedule); what this
        // attempt adds is appended to what earlier attempts learnt.
        Some(old) => Manifest {
            docker: docker.or(old.docker.clone()),
            finished_at: None,
            ..old
        },
        None => Manifest {
            format_version: FORMAT_VERSION,
            rmatrix_version: env!("CARGO_PKG_VERSION").into(),
            run_id: dir
                .path
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            instance: format!("{:08x}", rand::random::<u32>()),
            matrix_file: loaded.path.display().to_string(),
            matrix_sha256: loaded.sha256.clone(),
            started_at: manifest::now(),
            host: Host::probe(),
            docker,
            transport: match m.network {
                Network::Host => "tcp 127.0.0.1, host networking (no NAT)".into(),
                Network::Bridge => "tcp 127.0.0.1, bridge network with published port".into(),
            },
            only: opts.only_text.clone(),
            cells_planned: plan.cell_count(),
            schedule: manifest::ScheduleFacts {
                order: format!("{:?}", m.repeat.order).to_lowercase(),
                seed: m.repeat.seed.unwrap_or_else(rand::random),
                restart: m.repeat.restart,
            },
            ..Manifest::default()
        },
    };
    let run_id = man.run_id.clone();
    let instance = man.instance.clone();
    let seed = man.schedule.seed;
    save_manifest(&dir, &man)?;

    // From here on, every way out (an error returned with `?`, a panic) removes the
    // containers this run starts; the normal path below removes them itself and disarms it.
    let mut guard = ContainerGuard::new(engine.is_some(), &run_id, &instance);
    if let (Some(e), true) = (&engine, opts.resume.is_some()) {
        // A killed earlier attempt may have left its servers up, under the names this one
        // is about to use.
        let n = e
            .remove_run(&run_id, &instance)
            .await
            .context("failed to remove the containers an earlier attempt left")?;
        if n > 0 {
            eprintln!("removed {n} container(s) an earlier attempt of run {run_id} left");
        }
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
        loaded,
        dir: &dir,
        done,
        engine: engine.as_ref(),
        run_id: &run_id,
        instance: &instance,
        password: Alphanumeric.sample_string(&mut rand::rng(), 24),
        progress: &progress,
        man: &mut man,
        images: BTreeMap::new(),
        seed,
    };
    let interrupted = tokio::select! {
        r = ctx.run_deployments(&plan.deployments) => { r?; false }
        _ = tokio::signal::ctrl_c() => true,
        // A CI job's timeout or `kill` sends SIGTERM: the same clean stop as Ctrl-C.
        _ = terminated() => true,
    };
    progress.finish();
    if let Some(e) = &engine {
        // Also on Ctrl-C: whatever this run started goes away.
        match e.remove_run(&run_id, &instance).await {
            Ok(_) => guard.disarm(),
            Err(err) => eprintln!("warning: failed to remove this run's containers: {err:#}"),
        }
    }
    let rows = dir.current_rows()?;
    man.finished_at = Some(manifest::now());
    man.iterations_ok = rows.iter().filter(|r| r.is_ok()).count();
    man.iterations_failed = rows.len() - man.iterations_ok;
    save_manifest(&dir, &man)?;
    let summary = store_reports(&dir, m, opts.template.as_deref())?;
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

/// Resolves when the process receives SIGTERM (never, if the handler cannot be set).
async fn terminated() {
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut s) => {
            s.recv().await;
        }
        Err(_) => std::future::pending().await,
    }
}

/// (cell key, iteration) pairs already measured successfully.
type Done = HashSet<(CellKey, u32)>;

/// What `run` starts from: the matrix, and for `--resume` the run directory (repaired), its
/// manifest and the (cell, iteration) pairs that already succeeded.
struct Opened {
    loaded: LoadedMatrix,
    dir: Option<RunDir>,
    old: Option<Manifest>,
    done: Done,
}

fn open_run(opts: &RunOptions) -> Result<Opened> {
    if let Some(resume) = &opts.resume {
        let dir = RunDir::open(resume)?;
        let text = std::fs::read_to_string(dir.file(MATRIX_COPY))?;
        let old = std::fs::read_to_string(dir.file(MANIFEST))
            .ok()
            .and_then(|t| serde_json::from_str::<Manifest>(&t).ok())
            .filter(|m| !m.run_id.is_empty());
        // Resolve `build:` directories from where the matrix originally lived.
        let original = old
            .as_ref()
            .map(|m| PathBuf::from(&m.matrix_file))
            .unwrap_or_else(|| dir.file(MATRIX_COPY));
        let loaded = crate::matrix::load_str(&text, &original)?;
        dir.repair()?;
        let done = dir
            .rows()?
            .iter()
            .filter(|r| r.is_ok())
            .map(|r| (r.cell_key(), r.iteration))
            .collect();
        return Ok(Opened {
            loaded,
            dir: Some(dir),
            old,
            done,
        });
    }
    let path = opts
        .matrix
        .as_ref()
        .context("a matrix file or --resume DIR is needed")?;
    let loaded = crate::matrix::load_file(path)?;
    if let Some(out) = &opts.out {
        anyhow::ensure!(
            fresh(out),
            "{} exists and is not empty: runs are never overwritten (use --resume to continue one)",
            out.display()
        );
    }
    Ok(Opened {
        loaded,
        dir: None,
        old: None,
        done: HashSet::new(),
    })
}

fn fresh(out: &Path) -> bool {
    !out.exists()
        || std::fs::read_dir(out)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false)
}

/// The directory of a new run, with the matrix copied into it.
fn create_run_dir(opts: &RunOptions, loaded: &LoadedMatrix) -> Result<RunDir> {
    let dir = match &opts.out {
        Some(out) => {
            anyhow::ensure!(fresh(out), "{} exists and is not empty: runs are never overwritten (use --resume to continue one)", out.display());
            std::fs::create_dir_all(out)
                .with_context(|| format!("failed to create {}", out.display()))?;
            RunDir { path: out.clone() }
        }
        None => RunDir::create(Path::new("reports/runs"), &loaded.name())?,
    };
    std::fs::write(dir.file(MATRIX_COPY), &loaded.text)
        .with_context(|| format!("failed to write {}", dir.file(MATRIX_COPY).display()))?;
    Ok(dir)
}

/// Would the adaptive repeats still measure `c`: its metric is noisy and a round up to
/// `max_iterations` is not measured yet.
fn adaptive_left(m: &Matrix, c: &Cell, rows: &[ResultRow], done: &Done) -> bool {
    let Some(target) = m.repeat.until_cv else {
        return false;
    };
    let key = c.key();
    let max = m.repeat.max_iterations.unwrap_or(10).max(m.iterations);
    (m.iterations + 1..=max).any(|i| !done.contains(&(key.clone(), i)))
        && noisy(m, &key, rows, target)
}

/// Fewer than two measured values of the report metric, or a CV above `target` percent.
fn noisy(m: &Matrix, key: &CellKey, rows: &[ResultRow], target: f64) -> bool {
    let metric = crate::model::metric::Metric::find(&m.report.metric)
        .unwrap_or(&crate::model::metric::METRICS[0]);
    let values: Vec<f64> = rows
        .iter()
        .filter(|r| r.is_ok() && r.cell_key() == *key)
        .filter_map(|r| metric.value(r))
        .collect();
    values.len() < 2
        || crate::stats::summarize(&values, crate::stats::Confidence::default())
            .and_then(|s| s.cv)
            .is_some_and(|cv| cv * 100.0 > target)
}

/// Where each curve's sweep stopped (`load.until`), from the rows so far; empty without a
/// stop rule.
fn sweep_stops(m: &Matrix, rows: &[ResultRow]) -> Stops {
    match m.load.until {
        Some(until) => {
            let spec = m.report.load_curve.clone().unwrap_or_default();
            crate::report::load_curve::sweep_stops(&spec, until, rows)
        }
        None => Stops::default(),
    }
}

type Stops = indexmap::IndexMap<crate::report::load_curve::CurveKey, u32>;

/// A cell above the level where its curve's sweep stopped: not run.
fn past_the_stop(m: &Matrix, stops: &Stops, c: &Cell) -> bool {
    let kind = m.workloads[&c.workload].kind();
    crate::report::load_curve::skipped(stops, &ResultRow::for_cell(c, kind, 1))
}

/// A cell iteration's own arrivals seed, from the run's (recorded in the manifest): the same
/// run seed gives the same Poisson schedule for each cell and iteration.
fn cell_seed(run_seed: u64, cell: &Cell, iteration: u32) -> u64 {
    // FNV-1a: stable across builds and platforms, unlike the std hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in cell.key().as_str().bytes().chain(iteration.to_le_bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h ^ run_seed
}

fn save_manifest(dir: &RunDir, man: &Manifest) -> Result<()> {
    dir.write_json(MANIFEST, &serde_json::to_value(man)?)
}

/// Removes the run's containers (by label) when dropped while armed. Drop cannot await, and
/// the run's own runtime may be the one unwinding, so it connects afresh on its own thread.
struct ContainerGuard {
    run_id: String,
    instance: String,
    armed: bool,
}

impl ContainerGuard {
    fn new(armed: bool, run_id: &str, instance: &str) -> ContainerGuard {
        ContainerGuard {
            run_id: run_id.to_string(),
            instance: instance.to_string(),
            armed,
        }
    }

    fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for ContainerGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (run_id, instance) = (self.run_id.clone(), self.instance.clone());
        let removed = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async {
                let engine = Engine::connect().await.ok()?;
                engine.remove_run(&run_id, &instance).await.ok()
            })
        })
        .join();
        if !matches!(removed, Ok(Some(_))) {
            eprintln!(
                "warning: could not remove the containers of run {}; `rmatrix clean` removes them",
                self.run_id
            );
        }
    }
}

struct RunCtx<'a> {
    loaded: &'a LoadedMatrix,
    dir: &'a RunDir,
    done: &'a Done,
    engine: Option<&'a Engine>,
    run_id: &'a str,
    instance: &'a str,
    password: String,
    progress: &'a Progress,
    man: &'a mut Manifest,
    /// Image reference per server, or why it could not be had.
    images: BTreeMap<String, Result<String, String>>,
    /// Seed of the shuffled order (recorded in the manifest).
    seed: u64,
}

/// Servers of this run by deployment index: running, or failed with a reason.
#[derive(Default)]
struct Servers {
    live: HashMap<usize, Deployed>,
    failed: HashMap<usize, String>,
}

impl RunCtx<'_> {
    /// Run every (deployment, round) unit in the order the matrix asks for, then the
    /// adaptive repeats. A server lives from its first unit to its last (or one unit, with
    /// `restart`); a deployment that failed to start fails its later units the same way.
    async fn run_deployments(&mut self, todo: &[Deployment]) -> Result<()> {
        let m = &self.loaded.matrix;
        let units = schedule(todo.len(), m.iterations, m.repeat.order, self.seed);
        let last_unit: HashMap<usize, usize> = units
            .iter()
            .enumerate()
            .map(|(pos, (d, _))| (*d, pos))
            .collect();
        let mut servers = Servers::default();
        let mut ran_any = false;
        for (pos, &(di, round)) in units.iter().enumerate() {
            let d = &todo[di];
            let cells: Vec<(Cell, u32)> = d
                .cells
                .iter()
                .filter(|c| !self.done.contains(&(c.key(), round)))
                .map(|c| (c.clone(), round))
                .collect();
            if !cells.is_empty() {
                if ran_any {
                    self.cooldown().await;
                }
                ran_any = true;
                self.run_unit(d, di, &cells, &mut servers).await?;
            }
            if m.repeat.restart || last_unit[&di] == pos {
                self.stop(d, di, &mut servers).await?;
            }
        }
        self.adaptive_repeats(todo, &mut servers).await?;
        for (di, d) in todo.iter().enumerate() {
            self.stop(d, di, &mut servers).await?;
        }
        Ok(())
    }

    async fn cooldown(&self) {
        if let Some(d) = self
            .loaded
            .matrix
            .repeat
            .cooldown
            .and_then(|l| l.as_duration())
        {
            self.progress
                .status(format!("cooling down {}s", d.as_secs_f64()));
            tokio::time::sleep(d).await;
        }
    }

    /// Keep repeating cells whose report metric varies more than `until_cv` percent, one
    /// round at a time, until they settle, reach `max_iterations` or use up `max_time`.
    async fn adaptive_repeats(&mut self, todo: &[Deployment], servers: &mut Servers) -> Result<()> {
        let m = &self.loaded.matrix;
        let Some(target) = m.repeat.until_cv else {
            return Ok(());
        };
        let max_iterations = m.repeat.max_iterations.unwrap_or(10).max(m.iterations);
        let deadline = m
            .repeat
            .max_time
            .and_then(|l| l.as_duration())
            .map(|d| Instant::now() + d);
        for round in m.iterations + 1..=max_iterations {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                self.progress
                    .line("adaptive repeats: time budget used up".into());
                break;
            }
            let rows = self.dir.rows()?;
            let noisy = |c: &Cell| noisy(m, &c.key(), &rows, target);
            let units = schedule(
                todo.len(),
                1,
                m.repeat.order,
                self.seed.wrapping_add(round as u64),
            );
            // Some cell is still noisy (it may already have this round's row from before a
            // resume: one result per iteration, so that row is kept, not measured again).
            let mut any = false;
            for (di, _) in units {
                let d = &todo[di];
                let noisy_cells: Vec<&Cell> = d.cells.iter().filter(|c| noisy(c)).collect();
                any |= !noisy_cells.is_empty();
                let cells: Vec<(Cell, u32)> = noisy_cells
                    .into_iter()
                    .filter(|c| !self.done.contains(&(c.key(), round)))
                    .map(|c| (c.clone(), round))
                    .collect();
                if cells.is_empty() {
                    continue;
                }
                if round > 1 {
                    self.cooldown().await;
                }
                self.progress.add(cells.len() as u64);
                self.run_unit(d, di, &cells, servers).await?;
                if m.repeat.restart {
                    self.stop(d, di, servers).await?;
                }
            }
            if !any {
                break;
            }
        }
        Ok(())
    }

    /// One pass over `cells` of deployment `d`, starting its server when it is not running.
    async fn run_unit(
        &mut self,
        d: &Deployment,
        di: usize,
        cells: &[(Cell, u32)],
        servers: &mut Servers,
    ) -> Result<()> {
        if let Some(reason) = servers.failed.get(&di) {
            return self.fail_cells(cells, &reason.clone());
        }
        if let Entry::Vacant(slot) = servers.live.entry(di) {
            match self.start(d).await? {
                Ok(deployed) => {
                    slot.insert(deployed);
                }
                Err(reason) => {
                    servers.failed.insert(di, reason.clone());
                    return self.fail_cells(cells, &reason);
                }
            }
        }
        self.run_cells(cells, &servers.live[&di]).await
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
            (None, Some(b)) => engine.ensure_built(server, &b.dir, &b.args).await,
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

    /// Start (or attach to) the server of `d`, record what it reports and verify the
    /// variant. The inner error is the reason its cells fail.
    async fn start(&mut self, d: &Deployment) -> Result<Result<Deployed, String>> {
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
            servers::provision(spec, None, "", "", config, &ddir).await
        } else {
            match self.image(&d.server).await {
                Err(e) => Err(anyhow::anyhow!(e)),
                Ok(image) => {
                    let launch = Launch {
                        engine: self.engine.expect("invariant: docker connected"),
                        run_id: self.run_id,
                        instance: self.instance,
                        password: &self.password,
                        host_network: m.network == Network::Host,
                        start_timeout: m
                            .start_timeout
                            .and_then(|l| l.as_duration())
                            .unwrap_or(Duration::from_secs(180)),
                        cpuset: m.servers[&d.server].cpuset.clone(),
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
            Err(e) => {
                let reason = format!("server failed to start: {e:#}");
                self.progress
                    .line(format!("{}/{}: {reason}", d.server, d.config));
                facts.status = DeploymentStatus::Failed;
                facts.error = Some(reason.clone());
                self.record_deployment(facts)?;
                return Ok(Err(reason));
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
        if let Some(reason) = deployed.mismatch() {
            self.progress
                .line(format!("{}/{}: {reason}", d.server, d.config));
            facts.status = DeploymentStatus::ConfigMismatch;
            facts.error = Some(reason.clone());
            if let Err(e) = servers::teardown(self.engine, &deployed, &ddir).await {
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

    /// Save the server's log and remove its container, if it is running.
    async fn stop(&mut self, d: &Deployment, di: usize, servers: &mut Servers) -> Result<()> {
        let Some(deployed) = servers.live.remove(&di) else {
            return Ok(());
        };
        let ddir = self.dir.deployment_dir(&d.slug())?;
        if let Err(e) = servers::teardown(self.engine, &deployed, &ddir).await {
            self.progress.line(format!("warning: {e:#}"));
        }
        if let Some(f) = self
            .man
            .deployments
            .iter_mut()
            .find(|f| f.server == d.server && f.config == d.config)
        {
            f.finished_at = Some(manifest::now());
        }
        save_manifest(self.dir, self.man)
    }

    /// Add or update the manifest entry of a deployment (one per server x config; `starts`
    /// counts restarts).
    fn record_deployment(&mut self, facts: DeploymentFacts) -> Result<()> {
        let starts = self
            .man
            .deployments
            .iter()
            .find(|f| f.server == facts.server && f.config == facts.config)
            .map(|f| f.starts)
            .unwrap_or(0);
        self.man
            .deployments
            .retain(|f| !(f.server == facts.server && f.config == facts.config));
        self.man.deployments.push(DeploymentFacts {
            starts: starts + 1,
            ..facts
        });
        save_manifest(self.dir, self.man)
    }

    fn fail_cells(&mut self, cells: &[(Cell, u32)], reason: &str) -> Result<()> {
        for (cell, i) in cells {
            let kind = self.loaded.matrix.workloads[&cell.workload].kind();
            self.dir
                .append(&ResultRow::for_cell(cell, kind, *i).failed(reason))?;
            self.progress.advance();
        }
        Ok(())
    }

    async fn run_cells(&mut self, cells: &[(Cell, u32)], deployed: &Deployed) -> Result<()> {
        let m = &self.loaded.matrix;
        for (cell, i) in cells {
            let (cell, i) = (cell, *i);
            let workload = &m.workloads[&cell.workload];
            if m.load.until.is_some() {
                let stops = sweep_stops(m, &self.dir.rows()?);
                if past_the_stop(m, &stops, cell) {
                    self.progress.line(format!(
                        "{cell} #{i}: not run: the sweep stopped below it (load.until)"
                    ));
                    self.progress.advance();
                    continue;
                }
            }
            {
                let row = ResultRow::for_cell(cell, workload.kind(), i);
                let live = Arc::new(AtomicU64::new(0));
                let phase = Arc::new(Live::default());
                let label = format!("{cell} #{i}");
                let ticker = self.ticker(label.clone(), live.clone(), phase.clone());
                let ctx = Ctx {
                    server: deployed,
                    engine: cell.engine.as_deref(),
                    concurrency: cell.concurrency,
                    warmup: m.warmup,
                    length: m.length,
                    live,
                    pace: cell
                        .rate
                        .map(|r| m.load.pace(r, cell_seed(self.seed, cell, i))),
                    phase,
                    window: Arc::new(Window::new(deployed.cgroup.clone())),
                };
                let stall_timeout = m
                    .stall_timeout
                    .and_then(|l| l.as_duration())
                    .unwrap_or(DEFAULT_STALL_TIMEOUT);
                let result = workload.run(&ctx, stall_timeout).await;
                ticker.abort();
                let row = match result {
                    Ok(mut meas) => {
                        // Each second's target, where the pacer counted it (not sysbench's).
                        if let Some(open) = meas.open.as_ref().filter(|o| !o.per_second.is_empty())
                        {
                            for s in &mut meas.samples {
                                let n = open.per_second.get((s.second as usize).saturating_sub(1));
                                s.target_ps = Some(n.copied().unwrap_or(0) as f64);
                            }
                        }
                        SampleSink::new(self.dir, cell, i).write(&meas.samples)?;
                        SampleSink::new(self.dir, cell, i)
                            .warmup()
                            .write(&meas.warmup_samples)?;
                        crate::results::operations::OperationSink::new(self.dir, cell, i)
                            .write(&meas.operations)?;
                        let mut row = meas.into_row(row);
                        if row.is_ok() {
                            let family = m.servers[&cell.server].kind().family();
                            family.result_columns(&meas.server, &mut row);
                            if let (Some(used), Some(q)) = (ctx.window.used(), row.queries) {
                                let cpu_s = used.cpu_ns as f64 / 1e9;
                                row.srv_cpu_s = Some((cpu_s * 1e6).round() / 1e6);
                                row.srv_cpu_us_per_op = (q > 0).then(|| cpu_s * 1e6 / q as f64);
                                row.srv_read_bytes = Some(used.read_bytes);
                                row.srv_write_bytes = Some(used.write_bytes);
                                row.srv_ctx_switches = used.ctx_switches;
                            }
                            // Only from a histogram: an external tool's summary cannot say.
                            let t = m.report.apdex_t_ms(&cell.workload);
                            if let (Some(t), true) = (t, meas.latency.count() > 0) {
                                row.apdex = meas.latency.apdex(t, meas.errors).score();
                                row.apdex_t_ms = Some(t);
                            }
                        }
                        row
                    }
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
}

/// The HTML report in a run directory.
pub const REPORT_HTML: &str = "report.html";

/// Draw a run's charts into charts/, then render summary.md and report.html from what the
/// directory holds; returns the summary.
pub fn store_reports(dir: &RunDir, m: &Matrix, template: Option<&Path>) -> Result<String> {
    let charts = report::summary::write_charts(dir, m)?;
    let summary = report::summary::render(dir, m, template)?;
    crate::results::rundir::replace_file(
        &dir.file(crate::results::rundir::SUMMARY_MD),
        summary.as_bytes(),
    )?;
    let view = crate::export::RunView {
        dir,
        matrix: Some(m),
        template,
    };
    let page = crate::export::html::run_page(&view, charts)?;
    crate::results::rundir::replace_file(&dir.file(REPORT_HTML), page.as_bytes())?;
    Ok(summary)
}
