//! `rmatrix run`: the pipeline glue. matrix -> plan -> provision -> drive -> record -> report.
//! Failures of one deployment or cell are recorded as data and the run goes on.

use std::collections::hash_map::Entry;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};
use rand::distr::{Alphanumeric, SampleString};

mod backend;
mod cleanup;
mod dataset;
mod deploy;
mod docker;
mod duet;
mod ledger;
mod open;
mod pool;
mod sweep;
mod todo;
mod worker;

use cleanup::*;
use docker::*;
use ledger::*;
use open::*;
use pool::*;
use todo::*;
use worker::*;

use crate::drive::{self, CellOutput, CellSpec};
use crate::matrix::model::{Matrix, Network, Selector};
use crate::matrix::schedule::schedule;
use crate::matrix::{expand, Cell, Deployment, LoadedMatrix};
use crate::measure::seconds::Live;
use crate::model::CellKey;
use crate::progress::Progress;
use crate::report;
use crate::results::lock::RunLock;
use crate::results::manifest::{
    self, DataFacts, DataHow, DeploymentFacts, DeploymentStatus, DockerFacts, EngineFacts, Host,
    ImageFacts, Manifest,
};
use crate::results::rundir::{MANIFEST, MATRIX_COPY};
use crate::results::samples::SampleSink;
use crate::results::{ResultRow, RunDir, FORMAT_VERSION};
use crate::servers::engines::address::EngineAddr;
use crate::servers::engines::docker::Engine;
use crate::servers::engines::Containers as _;
use crate::servers::family::HostSide;
use crate::servers::{self, Deployed, Launch};

pub(crate) struct RunOptions {
    /// The matrix, loaded and checked by the caller (None with `--resume`: the run's copy).
    pub(crate) matrix: Option<LoadedMatrix>,
    /// Exact run directory to create (default: reports/runs/<time>-<name>).
    pub(crate) out: Option<PathBuf>,
    pub(crate) resume: Option<PathBuf>,
    pub(crate) only: Vec<Selector>,
    pub(crate) only_text: Vec<String>,
    pub(crate) template: Option<PathBuf>,
    pub(crate) quiet: bool,
    /// The pool (`--engine`, `--engines`); empty: the one engine Docker's CLI would use.
    pub(crate) engines: Vec<EngineAddr>,
    /// The engine every client container runs on (`client_engine:` of a hosts file).
    pub(crate) client_engine: Option<String>,
}

impl RunOptions {
    /// A quiet run of `loaded` into `out`, only the cells `only` selects: what a command
    /// that runs matrices of its own (`bisect`, `ab`) asks for.
    pub(crate) fn quiet_into(
        loaded: LoadedMatrix,
        out: &std::path::Path,
        only: &[String],
    ) -> Result<Self> {
        let selectors = crate::matrix::only::parse_only(&loaded, only)?;
        Ok(RunOptions {
            matrix: Some(loaded),
            out: Some(out.to_path_buf()),
            resume: None,
            only: selectors,
            only_text: only.to_vec(),
            template: None,
            quiet: true,
            engines: Vec::new(),
            client_engine: None,
        })
    }
}

/// How a run ended (an interrupted one is an error, `Interrupted`).
pub(crate) struct RunOutcome {
    /// Iterations whose current row failed: the exit code says so.
    pub(crate) failed: usize,
    /// The run directory (for `run --store`).
    pub(crate) dir: std::path::PathBuf,
}

impl RunOutcome {
    /// How `rmatrix run` ended: some cells failed, or all succeeded.
    pub(crate) fn outcome(&self) -> crate::error::Outcome {
        match self.failed {
            0 => crate::error::Outcome::Done,
            _ => crate::error::Outcome::CellsFailed,
        }
    }
}

/// The run was stopped by Ctrl-C (exit code 130).
#[derive(Debug)]
pub(crate) struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

/// Ctrl-C.
impl crate::error::Kinded for Interrupted {
    fn kind(&self) -> crate::error::ErrorKind {
        crate::error::ErrorKind::Interrupted
    }
}

crate::error::kinded!(Interrupted);

