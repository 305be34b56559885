//! `rmatrix compare`: candidate runs against a baseline run, cell by cell.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::options::{confidence_of, ASSUMED_RUN_NOISE, COUNTED_THRESHOLD};
use super::stdio::emit;
use crate::compare::input::{self, Run};
use crate::compare::{env, join, noise};
use crate::error::{Outcome, UsageError};
use crate::export::Format;

/// `rmatrix compare`'s options.
#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// The baseline run directory (e.g. the last good nightly run).
    pub(crate) baseline: PathBuf,
    /// One or more candidate run directories, each compared with the baseline.
    #[arg(required = true)]
    pub(crate) candidates: Vec<PathBuf>,
    /// Smallest change of a mean that counts, in percent of the baseline (`5%` or `5`).
    #[arg(long, default_value = "5%")]
    pub(crate) threshold: String,
    /// Smallest change of a counted metric (`srv_instr_per_op`, `counted: callgrind`)
    /// that counts: counts have no run-to-run noise to test, so a change at least this
    /// large whose two sides' counts do not overlap is flagged.
    #[arg(long, value_name = "PCT", default_value = COUNTED_THRESHOLD)]
    pub(crate) counted_threshold: String,
    /// Confidence level of every interval (`95`, `95%` or `0.95`); the tests run at
    /// alpha = 1 - level, so "significant" means "the interval excludes no change".
    #[arg(long, default_value = "95%", conflicts_with = "alpha")]
    pub(crate) confidence: String,
    /// The same as a significance level: `--alpha 0.01` is `--confidence 99%`.
    #[arg(long)]
    pub(crate) alpha: Option<f64>,
    /// Earlier runs (a run directory or a folder of them, e.g. the nightly store of
    /// accepted runs, or a results store: a SQLite file or a postgres:// URL, whose runs
    /// of the candidates' matrices are read; repeatable) to learn each cell's run-to-run
    /// noise from; needs 3 or more runs of a cell. Without it, verdicts rest on the
    /// iterations of the two runs.
    #[arg(long = "noise-from", value_name = "PATH")]
    pub(crate) noise_from: Vec<PathBuf>,
    /// The coefficient of variation of run means (5% by default) assumed for a cell whose run noise
    /// is not learned (no --noise-from, or fewer than 3 runs of it): a safe default for a
    /// first compare; `0` judges such a cell on its iterations only.
    #[arg(long, value_name = "PCT", default_value = ASSUMED_RUN_NOISE)]
    pub(crate) assume_run_noise: String,
    /// Judge significance on Benjamini-Hochberg adjusted p-values over all the changes of
    /// a compare: at most alpha of the flagged changes false, on average, instead of
    /// alpha of every cell.
    #[arg(long)]
    pub(crate) fdr: bool,
    /// Exit with code 8 when no metric regressed but some change is "cannot tell" (its
    /// interval reaches past the threshold): a gate that must not accept what it could
    /// not judge (the nightly recipe's promotion).
    #[arg(long)]
    pub(crate) fail_on_cannot_tell: bool,
    /// Metric to compare (repeatable or comma list; `all`); default: the matrix's
    /// report metric.
    #[arg(long = "metric", value_name = "NAME")]
    pub(crate) metrics: Vec<String>,
    /// Leave dimension DIM out of the join (e.g. compare server A's run with server B's).
    #[arg(long, value_name = "DIM")]
    pub(crate) ignore: Vec<String>,
    /// Refuse to compare (exit code 5) when host, rmatrix version, images, server
    /// versions or server variables differ between the baseline and a candidate.
    #[arg(long)]
    pub(crate) require_same_env: bool,
    /// Draw the differential flame graph of each compared cell whose runs both hold
    /// server profiles (`profile:` in the matrix, or `run --profile`) into DIR.
    #[arg(long, value_name = "DIR")]
    pub(crate) profiles: Option<std::path::PathBuf>,
    /// Also write JUnit XML to FILE (one test case per compared cell and metric, a failure
    /// per regression), for a CI job's test report; the exit code stays compare's.
    #[arg(long, value_name = "FILE")]
    pub(crate) junit: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "md")]
    pub(crate) format: Format,
}

