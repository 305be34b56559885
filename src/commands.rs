//! The subcommands: parse their arguments into library calls and exit codes.

use std::path::Path;

use anyhow::Result;

use crate::cli::{Cli, Command};
use crate::error::{exit, UsageError};
use crate::export::{Format, RunView};
use crate::matrix::model::Selector;
use crate::matrix::{expand, LoadedMatrix};
use crate::results::estimate::{self, Estimate, Learned};
use crate::results::RunDir;

pub async fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Run(a) => run_matrix(a).await,
        Command::Bisect(a) => bisect(a).await,
        Command::Ab(a) => ab(a).await,
        Command::DriveCell => {
            crate::drive::drive_cell(&stdin_text()?).await?;
            Ok(exit::OK)
        }
        Command::AwaitServer => {
            crate::drive::await_server(&stdin_text()?).await?;
            Ok(exit::OK)
        }
        Command::EnginePort => {
            crate::drive::engine_port()?;
            Ok(exit::OK)
        }
        Command::Plan {
            matrix,
            only,
            set,
            power,
            output,
        } => plan(&matrix, &set, &only, &power, &output),
        Command::Report {
            dir,
            template,
            format,
            write,
            no_run_labels,
            timestamps,
        } => {
            let series = series_of(format, no_run_labels, timestamps)?;
            report(&dir, template.as_deref(), format, write, series)?;
            Ok(exit::OK)
        }
        Command::Compare {
            baseline,
            candidates,
            threshold,
            counted_threshold,
            confidence,
            alpha,
            noise_from,
            assume_run_noise,
            fdr,
            fail_on_cannot_tell,
            metrics,
            ignore,
            require_same_env,
            profiles,
            junit,
            format,
        } => compare(
            &baseline,
            &candidates,
            (&threshold, &counted_threshold),
            confidence_of(&confidence, alpha)?,
            &noise_from,
            (&assume_run_noise, fdr, fail_on_cannot_tell),
            &metrics,
            ignore,
            (require_same_env, profiles.as_deref()),
            (format, junit.as_deref()),
        ),
        Command::History {
            dirs,
            matrices,
            metrics,
            threshold,
            counted_threshold,
            confidence,
            alpha,
            last,
            window,
            min_points,
            ignore,
            require_same_env,
            format,
        } => history(
            (&dirs, &matrices),
            &metrics,
            (&threshold, &counted_threshold),
            (&confidence, alpha),
            (last, window, min_points),
            ignore,
            require_same_env,
            format,
        ),
        Command::Ratio { confidence } => ratio(&confidence),
        Command::Clean {
            engines,
            datasets,
            images,
        } => clean(&engines, datasets, images).await,
        Command::Store { action } => store(action),
        Command::Schema => emit(&crate::matrix::schema::schema_text()).map(|()| exit::OK),
        Command::Completions { shell } => {
            emit(&crate::cli::generate::completions(shell)).map(|()| exit::OK)
        }
        Command::Man { out } => man(out.as_deref()),
    }
}

/// `rmatrix man`: the main page on stdout, or every page into `out` (each named on stderr).
fn man(out: Option<&Path>) -> Result<i32> {
    use crate::cli::generate;
    let Some(dir) = out else {
        emit(&generate::man_page()?)?;
        return Ok(exit::OK);
    };
    let shown = |p: &Path| crate::escape::terminal(&p.display().to_string());
    let written = generate::man_pages(dir)
        .map_err(|e| anyhow::anyhow!("failed to write the man pages into {}: {e}", shown(dir)))?;
    for page in written {
        eprintln!("wrote {}", shown(&page));
    }
    Ok(exit::OK)
}