pub(crate) async fn run(opts: RunOptions) -> Result<RunOutcome> {
    let mut stop = Stop::listen();
    remove_stale_secrets();
    let opened = open_run(&opts)?;
    let (loaded, done) = (&opened.loaded, &opened.done);
    let m = &loaded.matrix;
    let plan = expand(m, &opened.only);
    if m.repeat.duet {
        duet::same_cells(m, &plan.deployments)?;
    }
    let (total, has_work) = work_left(&opened, &plan)?;
    if let (Some(dir), false) = (&opened.dir, has_work.iter().any(|w| *w)) {
        return nothing_to_resume(dir, m, &opts);
    }

    let needs_docker = before_writing(&opts, &opened, &plan, &has_work)?;
    let pooled = !opts.engines.is_empty();
    let (addrs, pool, engine_facts) = connect_pool(&opts, needs_docker).await?;
    let docker = match pool.first() {
        Some(e) => Some(docker_facts(e).await?),
        None => None,
    };

    let (dir, _lock) = held_dir(opened.dir, opened.lock, &opts, loaded)?;
    let old = (opened.old, opened.copied);
    let man = manifest_for(&opts, loaded, &plan, &dir, old, docker, engine_facts);
    let run_id = man.run_id.clone();
    let instance = man.instance.clone();
    let seed = man.schedule.seed;
    save_manifest(&dir, &man)?;

    // From here on, every way out (an error returned with `?`, a panic) removes the
    // containers this run starts; the normal path below removes them itself and disarms it.
    let mut guard = ContainerGuard::new(addrs.clone(), !pool.is_empty(), &run_id, &instance);
    let (mut interrupted, mut lost) = (false, None);
    if opts.resume.is_some() {
        tokio::select! {
            r = remove_leftovers(&pool, &run_id, &instance) => r?,
            _ = stop.wait() => interrupted = true,
        }
    }

    let progress = Progress::new(total, opts.quiet);
    set_eta(&progress, loaded, &plan, total);
    announce(&progress, m, &plan, total, &dir);
    let manifest = Mutex::new(man);
    let shared = RunShared {
        loaded,
        dir: &dir,
        done,
        run_id: &run_id,
        instance: &instance,
        progress: &progress,
        man: &manifest,
        seed,
        pooled,
        client_engine: opts
            .client_engine
            .as_ref()
            .and_then(|c| pool.iter().find(|e| e.name() == c)),
    };
    if !interrupted {
        let work = run_workers(&shared, &pool, &addrs, &plan.deployments);
        tokio::select! {
            r = work => lost = r?,
            _ = stop.wait() => interrupted = true,
        };
    }
    progress.finish();
    // Also on Ctrl-C: whatever this run started goes away, on every engine.
    let all_removed = remove_passes(&pool, &run_id, &instance, interrupted).await;
    if all_removed {
        guard.disarm();
    }
    let man = manifest.into_inner().unwrap_or_else(|e| e.into_inner());
    let outcome = finish(&dir, m, &opts, man)?;
    ended(&dir, outcome, interrupted, lost)
}

/// What is checked before anything is written: the CPU's counter (`counted: perf`), the
/// pool a resumed run was started with, one engine for a duet. Returns whether the run
/// needs an engine at all (a deployment with work left that is not `external`).
fn before_writing(
    opts: &RunOptions,
    opened: &Opened,
    plan: &crate::matrix::Plan,
    has_work: &[bool],
) -> Result<bool> {
    let m = &opened.loaded.matrix;
    // The CPU's counter is there before anything is written (`counted: perf`).
    if m.counted == Some(crate::matrix::model::Counted::Perf) {
        crate::measure::perf_count::available().map_err(crate::error::UsageError)?;
    }
    // The engine answers before anything is written: a run that cannot start leaves no
    // folder behind (a new run) and its stored files as they were (a resumed one).
    let needs_docker = (plan.deployments.iter().zip(has_work))
        .any(|(d, work)| *work && m.servers[&d.server].external.is_none());
    if let Some(old) = &opened.old {
        same_pool_as(old, opts)?;
    }
    // The load's CPUs are this host's when the load runs in this process: a CPU it may not
    // use would leave the load wherever the scheduler puts it, and nothing would say so.
    if let (Some(c), true) = (&m.client_cpuset, opts.engines.is_empty()) {
        client_cpus_here(c, crate::measure::client::allowed_cpus())?;
    }
    if m.repeat.duet && opts.engines.len() > 1 {
        return Err(crate::error::UsageError(
            "repeat.duet runs both sides on one engine, at the same time: give one --engine, \
             not a pool"
                .into(),
        )
        .into());
    }
    Ok(needs_docker)
}