/// Regressed when any candidate regressed; an `EnvDiffers` error when environments differ and
/// `--require-same-env` was given; `--junit` writes its file before the output is printed.
pub(super) fn compare(a: &CompareArgs) -> Result<Outcome> {
    let confidence = confidence_of(&a.confidence, a.alpha)?;
    input::check_dims(&a.ignore)?;
    let threshold_pct = join::parse_threshold(&a.threshold)?;
    let counted_threshold_pct = join::parse_threshold(&a.counted_threshold)?;
    let assumed_run_noise_pct = join::parse_run_noise(&a.assume_run_noise)?;
    if let Some(path) = &a.junit {
        refuse_run_file(
            "--junit",
            path,
            std::iter::once(a.baseline.as_path()).chain(a.candidates.iter().map(|c| c.as_path())),
        )?;
    }
    let base = input::load_run(&a.baseline)?;
    let default = [base.report_metric.as_str()];
    let metrics = input::resolve_metrics(&a.metrics, &default)?;
    let cands = (a.candidates.iter())
        .map(|c| input::load_run(c))
        .collect::<Result<Vec<_>, _>>()?;
    let noise = noise_of(&a.noise_from, &metrics, &a.ignore, &cands)?;
    let opts = join::Options {
        threshold_pct,
        confidence,
        metrics,
        ignore: a.ignore.clone(),
        noise,
        assumed_run_noise_pct,
        fdr: a.fdr,
        counted_threshold_pct,
    };
    base.require_metrics(&opts.metrics)?;
    // Before joining: were the runs measured on the same host, images and settings?
    let diffs: Vec<env::EnvDiff> = cands.iter().map(|c| env::diff(&base, c)).collect();
    if a.require_same_env && diffs.iter().any(|d| !d.is_empty()) {
        let differ = diffs.into_iter().filter(|d| !d.is_empty()).collect();
        return Err(crate::compare::EnvDiffers(differ).into());
    }
    let mut out = Vec::new();
    for (c, diff) in cands.iter().zip(&diffs) {
        c.require_metrics(&opts.metrics)?;
        let mut comparison = join::compare(&base, c, &opts)?;
        comparison.set_environment(diff.clone());
        if let Some(dir) = &a.profiles {
            crate::compare::profiles::draw(&base, c, &mut comparison, dir)?;
        }
        out.push(comparison);
        input::require_compared(&base, c, &opts.metrics, &opts.ignore)?;
    }
    let text = a.format.exporter().compare(&diffs, &out)?;
    if let Some(path) = &a.junit {
        crate::export::junit::write(path, &out)?;
    }
    emit(&text)?;
    Ok(if out.iter().any(join::Comparison::regressed) {
        Outcome::Regressed
    } else if a.fail_on_cannot_tell && out.iter().any(join::Comparison::cannot_tell) {
        Outcome::CannotTell
    } else {
        Outcome::Done
    })
}

/// The run-to-run noise learned from `--noise-from` (none without it). From a store, only
/// the runs of the candidates' matrices are read.
fn noise_of(
    noise_from: &[PathBuf],
    metrics: &[&crate::model::metric::Metric],
    ignore: &[String],
    cands: &[Run],
) -> Result<noise::Noise> {
    if noise_from.is_empty() {
        return Ok(noise::Noise::default());
    }
    let mut matrices: Vec<String> = cands.iter().map(|c| c.matrix_name.clone()).collect();
    matrices.dedup();
    let runs = crate::store::load_runs_of(noise_from, &matrices)?;
    Ok(noise::Noise::learn(&runs, metrics, ignore, cands))
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