/// `rmatrix run`: the matrix loaded with its parameters and selectors (and `--profile`),
/// the pool of engines, the run.
async fn run_matrix(a: crate::cli::RunArgs) -> Result<i32> {
    if let Some(store) = &a.store {
        // Opened (made or migrated) now, not hours in when the run ends: a store that cannot
        // take the run is refused before anything is measured.
        crate::store::Store::open(&crate::store::Location::parse(store))?;
    }
    let only = with_regressed(a.only, a.only_regressed.as_deref())?;
    let (pool, client_engine) = engine_pool(&a.engines, a.engines_file.as_deref())?;
    let (mut loaded, selectors) = run_selectors(a.matrix.as_deref(), &a.set, &only)?;
    if let (Some(hz), Some(l)) = (a.profile, loaded.as_mut()) {
        if !crate::matrix::model::PROFILE_HZ.contains(&hz) {
            let r = crate::matrix::model::PROFILE_HZ;
            return Err(UsageError(format!(
                "--profile {hz} is not between {} and {} samples a second (99 is usual)",
                r.start(),
                r.end()
            ))
            .into());
        }
        l.matrix.profile = Some(crate::matrix::model::ProfileSpec { cpu: hz });
    }
    let outcome = crate::run::run(crate::run::RunOptions {
        matrix: loaded,
        out: a.out,
        resume: a.resume,
        only: selectors,
        only_text: only,
        template: a.template,
        quiet: a.quiet,
        engines: pool,
        client_engine,
    })
    .await?;
    if let Some(store) = a.store {
        // The run is measured and written; a store that cannot take it is an error of its
        // own (the run directory stays, for `rmatrix store import`).
        let mut s = crate::store::Store::open(&crate::store::Location::parse(&store))?;
        let how = s.import(&outcome.dir)?;
        eprintln!("{}", stored_line(how, &outcome.dir, s.label()));
    }
    Ok(outcome.exit_code())
}

