//! `rmatrix run`: the pipeline glue. matrix -> plan -> provision -> drive -> record -> report.
//! Failures of one deployment or cell are recorded as data and the run goes on.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rand::distr::{Alphanumeric, SampleString};

mod sweep;

use crate::drive::{self, CellOutput, CellSpec};
use crate::matrix::model::{Matrix, Network, Selector};
use crate::matrix::schedule::schedule;
use crate::matrix::{expand, Cell, Deployment, LoadedMatrix};
use crate::measure::seconds::Live;
use crate::model::CellKey;
use crate::progress::Progress;
use crate::report;
use crate::results::manifest::{
    self, DeploymentFacts, DeploymentStatus, DockerFacts, EngineFacts, Host, ImageFacts, Manifest,
};
use crate::results::rundir::{MANIFEST, MATRIX_COPY};
use crate::results::samples::SampleSink;
use crate::results::{ResultRow, RunDir, FORMAT_VERSION};
use crate::servers::address::EngineAddr;
use crate::servers::docker::Engine;
use crate::servers::family::HostSide;
use crate::servers::{self, Deployed, Launch};

pub struct RunOptions {
    pub matrix: Option<PathBuf>,
    /// Exact run directory to create (default: reports/runs/<time>-<name>).
    pub out: Option<PathBuf>,
    pub resume: Option<PathBuf>,
    pub only: Vec<Selector>,
    pub only_text: Vec<String>,
    pub template: Option<PathBuf>,
    pub quiet: bool,
    /// The pool (`--engine`, `--engines`); empty: the one engine Docker's CLI would use.
    pub engines: Vec<EngineAddr>,
    /// The engine every client container runs on (`client_engine:` of a hosts file).
    pub client_engine: Option<String>,
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
    let sweeps = read_sweeps(m, &rows, opened.dir.as_ref())?;
    let missing = |c: &Cell| {
        if sweeps.skips(c) {
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
    if let (Some(old), true) = (&opened.old, opts.engines.is_empty()) {
        if !old.engines.is_empty() {
            let names: Vec<&str> = old.engines.iter().map(|e| e.name.as_str()).collect();
            return Err(crate::UsageError(format!(
                "this run was pooled across engines {}: pass the same --engine/--engines to resume it",
                names.join(", ")
            ))
            .into());
        }
    }
    let pooled = !opts.engines.is_empty();
    let addrs = match pooled {
        true => opts.engines.clone(),
        false => vec![
            crate::servers::address::from_env(&crate::servers::address::Env::current())
                .map_err(crate::servers::docker::EngineUnavailable)?,
        ],
    };
    let mut pool: Vec<Engine> = Vec::new();
    if needs_docker {
        for a in &addrs {
            pool.push(Engine::connect_to(a).await?);
        }
    }
    let mut engine_facts = Vec::new();
    if pooled {
        for (a, e) in addrs.iter().zip(&pool) {
            engine_facts.push(EngineFacts {
                name: a.name.clone(),
                address: a.url(),
                client: match (&opts.client_engine, a.client_in_container) {
                    (Some(c), _) => format!("engine:{c}"),
                    (None, true) => "container".into(),
                    (None, false) => "process".into(),
                },
                host: e.host_facts().await?,
                lost: None,
            });
        }
    }
    let engine = pool.first().cloned();
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
    let man = match opened.old {
        // Resuming: the run keeps its identity (id, host, start, schedule); what this
        // attempt adds is appended to what earlier attempts learnt.
        Some(old) => Manifest {
            docker: docker.or(old.docker.clone()),
            finished_at: None,
            engines: match pooled {
                true => engine_facts,
                false => old.engines.clone(),
            },
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
            engines: engine_facts,
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
    let mut guard = ContainerGuard::new(addrs.clone(), !pool.is_empty(), &run_id, &instance);
    if opts.resume.is_some() {
        for e in &pool {
            // A killed earlier attempt may have left its servers up, under the names this
            // one is about to use.
            let n = e
                .remove_run(&run_id, &instance)
                .await
                .context("failed to remove the containers an earlier attempt left")?;
            if n > 0 {
                eprintln!(
                    "removed {n} container(s) an earlier attempt of run {run_id} left on engine {}",
                    e.name()
                );
            }
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
    let shared = Mutex::new(man);
    let client_engine = opts
        .client_engine
        .as_ref()
        .and_then(|c| pool.iter().find(|e| e.name() == c));
    let ctx_for = |engine: Option<&Engine>, addr: Option<&EngineAddr>| {
        let client = match (client_engine, addr) {
            (Some(c), Some(_)) => Client::Container(c.clone()),
            (None, Some(a)) if a.client_in_container => Client::Container(
                engine
                    .cloned()
                    .expect("invariant: a pool engine is connected"),
            ),
            _ => Client::Process,
        };
        RunCtx {
            loaded,
            dir: &dir,
            done,
            engine: engine.cloned(),
            engine_name: if pooled {
                engine.map(|e| e.name().to_string())
            } else {
                None
            },
            client,
            client_images: BTreeMap::new(),
            run_id: &run_id,
            instance: &instance,
            password: Alphanumeric.sample_string(&mut rand::rng(), 24),
            progress: &progress,
            man: &shared,
            images: BTreeMap::new(),
            seed,
            lost: None,
            measured: Done::new(),
        }
    };
    let work = async {
        if pool.len() <= 1 {
            let mut ctx = ctx_for(engine.as_ref(), addrs.first().filter(|_| pooled));
            ctx.run_deployments(&plan.deployments).await
        } else {
            let ctxs = pool
                .iter()
                .zip(&addrs)
                .map(|(e, a)| ctx_for(Some(e), Some(a)))
                .collect();
            run_pool(ctxs, &plan.deployments).await
        }
    };
    let interrupted = tokio::select! {
        r = work => { r?; false }
        _ = tokio::signal::ctrl_c() => true,
        // A CI job's timeout or `kill` sends SIGTERM: the same clean stop as Ctrl-C.
        _ = terminated() => true,
    };
    progress.finish();
    // Also on Ctrl-C: whatever this run started goes away, on every engine.
    // After an interrupt, a create request the dropped work had already sent can land after
    // a pass has listed the containers: passes then repeat, a second apart, until one finds
    // none anywhere (at most five).
    let mut all_removed = true;
    for pass in 0..5 {
        if pass > 0 {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        }
        let mut found = 0;
        for e in &pool {
            match e.remove_run(&run_id, &instance).await {
                Ok(n) => found += n,
                Err(err) => {
                    all_removed = false;
                    eprintln!(
                        "warning: failed to remove this run's containers on engine {}: {err:#}",
                        e.name()
                    );
                }
            }
        }
        if !interrupted || !all_removed || (pass > 0 && found == 0) {
            break;
        }
    }
    if all_removed {
        guard.disarm();
    }
    let mut man = shared.into_inner().unwrap_or_else(|e| e.into_inner());
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

/// Where each sweep with a stop rule stands (`load.until`), from the rows so far; the
/// batch means of a level measured once come from the run's samples.csv.
fn read_sweeps(m: &Matrix, rows: &[ResultRow], dir: Option<&RunDir>) -> Result<sweep::Sweeps> {
    if m.load.until.is_none() {
        return Ok(sweep::Sweeps::default());
    }
    let qps = match dir {
        Some(d) => crate::results::samples::read_series(
            &d.file(crate::results::samples::SAMPLES_CSV),
            "qps",
        )?,
        None => Default::default(),
    };
    let batches = |r: &ResultRow| {
        let s = qps.get(&(r.cell_key().as_str().to_string(), r.iteration))?;
        crate::stats::batch_means(s).map(|b| b.means)
    };
    Ok(sweep::Sweeps::read(m, rows, &batches))
}

fn save_manifest(dir: &RunDir, man: &Manifest) -> Result<()> {
    dir.write_json(MANIFEST, &serde_json::to_value(man)?)
}

/// Removes the run's containers (by label) when dropped while armed. Drop cannot await, and
/// the run's own runtime may be the one unwinding, so it connects afresh on its own thread.
struct ContainerGuard {
    addrs: Vec<EngineAddr>,
    run_id: String,
    instance: String,
    armed: bool,
}

impl ContainerGuard {
    fn new(addrs: Vec<EngineAddr>, armed: bool, run_id: &str, instance: &str) -> ContainerGuard {
        ContainerGuard {
            addrs,
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
        let addrs = self.addrs.clone();
        let removed = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async {
                let mut all = Some(0);
                for a in &addrs {
                    let one = match Engine::connect_to(a).await {
                        Ok(engine) => engine.remove_run(&run_id, &instance).await.ok(),
                        Err(_) => None,
                    };
                    all = all.zip(one).map(|(x, y)| x + y);
                }
                all
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
    /// This worker's engine (each engine of a pool has its own worker).
    engine: Option<Engine>,
    /// Its name in a pooled run (results.csv's `docker_engine`), None for one engine.
    engine_name: Option<String>,
    /// Where this worker's cells are driven from.
    client: Client,
    /// The client image on each engine that runs client containers (by engine name), built
    /// on first use.
    client_images: BTreeMap<String, Result<String, String>>,
    run_id: &'a str,
    instance: &'a str,
    password: String,
    progress: &'a Progress,
    /// Shared by the pool's workers; never held across an await.
    man: &'a Mutex<Manifest>,
    /// Image reference per server, or why it could not be had.
    images: BTreeMap<String, Result<String, String>>,
    /// Seed of the shuffled order (recorded in the manifest).
    seed: u64,
    /// Why this worker's engine stopped answering, once it did: it takes no more work.
    lost: Option<String>,
    /// (cell, iteration) pairs this attempt has measured or tried (a sweep measures some
    /// levels' later iterations early; their rounds then leave them be).
    measured: Done,
}

/// Where a worker's load generator runs.
enum Client {
    /// In this process (the local engine: its servers share this host's loopback).
    Process,
    /// In an rmatrix container on this engine's host, with host networking.
    Container(Engine),
}

/// Run the deployments across the pool: each engine's worker takes the next deployment from
/// one queue (in the matrix's order) and runs all its rounds, so one engine runs one
/// deployment at a time. A worker whose engine stops answering leaves the pool; the queue
/// goes on with the others, and what no engine is left for fails with that reason.
async fn run_pool(ctxs: Vec<RunCtx<'_>>, todo: &[Deployment]) -> Result<()> {
    let first = ctxs.first().expect("invariant: a pool has engines");
    let m = &first.loaded.matrix;
    let order = schedule(todo.len(), 1, m.repeat.order, first.seed);
    let queue = Mutex::new(
        order
            .into_iter()
            .map(|(d, _)| d)
            .collect::<std::collections::VecDeque<_>>(),
    );
    let workers = ctxs.into_iter().map(|mut ctx| {
        let queue = &queue;
        async move {
            loop {
                let next = queue.lock().expect("queue lock").pop_front();
                let Some(di) = next else { return Ok(ctx) };
                ctx.run_deployments(&todo[di..=di]).await?;
                if ctx.lost.is_none() && !ctx.engine_alive().await {
                    ctx.mark_lost("stopped answering".into())?;
                }
                if ctx.lost.is_some() {
                    return Ok(ctx);
                }
            }
        }
    });
    let done: Vec<Result<RunCtx<'_>>> = futures_util::future::join_all(workers).await;
    let mut last = None;
    for r in done {
        last = Some(r?);
    }
    let left: Vec<usize> = queue
        .into_inner()
        .expect("queue lock")
        .into_iter()
        .collect();
    if let (Some(mut ctx), false) = (last, left.is_empty()) {
        let reason = "no engine of the pool is left to run it".to_string();
        for di in left {
            let cells: Vec<(Cell, u32)> = (1..=m.iterations)
                .flat_map(|i| todo[di].cells.iter().map(move |c| (c.clone(), i)))
                .filter(|(c, i)| !ctx.done.contains(&(c.key(), *i)))
                .collect();
            ctx.fail_cells(&cells, &reason)?;
        }
    }
    Ok(())
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
                .filter(|c| !self.is_done(c, round))
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
                    .filter(|c| !self.is_done(c, round))
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
        self.run_cells(cells, &d.cells, &servers.live[&di]).await
    }

    /// Image of a container server: built or pulled once per run.
    async fn image(&mut self, server: &str) -> Result<String, String> {
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
    async fn start(&mut self, d: &Deployment) -> Result<Result<Deployed, String>> {
        let m = &self.loaded.matrix;
        let config = &m.configs[&d.config];
        let ddir = self.dir.deployment_dir(&d.slug())?;
        let mut facts = DeploymentFacts {
            server: d.server.clone(),
            config: d.config.clone(),
            engine: self.engine_name.clone(),
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
    fn start_failed(
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

    /// Save the server's log and remove its container, if it is running.
    async fn stop(&mut self, d: &Deployment, di: usize, servers: &mut Servers) -> Result<()> {
        let Some(deployed) = servers.live.remove(&di) else {
            return Ok(());
        };
        let ddir = self.dir.deployment_dir(&d.slug())?;
        if let Err(e) = servers::teardown(self.engine.as_ref(), &deployed, &ddir).await {
            self.progress.line(format!("warning: {e:#}"));
        }
        let mut man = self.man.lock().expect("manifest lock");
        if let Some(f) = man
            .deployments
            .iter_mut()
            .find(|f| f.server == d.server && f.config == d.config)
        {
            f.finished_at = Some(manifest::now());
        }
        save_manifest(self.dir, &man)
    }

    /// Add or update the manifest entry of a deployment (one per server x config; `starts`
    /// counts restarts).
    fn record_deployment(&mut self, facts: DeploymentFacts) -> Result<()> {
        let mut man = self.man.lock().expect("manifest lock");
        let starts = man
            .deployments
            .iter()
            .find(|f| f.server == facts.server && f.config == facts.config)
            .map(|f| f.starts)
            .unwrap_or(0);
        man.deployments
            .retain(|f| !(f.server == facts.server && f.config == facts.config));
        man.deployments.push(DeploymentFacts {
            starts: starts + 1,
            ..facts
        });
        save_manifest(self.dir, &man)
    }

    fn fail_cells(&mut self, cells: &[(Cell, u32)], reason: &str) -> Result<()> {
        for (cell, i) in cells {
            let kind = self.loaded.matrix.workloads[&cell.workload].kind();
            let mut row = ResultRow::for_cell(cell, kind, *i).failed(reason);
            row.docker_engine = self.engine_name.clone().unwrap_or_default();
            self.dir.append(&row)?;
            self.progress.advance();
        }
        Ok(())
    }

    /// Measure `cells` (each with its iteration) on `deployed`; a sweep's cells above its
    /// stop are skipped, and the levels its stop rule asks to measure again (`all` holds the
    /// deployment's cells) are measured as soon as it asks.
    async fn run_cells(
        &mut self,
        cells: &[(Cell, u32)],
        all: &[Cell],
        deployed: &Deployed,
    ) -> Result<()> {
        let m = &self.loaded.matrix;
        for (cell, i) in cells {
            let (cell, i) = (cell, *i);
            if let Some(reason) = self.lost.clone() {
                self.fail_cells(&[(cell.clone(), i)], &reason)?;
                continue;
            }
            if m.load.until.is_some() {
                let sweeps = read_sweeps(m, &self.dir.rows()?, Some(self.dir))?;
                if sweeps.skips(cell) {
                    self.progress.line(format!(
                        "{cell} #{i}: not run: the sweep stopped below it (load.until)"
                    ));
                    self.progress.advance();
                    continue;
                }
            }
            self.measure_one(cell, i, deployed).await?;
            self.settle_sweeps(all, deployed).await?;
        }
        self.settle_sweeps(all, deployed).await
    }

    /// Measure again what the sweeps' stop rules ask for before they can tell a step, until
    /// they ask for nothing (each (cell, iteration) at most once per attempt: the rule's own
    /// bound, `max_measurements`, ends it sooner).
    async fn settle_sweeps(&mut self, all: &[Cell], deployed: &Deployed) -> Result<()> {
        let m = &self.loaded.matrix;
        if m.load.until.is_none() {
            return Ok(());
        }
        loop {
            if self.lost.is_some() {
                return Ok(());
            }
            let sweeps = read_sweeps(m, &self.dir.rows()?, Some(self.dir))?;
            let wanted: Vec<(Cell, u32)> = sweeps
                .wanted(all)
                .into_iter()
                .filter(|(c, i)| !self.is_done(c, *i))
                .map(|(c, i)| (c.clone(), i))
                .collect();
            if wanted.is_empty() {
                return Ok(());
            }
            for (cell, i) in wanted {
                self.progress.add(1);
                self.progress.line(format!(
                    "{cell} #{i}: measured again: the sweep cannot tell its step yet (load.until)"
                ));
                self.measure_one(&cell, i, deployed).await?;
            }
        }
    }

    /// Measured (or tried) already: before this attempt, or by it.
    fn is_done(&self, c: &Cell, i: u32) -> bool {
        let key = (c.key(), i);
        self.done.contains(&key) || self.measured.contains(&key)
    }

    /// Measure one cell iteration and record its row, samples and operations.
    async fn measure_one(&mut self, cell: &Cell, i: u32, deployed: &Deployed) -> Result<()> {
        let m = &self.loaded.matrix;
        self.measured.insert((cell.key(), i));
        let label = format!("{cell} #{i}");
        let external = m.servers[&cell.server].external.is_some();
        let out = match (&self.client, external) {
            (Client::Container(on), false) => {
                let on = on.clone();
                self.progress
                    .status(format!("{label}: client container on engine {}", on.name()));
                self.remote_cell(&on, cell, i, deployed).await
            }
            _ => {
                let live = Arc::new(AtomicU64::new(0));
                let phase = Arc::new(Live::default());
                let ticker = self.ticker(label.clone(), live.clone(), phase.clone());
                let out = drive::measure(m, cell, i, self.seed, deployed, live, phase).await;
                ticker.abort();
                out
            }
        };
        let CellOutput {
            mut row,
            samples,
            warmup_samples,
            operations,
        } = out;
        row.docker_engine = self.engine_name.clone().unwrap_or_default();
        SampleSink::new(self.dir, cell, i).write(&samples)?;
        SampleSink::new(self.dir, cell, i)
            .warmup()
            .write(&warmup_samples)?;
        crate::results::operations::OperationSink::new(self.dir, cell, i).write(&operations)?;
        let pos = self.progress.position() + 1;
        let on = match &self.engine_name {
            Some(n) => format!(" [{n}]"),
            None => String::new(),
        };
        self.progress.line(match row.is_ok() {
            true => format!(
                "[{pos}/{}] {label}{on}: {:.0} qps, p95 {:.3} ms, {} errors",
                self.progress.length(),
                row.qps.unwrap_or(0.0),
                row.lat_p95_ms.unwrap_or(0.0),
                row.errors.unwrap_or(0)
            ),
            false => format!(
                "[{pos}/{}] {label}{on}: FAILED: {}",
                self.progress.length(),
                row.error
            ),
        });
        self.dir.append(&row)?;
        self.progress.advance();
        if !row.is_ok() && self.lost.is_none() && !self.engine_alive().await {
            self.mark_lost("stopped answering".into())?;
        }
        Ok(())
    }

    /// One cell iteration measured by a client container on `on` (the engine's host):
    /// a failure to run it is the cell's failure, like any other.
    async fn remote_cell(
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
    async fn client_image(&mut self, on: &Engine) -> Result<String, String> {
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

    /// Does this worker's engine still answer? (No engine: nothing to lose.)
    async fn engine_alive(&self) -> bool {
        match &self.engine {
            Some(e) => e.alive().await,
            None => true,
        }
    }

    /// This worker's engine left the pool: say so, and record it in the manifest.
    fn mark_lost(&mut self, why: String) -> Result<()> {
        let name = self.engine_name.clone().unwrap_or_else(|| "local".into());
        let reason = format!("engine {name} {why}");
        self.progress.line(format!(
            "{reason}: its remaining deployments go to the other engines"
        ));
        let mut man = self.man.lock().expect("manifest lock");
        if let Some(f) = man.engines.iter_mut().find(|f| f.name == name) {
            f.lost = Some(reason.clone());
        }
        save_manifest(self.dir, &man)?;
        self.lost = Some(reason);
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

/// How long a server may take to answer after its container starts.
fn start_timeout(m: &Matrix) -> Duration {
    m.start_timeout
        .and_then(|l| l.as_duration())
        .unwrap_or(Duration::from_secs(180))
}