/// `client_cpuset`'s CPUs are among those this process may use (`allowed`; None: unknown,
/// nothing to check).
fn client_cpus_here(cpuset: &str, allowed: Option<Vec<u32>>) -> Result<()> {
    let Some(allowed) = allowed else {
        return Ok(());
    };
    let wanted = crate::input::untrusted::cpus_of(cpuset).unwrap_or_default();
    let list = |c: &[u32]| c.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let missing: Vec<u32> = wanted
        .into_iter()
        .filter(|c| !allowed.contains(c))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(crate::error::UsageError(format!(
        "client_cpuset names CPU {}, which this process may not use (it may use {}): the load \
         would run unpinned; name CPUs of this host",
        list(&missing),
        list(&allowed)
    ))
    .into())
}

/// The run's directory with the hold on it: a resumed run's, or a new one created now.
fn held_dir(
    dir: Option<RunDir>,
    lock: Option<RunLock>,
    opts: &RunOptions,
    loaded: &LoadedMatrix,
) -> Result<(RunDir, Option<RunLock>)> {
    match dir {
        Some(dir) => Ok((dir, lock)),
        None => {
            let (dir, lock) = create_run_dir(opts, loaded)?;
            Ok((dir, Some(lock)))
        }
    }
}

/// The run's first progress line: what it measures and where it writes.
fn announce(progress: &Progress, m: &Matrix, plan: &crate::matrix::Plan, total: u64, dir: &RunDir) {
    progress.line(format!(
        "rmatrix: {} cells x {} iterations ({} to run) -> {}",
        plan.cell_count(),
        m.iterations,
        total,
        dir.path.display()
    ));
}

/// The progress line's ETA, from the plan's estimate as `rmatrix plan` makes it: each cell's
/// iterations with their share of the server starts, scaled to the `total` left to run.
fn set_eta(progress: &Progress, loaded: &LoadedMatrix, plan: &crate::matrix::Plan, total: u64) {
    use crate::results::estimate;
    let m = &loaded.matrix;
    let learned = estimate::learn(
        &estimate::default_sources(),
        &loaded.name(),
        m.profile.is_some(),
    );
    let e = estimate::estimate(m, plan, &learned);
    let iterations: f64 = plan.cells().map(|c| e.of_cell(c)).sum::<f64>() * f64::from(m.iterations);
    let planned = plan.cell_count() as f64 * f64::from(m.iterations);
    if iterations <= 0.0 || planned <= 0.0 {
        return;
    }
    let share = e.seconds / iterations;
    let per_iteration = (plan.cells())
        .map(|c| (c.key(), e.of_cell(c) * share))
        .collect();
    progress.set_estimate(per_iteration, e.seconds * total as f64 / planned);
}

/// How many (cell, iteration) pairs the run has left to measure, and whether each deployment
/// of `plan` has any work (a missing iteration, or an adaptive repeat still owed).
fn work_left(opened: &Opened, plan: &crate::matrix::Plan) -> Result<(u64, Vec<bool>)> {
    let (m, done) = (&opened.loaded.matrix, &opened.done);
    let rows = match &opened.dir {
        Some(dir) => dir.rows()?,
        None => Vec::new(),
    };
    let sweeps = read_sweeps(m, &rows, opened.dir.as_ref())?;
    let missing = |c: &Cell| match sweeps.skips(c) {
        true => 0,
        false => (1..=m.iterations)
            .filter(|i| !done.contains(&(c.key(), *i)))
            .count() as u64,
    };
    let cells = || plan.deployments.iter().flat_map(|d| d.cells.iter());
    let total = cells().map(missing).sum();
    let wants = Wants::read(m, &rows);
    let owed = |c: &Cell| missing(c) > 0 || adaptive_left(m, c, &rows, done, &wants);
    let has_work = (plan.deployments.iter())
        .map(|d| d.cells.iter().any(owed))
        .collect();
    Ok((total, has_work))
}

/// The run's result once its reports are written: exit 130 after Ctrl-C, exit 3 when it lost
/// every engine (as when none can be reached at the start: nothing more to try here).
fn ended(
    dir: &RunDir,
    outcome: RunOutcome,
    interrupted: bool,
    lost: Option<String>,
) -> Result<RunOutcome> {
    if interrupted {
        return Err(Interrupted.into());
    }
    if let Some(why) = lost {
        return Err(crate::servers::engines::docker::EngineUnavailable(format!(
            "{why} mid-run: {} iteration(s) were not measured; `rmatrix run --resume {}` \
             measures them once it answers again",
            outcome.failed,
            crate::escape::terminal(&dir.path.display().to_string())
        ))
        .into());
    }
    Ok(outcome)
}