/// `rmatrix store import|list`.
fn store(action: crate::cli::StoreAction) -> Result<i32> {
    use crate::cli::{PlanFormat, StoreAction};
    use crate::store::{Location, Store};
    match action {
        StoreAction::Import { store, dirs } => {
            let mut s = Store::open(&Location::parse(&store))?;
            let mut dirs_found = Vec::new();
            for d in &dirs {
                dirs_found.extend(crate::compare::input::run_dirs(d)?);
            }
            if dirs_found.is_empty() {
                return Err(UsageError(format!(
                    "no run directory in {}",
                    crate::escape::terminal(
                        &dirs
                            .iter()
                            .map(|d| d.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                ))
                .into());
            }
            // Each run is stored or refused on its own: one bad run keeps no other out.
            let mut refused = 0;
            for d in dirs_found {
                match s.import(&d) {
                    Ok(how) => eprintln!("{}", stored_line(how, &d, s.label())),
                    Err(e) => {
                        refused += 1;
                        eprintln!("refused: {}", crate::error_text(&e));
                    }
                }
            }
            match refused {
                0 => Ok(exit::OK),
                n => Err(
                    UsageError(format!("{n} run(s) refused (above); the others are stored")).into(),
                ),
            }
        }
        StoreAction::List {
            store,
            matrix,
            format,
        } => {
            let mut s = Store::read(&Location::parse(&store))?;
            let runs = s.list(matrix.as_deref())?;
            let text = match format {
                PlanFormat::Json => serde_json::to_string_pretty(&runs)? + "\n",
                PlanFormat::Text => {
                    let t = crate::escape::terminal;
                    let mut out = String::new();
                    for r in &runs {
                        out.push_str(&format!(
                            "{}  {}  {}  {}/{} ok  {}\n",
                            t(&r.started_at),
                            t(&r.matrix),
                            t(&r.run_id),
                            r.ok,
                            r.iterations,
                            t(&r.source)
                        ));
                    }
                    out.push_str(&format!("{} run(s) in {}\n", runs.len(), t(s.label())));
                    out
                }
            };
            emit(&text)?;
            Ok(exit::OK)
        }
    }
}

/// What storing a run did, for stderr.
fn stored_line(how: crate::store::Imported, dir: &Path, store: &str) -> String {
    use crate::store::Imported;
    let what = match how {
        Imported::New => "stored",
        Imported::Updated => "updated (its content changed)",
        Imported::Unchanged => "already stored",
    };
    format!(
        "{what}: {} in {}",
        crate::escape::terminal(&dir.display().to_string()),
        crate::escape::terminal(store)
    )
}

/// The engines a run is pooled across (`--engines` file, then `--engine`s), each once and named.
fn engine_pool(
    engines: &[String],
    engines_file: Option<&Path>,
) -> Result<(Vec<crate::servers::address::EngineAddr>, Option<String>)> {
    let env = crate::servers::address::Env::current();
    let (mut pool, client_engine) = match engines_file {
        Some(f) => crate::servers::address::load_hosts_file(f, &env).map_err(UsageError)?,
        None => (Vec::new(), None),
    };
    for e in engines {
        crate::servers::address::check_untrusted(e).map_err(UsageError)?;
        pool.push(
            crate::servers::address::resolve(&env, e)
                .map_err(crate::servers::docker::EngineUnavailable)?,
        );
    }
    // The same engine twice would run two deployments on one host at once.
    crate::servers::identity::refuse_duplicates(&pool).map_err(UsageError)?;
    crate::servers::address::name_engines(&mut pool);
    Ok((pool, client_engine))
}

/// The matrix of a run (loaded once, with its `--set` values) and its `--only` selectors,
/// checked against its axes before anything starts. No matrix: a `--resume`, which keeps the
/// values its run started with.
fn run_selectors(
    matrix: Option<&Path>,
    set: &[String],
    only: &[String],
) -> Result<(Option<LoadedMatrix>, Vec<Selector>)> {
    match matrix {
        Some(m) => {
            let loaded = crate::matrix::load_file_set(m, &crate::matrix::parse_set(set)?)?;
            let selectors = crate::matrix::only::parse_only(&loaded, only)?;
            Ok((Some(loaded), selectors))
        }
        None if !set.is_empty() => Err(UsageError(
            "--set with --resume: a resumed run keeps the parameter values it started with \
             (its manifest.json has them); drop --set"
                .into(),
        )
        .into()),
        None => Ok((None, crate::matrix::only::only_selectors(only)?)),
    }
}

/// `--only` with the cells `--only-regressed FILE` (a compare's JSON) flagged.
fn with_regressed(mut only: Vec<String>, file: Option<&Path>) -> Result<Vec<String>> {
    if let Some(path) = file {
        let text = crate::input::file::read_text(path, crate::input::file::COMPARE_JSON)?;
        only.extend(crate::compare::rerun::regressed_only(&text)?);
    }
    Ok(only)
}

/// `rmatrix bisect`: its options as the bisection keeps them (for `--resume`).
async fn ab(a: crate::cli::AbArgs) -> Result<i32> {
    crate::ab::ab(crate::ab::Args {
        matrix: a.matrix,
        a: a.a,
        b: a.b,
        server: a.server,
        only: a.only,
        control: a.control,
        set: crate::matrix::parse_set(&a.set)?,
        out: a.out,
        rounds: a.rounds,
        max_rounds: a.max_rounds,
        budget: a.budget,
        threshold: a.threshold,
        confidence: a.confidence,
        metrics: a.metrics,
        interleaved: a.interleaved,
        duet: a.duet,
        seed: a.seed,
    })
    .await
}

async fn bisect(a: crate::cli::BisectArgs) -> Result<i32> {
    let args = crate::bisect::Args {
        matrix: a.matrix.unwrap_or_default(),
        good: a.good.unwrap_or_default(),
        bad: a.bad.unwrap_or_default(),
        server: a.server,
        only: a.only,
        set: crate::matrix::parse_set(&a.set)?,
        first_parent: a.first_parent,
        threshold: a.threshold,
        counted_threshold: a.counted_threshold,
        confidence: a.confidence,
        noise_from: a.noise_from,
        assume_run_noise: a.assume_run_noise,
        metrics: a.metrics,
        paired: a.paired,
        rounds: a.rounds,
        max_rounds: a.max_rounds,
        scan_up_to: a.scan_up_to,
        duet: a.duet,
        out: a.out,
    };
    crate::bisect::bisect(args, a.resume).await
}

/// `rmatrix ratio`: per-round `A B` lines on stdin -> their ratio with its interval, as JSON.
fn ratio(confidence: &str) -> Result<i32> {
    let input = crate::input::file::read_stdin(crate::input::file::STDIN)?;
    emit(&ratio_text(&input, confidence)?)?;
    Ok(exit::OK)
}

/// What `rmatrix ratio` prints for `input` (the fuzz target `ratio` reads through it).
pub fn ratio_text(input: &str, confidence: &str) -> Result<String> {
    use crate::stats::paired;
    let pairs = paired::parse_pairs(input).map_err(UsageError)?;
    let ratio =
        paired::paired_ratio(&pairs, confidence_of(confidence, None)?).ok_or_else(|| {
            UsageError(
                "every round's A / B must be a positive finite ratio (e.g. not 1e300 / 1e-300)"
                    .into(),
            )
        })?;
    Ok(format!("{}\n", serde_json::to_string(&ratio)?))
}

/// `rmatrix clean`: remove every rmatrix container on the engines (the default one if none).
async fn clean(engines: &[String], datasets: bool, images: bool) -> Result<i32> {
    let env = crate::servers::address::Env::current();
    let addrs = match engines.is_empty() {
        true => vec![crate::servers::address::from_env(&env)
            .map_err(crate::servers::docker::EngineUnavailable)?],
        false => engines
            .iter()
            .map(|e| crate::servers::address::resolve(&env, e))
            .collect::<Result<Vec<_>, _>>()
            .map_err(crate::servers::docker::EngineUnavailable)?,
    };
    for a in &addrs {
        let engine = crate::servers::docker::Engine::connect_to(a).await?;
        let n = engine.remove_all().await?;
        eprintln!("removed {n} rmatrix container(s) on {}", a.url());
        if datasets {
            let sets = crate::servers::dataset::list(&engine).await?;
            for (volume, what) in &sets {
                engine.remove_volume(volume).await?;
                eprintln!(
                    "removed data set {volume}: {}",
                    crate::escape::terminal(what)
                );
            }
            eprintln!("removed {} data set(s) on {}", sets.len(), a.url());
        }
        if images {
            let tags = engine.tags_of(crate::drive::CLIENT_REPO).await?;
            for tag in &tags {
                engine.remove_image(tag).await?;
            }
            eprintln!("removed {} client image(s) on {}", tags.len(), a.url());
        }
    }
    Ok(exit::OK)
}

/// `rmatrix history`: exit code 5 when environments differ and `--require-same-env` was given.
#[allow(clippy::too_many_arguments)]
fn history(
    (dirs, matrices): (&[std::path::PathBuf], &[String]),
    metrics: &[String],
    (threshold, counted_threshold): (&str, &str),
    (confidence, alpha): (&str, Option<f64>),
    (last, window, min_points): (usize, Option<usize>, usize),
    ignore: Vec<String>,
    require_same_env: bool,
    format: Format,
) -> Result<i32> {
    use crate::compare::{env, history, input, join};
    if last == 0 {
        return Err(UsageError("--last 0 shows no run: give 1 or more".into()).into());
    }
    if window == Some(0) {
        return Err(UsageError(
            "--window 0 is no number of runs (and --window is no longer used: leave it out)".into(),
        )
        .into());
    }
    if window.is_some() {
        eprintln!(
            "note: --window is no longer used: change points are searched over each whole \
             series (E-divisive means); see docs/compare.md"
        );
    }
    let runs = crate::store::load_runs(dirs, matrices)?;
    let opts = history::HistoryOptions {
        // Empty: each run's own report metric.
        metrics: if metrics.is_empty() {
            Vec::new()
        } else {
            input::resolve_metrics(metrics, &[])?
        },
        threshold_pct: join::parse_threshold(threshold)?,
        counted_threshold_pct: join::parse_threshold(counted_threshold)?,
        confidence: confidence_of(confidence, alpha)?,
        last,
        min_points,
        ignore,
    };
    input::check_dims(&opts.ignore)?;
    for run in &runs {
        let asked: Vec<_> = match opts.metrics.is_empty() {
            true => crate::model::metric::Metric::find(&run.report_metric)
                .into_iter()
                .collect(),
            false => opts.metrics.clone(),
        };
        run.require_metrics(&asked)?;
    }
    if require_same_env {
        let differ: Vec<_> = runs[1..]
            .iter()
            .map(|r| env::diff(&runs[0], r))
            .filter(|d| !d.is_empty())
            .collect();
        if !differ.is_empty() {
            return Err(crate::compare::EnvDiffers(differ).into());
        }
    }
    let h = history::history(&runs, &opts)?;
    // What changed from one run to the next.
    let diffs: Vec<_> = runs
        .windows(2)
        .map(|pair| env::diff(&pair[0], &pair[1]))
        .collect();
    emit(&format.exporter().history(&diffs, &h)?)?;
    Ok(exit::OK)
}

/// The whole plan of `loaded` with its estimate assumed, as from no stored run (the fuzz
/// target's view of `plan`).
pub fn plan_text_assumed(loaded: &LoadedMatrix) -> String {
    plan_text(loaded, &[], &Learned::default())
}

pub(crate) fn plan_text(loaded: &LoadedMatrix, only: &[Selector], learned: &Learned) -> String {
    let m = &loaded.matrix;
    let plan = expand(m, only);
    let mut out = String::new();
    if !loaded.params.is_empty() {
        let values: Vec<String> = (loaded.params.iter())
            .map(|(k, v)| format!("{k}={}", crate::escape::terminal(v)))
            .collect();
        out.push_str(&format!("params: {}\n", values.join(" ")));
    }
    for d in &plan.deployments {
        out.push_str(&format!(
            "{} x {}  ({} cells)\n",
            d.server,
            d.config,
            d.cells.len()
        ));
        for c in &d.cells {
            out.push_str(&format!("  {c}\n"));
        }
    }
    let e = estimate::estimate(m, &plan, learned);
    let runs = e.cells as u64 * u64::from(m.iterations);
    out.push_str(&format!(
        "{} deployments, {} cells, {} iterations each = {runs} measured runs, {} server start(s); \
         estimate {}\n",
        plan.deployments.len(),
        e.cells,
        m.iterations,
        e.server_starts,
        Estimate::shown(e.seconds),
    ));
    if !e.learned_from.is_empty() {
        let from: Vec<String> = (e.learned_from.iter())
            .map(|p| crate::escape::terminal(p))
            .collect();
        out.push_str(&format!(
            "estimate learned from the {} newest stored run(s) of this matrix{} ({}): {} of {} \
             cells, {} of {} server starts\n",
            from.len(),
            match e.this_host {
                true => " on this host",
                false => " (none on this host: another machine's)",
            },
            from.join(", "),
            e.cells_learned,
            e.cells,
            e.starts_learned,
            e.server_starts
        ));
        if let Some((lo, hi)) = e.spread_seconds {
            out.push_str(&format!(
                "estimate from each of them alone: {} to {}\n",
                Estimate::shown(lo),
                Estimate::shown(hi)
            ));
        }
    }
    if !e.assumed.is_empty() {
        out.push_str(&format!("estimate assumes {}\n", e.assumed));
    }
    if let Some(more) = adaptive_text(m) {
        out.push_str(&more);
    }
    out
}

/// What the adaptive repeats may add beyond the estimate, which counts the first
/// `iterations` only: how many rounds they do is known only as the run goes.
fn adaptive_text(m: &crate::matrix::Matrix) -> Option<String> {
    let r = &m.repeat;
    let why = match (r.until_cv, r.until_interval) {
        (None, None) => return None,
        (Some(cv), None) => format!("a cell's CV is above {cv}%"),
        (None, Some(w)) => format!("a change against the baseline is wider than ±{w} points"),
        (Some(cv), Some(w)) => format!(
            "a cell's CV is above {cv}% or a change against the baseline is wider than ±{w} points"
        ),
    };
    let most = r.max_iterations.unwrap_or(10).max(m.iterations);
    let budget = match r.max_time {
        Some(t) => format!(", within {t}"),
        None => String::new(),
    };
    Some(format!(
        "then adaptive rounds, not in the estimate: more while {why}, up to {most} iterations \
         a cell{budget}\n"
    ))
}

/// `rmatrix plan --format json`: the cells by deployment, the counts and the estimate.
fn plan_json(loaded: &LoadedMatrix, only: &[Selector], learned: &Learned) -> Result<String> {
    let m = &loaded.matrix;
    let plan = expand(m, only);
    let e = estimate::estimate(m, &plan, learned);
    let cell = |c: &crate::matrix::plan::Cell| {
        serde_json::json!({
            "cell": c.to_string(), "server": c.server, "config": c.config, "engine": c.engine,
            "workload": c.workload, "concurrency": c.concurrency, "rate": c.rate,
            "estimate_seconds_per_iteration": e.of_cell(c),
        })
    };
    let deployments: Vec<_> = (plan.deployments.iter())
        .map(|d| {
            serde_json::json!({
                "server": d.server, "config": d.config,
                "cells": d.cells.iter().map(cell).collect::<Vec<_>>(),
            })
        })
        .collect();
    let value = serde_json::json!({
        "matrix": loaded.name(),
        "params": loaded.params,
        "deployments": deployments,
        "cells": e.cells,
        "iterations": m.iterations,
        "measured_runs": e.cells as u64 * u64::from(m.iterations),
        "estimate": e,
    });
    Ok(crate::escape::json(&serde_json::to_string_pretty(&value)?) + "\n")
}

/// `rmatrix plan`: the cells, and with `--noise-from` what each one's compare would see.
fn plan(
    matrix: &Path,
    set: &[String],
    only: &[String],
    p: &crate::cli::PlanPowerArgs,
    output: &crate::cli::PlanOutputArgs,
) -> Result<i32> {
    let loaded = crate::matrix::load_file_set(matrix, &crate::matrix::parse_set(set)?)?;
    let selectors = crate::matrix::only::parse_only(&loaded, only)?;
    let learn_from: Vec<std::path::PathBuf> = match output.learn_from.is_empty() {
        true => estimate::default_sources(),
        false => output.learn_from.clone(),
    };
    let profiled = loaded.matrix.profile.is_some();
    let mut learned = estimate::learn(&learn_from, &loaded.name(), profiled);
    // A results store among them: its runs of this matrix.
    for p in &learn_from {
        if let Some(loc) = crate::store::Location::detect(p)? {
            crate::store::Store::read(&loc)?.learn(&loaded.name(), &mut learned)?;
        }
    }
    if output.format == crate::cli::PlanFormat::Json {
        if !p.noise_from.is_empty() {
            return Err(UsageError(
                "plan --format json does not carry --noise-from's table: run it without --format"
                    .into(),
            )
            .into());
        }
        emit(&plan_json(&loaded, &selectors, &learned)?)?;
        return Ok(exit::OK);
    }
    let power = match p.noise_from.is_empty() {
        true => String::new(),
        false => plan_power(
            &loaded,
            &selectors,
            &p.noise_from,
            p.target.as_deref(),
            (&p.threshold, &p.confidence, &p.assume_run_noise),
        )?,
    };
    emit(&format!(
        "{}{power}",
        plan_text(&loaded, &selectors, &learned)
    ))?;
    // What `run` would refuse before it starts, said now.
    if loaded.matrix.counted == Some(crate::matrix::model::Counted::Perf) {
        if let Err(why) = crate::measure::perf_count::available() {
            eprintln!("note: `rmatrix run` will refuse this matrix here: {why}");
        }
    }
    Ok(exit::OK)
}

/// `rmatrix plan --noise-from`: what each cell's compare would see, learned from earlier
/// runs of the matrix's report metric; with a target, the iterations that reach it.
fn plan_power(
    loaded: &LoadedMatrix,
    only: &[Selector],
    noise_from: &[std::path::PathBuf],
    target: Option<&str>,
    (threshold, confidence, assume_run_noise): (&str, &str, &str),
) -> Result<String> {
    use crate::compare::{input, join, noise, sensitivity};
    let threshold_pct = join::parse_threshold(threshold)?;
    let target_pct = target
        .map(|t| join::parse_target(t, threshold_pct))
        .transpose()?;
    let opts = sensitivity::PlanPower {
        threshold_pct,
        confidence: confidence_of(confidence, None)?,
        assumed_run_noise_pct: join::parse_run_noise(assume_run_noise)?,
        iterations: loaded.matrix.iterations as usize,
        target_pct,
    };
    let metric = input::resolve_metrics(&[], &[loaded.matrix.report.metric.as_str()])?[0];
    let runs = crate::store::load_runs(noise_from, &[])?;
    let noise = noise::Noise::learn(&runs, &[metric], &[], &[]);
    let cells: Vec<(crate::model::CellKey, String)> = expand(&loaded.matrix, only)
        .cells()
        .map(|c| (c.key(), c.to_string()))
        .collect();
    let rows = sensitivity::plan_power(&cells, metric, &noise, &opts);
    let missing: Vec<String> = (cells.iter())
        .filter(|(_, name)| rows.iter().all(|r| r.cell != *name))
        .map(|(_, name)| name.clone())
        .collect();
    Ok(sensitivity::render(&rows, &missing, metric, &opts))
}

/// A stored run read and checked as `rmatrix report` reads it, with its matrix copy when
/// `with_matrix` (checked as a matrix is: names and texts from it reach every format).
fn stored_run(dir: &Path, with_matrix: bool) -> Result<(RunDir, Option<LoadedMatrix>)> {
    use crate::results::{check, rundir};
    let run = RunDir::open(dir)?;
    check::read_manifest(&run.file(rundir::MANIFEST))?;
    let csv = run.file(rundir::RESULTS_CSV);
    // A run stopped before its first iteration has no results.csv yet; its report is empty.
    // `exists`, not `is_file`: a results.csv that is not a regular file is the reader's to
    // refuse, not a run without results.
    let results = match csv.exists() {
        true => Some(check::read_results(&csv)?),
        false => None,
    };
    if !with_matrix {
        return Ok((run, None));
    }
    let loaded = crate::matrix::load_stored(&run.file(rundir::MATRIX_COPY))?;
    if let Some(r) = &results {
        check::require_columns(&csv, &r.columns, &[loaded.matrix.report.metric.as_str()])?;
    }
    Ok((run, Some(loaded)))
}

/// `report`'s OpenMetrics labels and stamps: a usage error with another format.
fn series_of(
    format: Format,
    no_run_labels: bool,
    timestamps: bool,
) -> Result<crate::export::Series> {
    if (no_run_labels || timestamps) && format != Format::Openmetrics {
        return Err(UsageError(
            "--no-run-labels and --timestamps shape OpenMetrics samples: give them with \
             --format openmetrics"
                .into(),
        )
        .into());
    }
    Ok(crate::export::Series {
        run_labels: !no_run_labels,
        timestamps,
    })
}

/// What `rmatrix report DIR --format FORMAT` prints (the fuzz targets render through it).
pub fn report_text(dir: &Path, template: Option<&Path>, format: Format) -> Result<String> {
    report_series(dir, template, format, crate::export::Series::default())
}

/// The same with the OpenMetrics samples labelled and stamped as `series` says.
fn report_series(
    dir: &Path,
    template: Option<&Path>,
    format: Format,
    series: crate::export::Series,
) -> Result<String> {
    let exporter = format.exporter();
    let (run, loaded) = stored_run(dir, exporter.needs_matrix())?;
    exporter.run(&RunView {
        dir: &run,
        matrix: loaded.as_ref().map(|l| &l.matrix),
        template,
        series,
    })
}

fn report(
    dir: &Path,
    template: Option<&Path>,
    format: Format,
    write: bool,
    series: crate::export::Series,
) -> Result<()> {
    if !write {
        return emit(&report_series(dir, template, format, series)?);
    }
    // --write renders every stored report, from the matrix copy.
    let (run, loaded) = stored_run(dir, true)?;
    let matrix = &loaded.expect("invariant: asked for the matrix").matrix;
    crate::run::store_reports(&run, matrix, template)?;
    eprintln!(
        "rendered summary.md, charts/ and report.html in {}",
        crate::escape::terminal(&dir.display().to_string())
    );
    Ok(())
}

/// An output file that is one of `runs`' own files (their results.csv...) is refused: it would
/// be overwritten by the report on it.
fn refuse_run_file<'a>(
    option: &str,
    path: &Path,
    runs: impl IntoIterator<Item = &'a Path>,
) -> Result<()> {
    let shown = |p: &Path| crate::escape::terminal(&p.display().to_string());
    match runs
        .into_iter()
        .find(|run| crate::results::own_files::is_own_file(run, path))
    {
        Some(run) => Err(UsageError(format!(
            "{option} {}: a file of the compared run {}; writing it would destroy the run: \
             name a file outside the run directories",
            shown(path),
            shown(run)
        ))
        .into()),
        None => Ok(()),
    }
}

/// `--confidence` text or `--alpha`, checked.
fn confidence_of(text: &str, alpha: Option<f64>) -> Result<crate::stats::Confidence> {
    use crate::compare::CompareError;
    let conf = match alpha {
        Some(a) => crate::stats::Confidence::from_alpha(a)
            .ok_or_else(|| CompareError::BadConfidence(format!("alpha {a}")))?,
        None => crate::stats::Confidence::parse(text)
            .ok_or_else(|| CompareError::BadConfidence(text.into()))?,
    };
    Ok(conf)
}

/// `rmatrix compare`: exit code 4 when any candidate regressed, 5 when environments differ
/// and `--require-same-env` was given; `--junit` writes its file before the output is printed.
#[allow(clippy::too_many_arguments)]
fn compare(
    baseline: &Path,
    candidates: &[std::path::PathBuf],
    (threshold, counted_threshold): (&str, &str),
    confidence: crate::stats::Confidence,
    noise_from: &[std::path::PathBuf],
    (assume_run_noise, fdr, fail_on_cannot_tell): (&str, bool, bool),
    metrics: &[String],
    ignore: Vec<String>,
    (require_same_env, profiles): (bool, Option<&Path>),
    (format, junit): (Format, Option<&Path>),
) -> Result<i32> {
    use crate::compare::{env, input, join, noise};
    input::check_dims(&ignore)?;
    let threshold_pct = join::parse_threshold(threshold)?;
    let counted_threshold_pct = join::parse_threshold(counted_threshold)?;
    let assumed_run_noise_pct = join::parse_run_noise(assume_run_noise)?;
    if let Some(path) = junit {
        refuse_run_file(
            "--junit",
            path,
            std::iter::once(baseline).chain(candidates.iter().map(|c| c.as_path())),
        )?;
    }
    let base = input::load_run(baseline)?;
    let default = [base.report_metric.as_str()];
    let metrics = input::resolve_metrics(metrics, &default)?;
    let cands = candidates
        .iter()
        .map(|c| input::load_run(c))
        .collect::<Result<Vec<_>, _>>()?;
    let noise = if noise_from.is_empty() {
        noise::Noise::default()
    } else {
        // From a store, only the runs of the candidates' matrices are read.
        let mut matrices: Vec<String> = cands.iter().map(|c| c.matrix_name.clone()).collect();
        matrices.dedup();
        let runs = crate::store::load_runs_of(noise_from, &matrices)?;
        noise::Noise::learn(&runs, &metrics, &ignore, &cands)
    };
    let opts = join::Options {
        threshold_pct,
        confidence,
        metrics,
        ignore,
        noise,
        assumed_run_noise_pct,
        fdr,
        counted_threshold_pct,
    };
    base.require_metrics(&opts.metrics)?;
    // Before joining: were the runs measured on the same host, images and settings?
    let diffs: Vec<env::EnvDiff> = cands.iter().map(|c| env::diff(&base, c)).collect();
    if require_same_env && diffs.iter().any(|d| !d.is_empty()) {
        let differ = diffs.into_iter().filter(|d| !d.is_empty()).collect();
        return Err(crate::compare::EnvDiffers(differ).into());
    }
    let mut out = Vec::new();
    for (c, diff) in cands.iter().zip(&diffs) {
        c.require_metrics(&opts.metrics)?;
        let mut comparison = join::compare(&base, c, &opts)?;
        comparison.set_environment(diff.clone());
        if let Some(dir) = profiles {
            crate::compare::profiles::draw(&base, c, &mut comparison, dir)?;
        }
        out.push(comparison);
        input::require_compared(&base, c, &opts.metrics, &opts.ignore)?;
    }
    let text = format.exporter().compare(&diffs, &out)?;
    if let Some(path) = junit {
        crate::export::junit::write(path, &out)?;
    }
    emit(&text)?;
    Ok(if out.iter().any(join::Comparison::regressed) {
        exit::REGRESSION
    } else if fail_on_cannot_tell && out.iter().any(join::Comparison::cannot_tell) {
        exit::CANNOT_TELL
    } else {
        exit::OK
    })
}

/// All of stdin (a cell or a server to wait for, sent by the orchestrating process).
fn stdin_text() -> Result<String> {
    Ok(crate::input::file::read_stdin(crate::input::file::STDIN)?)
}

/// Write a command's output to stdout. A reader that went away (`rmatrix report DIR | head`)
/// ends the output quietly instead of a panic on the broken pipe.
fn emit(text: &str) -> Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::only::parse_only;

    /// `--only rate=...` plans the cells at those rates; an unknown rate lists the matrix's.
    #[test]
    fn only_rate_keeps_those_rates_and_lists_the_valid_ones() {
        let loaded = crate::matrix::load_file(Path::new("matrices/open-loop.yaml")).unwrap();
        let sel = parse_only(&loaded, &["rate=10000,40000".to_string()]).unwrap();
        let plan = plan_text(&loaded, &sel, &Learned::default());
        let cells: Vec<&str> = plan.lines().filter(|l| l.starts_with("  ")).collect();
        assert_eq!(
            cells,
            [
                "  redis-7.0/default/get/c8/r10000",
                "  redis-7.0/default/get/c8/r40000"
            ],
            "{plan}"
        );
        let e = parse_only(&loaded, &["rate=5001".to_string()]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--only: unknown rate `5001`; valid choices: 5000, 10000, 20000, 40000, 80000, \
             160000, 320000, 640000"
        );
    }
}
