//! `rmatrix run`: a matrix run (or resumed) on a pool of engines, and kept in a store.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::store::stored_line;
use crate::error::{Outcome, UsageError};
use crate::matrix::model::Selector;
use crate::matrix::LoadedMatrix;

/// `rmatrix run`'s options.
#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The matrix file (YAML). Not with --resume: a resumed run uses its own stored copy.
    #[arg(required_unless_present = "resume", conflicts_with = "resume")]
    pub(crate) matrix: Option<PathBuf>,
    /// Run directory to create (default: reports/runs/<time>-<name>); never overwritten.
    #[arg(long, conflicts_with = "resume")]
    pub(crate) out: Option<PathBuf>,
    /// Continue a stopped run: run only the cell iterations missing from DIR/results.csv.
    #[arg(long, value_name = "DIR")]
    pub(crate) resume: Option<PathBuf>,
    /// Run only cells where dimension KEY has VALUE (comma list allowed); repeatable.
    #[arg(long, value_name = "KEY=VALUE")]
    pub(crate) only: Vec<String>,
    /// Run only the cells a comparison flagged as regressed (the JSON of `rmatrix compare
    /// --format json`): a nightly job's confirmation run.
    #[arg(long, value_name = "COMPARE_JSON", conflicts_with = "resume")]
    pub(crate) only_regressed: Option<PathBuf>,
    /// The value of the matrix's parameter NAME (`params:`), before RMATRIX_PARAM_NAME and
    /// its default; repeatable. Not with --resume: a resumed run keeps its values.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub(crate) set: Vec<String>,
    /// minijinja template for summary.md (default: the built-in reports/templates/summary.md.j2).
    #[arg(long)]
    pub(crate) template: Option<PathBuf>,
    /// No progress and no summary on stdout; errors still go to stderr.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Also keep the run in this results store when it ends (a SQLite file, created when
    /// missing, or a postgres:// URL; as `rmatrix store import`). It is opened before
    /// anything is measured: a store that cannot take the run is refused at once (exit 2).
    #[arg(long, value_name = "STORE")]
    pub(crate) store: Option<String>,
    /// A Docker engine of the pool (repeatable): unix://PATH, tcp://HOST:PORT (TLS from
    /// DOCKER_TLS_VERIFY/DOCKER_CERT_PATH), ssh://[USER@]HOST, or a Docker context name.
    /// Deployments are spread across the engines, one at a time on each.
    #[arg(long = "engine", value_name = "URL")]
    pub(crate) engines: Vec<String>,
    /// A hosts file listing the pool's engines (`engines:`), kept apart from the matrix.
    #[arg(long = "engines", value_name = "FILE", conflicts_with = "engines")]
    pub(crate) engines_file: Option<PathBuf>,
    /// Profile the server during each measured phase at HZ samples a second (perf
    /// record -e cpu-clock -g; default 99): a flame graph per cell, as `profile: {cpu: HZ}`
    /// in the matrix does. Not with --resume.
    #[arg(long, value_name = "HZ", num_args = 0..=1, default_missing_value = "99", conflicts_with = "resume")]
    pub(crate) profile: Option<u32>,
}

/// `rmatrix run`: the matrix loaded with its parameters and selectors (and `--profile`),
/// the pool of engines, the run.
pub(super) async fn run(a: RunArgs) -> Result<Outcome> {
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
    let ran = crate::run::run(crate::run::RunOptions {
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
        let how = s.import(&ran.dir)?;
        eprintln!("{}", stored_line(how, &ran.dir, s.label()));
    }
    Ok(ran.outcome())
}

/// The engines a run is pooled across (`--engines` file, then `--engine`s), each once and named.
fn engine_pool(
    engines: &[String],
    engines_file: Option<&Path>,
) -> Result<(
    Vec<crate::servers::engines::address::EngineAddr>,
    Option<String>,
)> {
    let env = crate::servers::engines::address::Env::current();
    let (mut pool, client_engine) = match engines_file {
        Some(f) => {
            crate::servers::engines::address::load_hosts_file(f, &env).map_err(UsageError)?
        }
        None => (Vec::new(), None),
    };
    for e in engines {
        crate::servers::engines::address::check_untrusted(e).map_err(UsageError)?;
        pool.push(
            crate::servers::engines::address::resolve(&env, e)
                .map_err(crate::servers::engines::docker::EngineUnavailable)?,
        );
    }
    // The same engine twice would run two deployments on one host at once.
    crate::servers::engines::identity::refuse_duplicates(&pool).map_err(UsageError)?;
    crate::servers::engines::address::name_engines(&mut pool);
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