/// A resumed run with every iteration measured stays exactly as it is (manifest, summary and
/// all), unless its reports are missing (a full disk stopped the first attempt before them):
/// those are drawn again.
fn nothing_to_resume(dir: &RunDir, m: &Matrix, opts: &RunOptions) -> Result<RunOutcome> {
    eprintln!(
        "nothing to resume: every iteration of {} is measured",
        dir.path.display()
    );
    let reports = [crate::results::rundir::SUMMARY_MD, REPORT_HTML];
    if reports.iter().any(|f| !dir.file(f).is_file()) {
        store_reports(dir, m, opts.template.as_deref())?;
        eprintln!("wrote the run's missing summary.md and report.html");
    }
    let current = dir.current_rows()?;
    let failed = current.iter().filter(|r| !r.is_ok()).count();
    Ok(RunOutcome {
        failed,
        dir: dir.path.clone(),
    })
}

/// A run pooled across engines resumes on the same pool: the same engine addresses, in any
/// order (another pool would spread its deployments over other hosts).
fn same_pool_as(old: &Manifest, opts: &RunOptions) -> Result<()> {
    let list = |a: &[String]| crate::escape::terminal(&a.join(", "));
    let mut first: Vec<String> = old.engines.iter().map(|e| e.address.clone()).collect();
    let mut given: Vec<String> = opts.engines.iter().map(|e| e.url()).collect();
    first.sort();
    given.sort();
    if opts.engines.is_empty() && !old.engines.is_empty() {
        let names: Vec<String> = old.engines.iter().map(|e| e.name.clone()).collect();
        return Err(crate::error::UsageError(format!(
            "this run was pooled across engines {} ({}): pass the same --engine/--engines to \
             resume it",
            list(&names),
            list(&first)
        ))
        .into());
    }
    if !opts.engines.is_empty() && old.engines.is_empty() {
        return Err(crate::error::UsageError(format!(
            "this run ran on the default engine; this resume names {}: resume it without \
             --engine/--engines",
            list(&given)
        ))
        .into());
    }
    if !opts.engines.is_empty() && first != given {
        return Err(crate::error::UsageError(format!(
            "this run was pooled across {}; this resume names {}: a resume runs on the first \
             run's engines",
            list(&first),
            list(&given)
        ))
        .into());
    }
    Ok(())
}

async fn docker_facts(e: &Engine) -> Result<DockerFacts> {
    let info = e.info().await?;
    Ok(DockerFacts {
        version: info.version,
        api_version: info.api_version,
    })
}

/// The run's end: the manifest's totals, the charts, summary.md and report.html.
fn finish(dir: &RunDir, m: &Matrix, opts: &RunOptions, mut man: Manifest) -> Result<RunOutcome> {
    let rows = dir.current_rows()?;
    man.finished_at = Some(manifest::now());
    man.iterations_ok = rows.iter().filter(|r| r.is_ok()).count();
    man.iterations_failed = rows.len() - man.iterations_ok;
    save_manifest(dir, &man)?;
    let summary = store_reports(dir, m, opts.template.as_deref())?;
    if !opts.quiet {
        println!("{summary}");
    }
    eprintln!("results: {}", dir.path.display());
    Ok(RunOutcome {
        failed: man.iterations_failed,
        dir: dir.path.clone(),
    })
}

/// The HTML report in a run directory.
pub(crate) const REPORT_HTML: &str = "report.html";

/// Draw a run's charts into charts/, then render summary.md and report.html from what the
/// directory holds; returns the summary.
pub(crate) fn store_reports(dir: &RunDir, m: &Matrix, template: Option<&Path>) -> Result<String> {
    let charts = report::summary::write_charts(dir, m)?;
    let summary = report::summary::render(dir, m, template)?;
    crate::results::files::replace_file(
        &dir.file(crate::results::rundir::SUMMARY_MD),
        summary.as_bytes(),
    )?;
    let view = crate::export::RunView {
        dir,
        matrix: Some(m),
        template,
        series: crate::export::Series::default(),
    };
    let page = crate::export::html::run_page(&view, charts)?;
    crate::results::files::replace_file(&dir.file(REPORT_HTML), page.as_bytes())?;
    Ok(summary)
}

#[cfg(test)]
mod tests;
