//! `rmatrix history`: each cell's series over stored runs, with change points flagged.

use std::path::PathBuf;

use anyhow::Result;

use super::options::{confidence_of, COUNTED_THRESHOLD};
use super::stdio::emit;
use crate::compare::{env, history, input, join};
use crate::error::{Outcome, UsageError};
use crate::export::Format;

/// `rmatrix history`'s options.
#[derive(Debug, clap::Args)]
pub(crate) struct HistoryArgs {
    /// Run directories, folders of run directories such as reports/runs, or results
    /// stores (a SQLite file or a postgres:// URL; `rmatrix store`).
    #[arg(required = true)]
    pub(crate) dirs: Vec<PathBuf>,
    /// Only the runs of the matrix called NAME (its `name:`); repeatable.
    #[arg(long = "matrix", value_name = "NAME")]
    pub(crate) matrices: Vec<String>,
    /// Metric to follow (repeatable or comma list; `all`); default: each run's own
    /// report metric.
    #[arg(long = "metric", value_name = "NAME")]
    pub(crate) metrics: Vec<String>,
    /// Smallest shift of the mean that counts as a change point (`5%` or `5`).
    #[arg(long, default_value = "5%")]
    pub(crate) threshold: String,
    /// The same for a counted metric (`srv_instr_per_op`): counts barely move between
    /// runs of one build.
    #[arg(long, value_name = "PCT", default_value = COUNTED_THRESHOLD)]
    pub(crate) counted_threshold: String,
    /// Confidence level of the test of each change point and of its interval
    /// (alpha = 1 - level).
    #[arg(long, default_value = "95%", conflicts_with = "alpha")]
    pub(crate) confidence: String,
    /// The same as a significance level: `--alpha 0.05` is `--confidence 95%`.
    #[arg(long)]
    pub(crate) alpha: Option<f64>,
    /// Runs shown as columns in the Markdown view (CSV and JSON have every run).
    #[arg(long, default_value_t = 8)]
    pub(crate) last: usize,
    /// No longer used: change points are searched over each whole series. Still accepted
    /// (with a note on stderr) so that scripts that pass it keep working.
    #[arg(long, value_name = "RUNS")]
    pub(crate) window: Option<usize>,
    /// Fewest runs in a segment between change points (at least 2): a change point needs
    /// this many runs on each side.
    #[arg(long, default_value_t = 3)]
    pub(crate) min_points: usize,
    /// Leave dimension DIM out of the series key.
    #[arg(long, value_name = "DIM")]
    pub(crate) ignore: Vec<String>,
    /// Refuse (exit code 5) when any run's environment differs from the first run's.
    #[arg(long)]
    pub(crate) require_same_env: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "md")]
    pub(crate) format: Format,
}

/// The history of the runs; an `EnvDiffers` error when environments differ and
/// `--require-same-env` was given.
pub(super) fn history(a: &HistoryArgs) -> Result<Outcome> {
    if a.last == 0 {
        return Err(UsageError("--last 0 shows no run: give 1 or more".into()).into());
    }
    if a.window == Some(0) {
        return Err(UsageError(
            "--window 0 is no number of runs (and --window is no longer used: leave it out)".into(),
        )
        .into());
    }
    if a.window.is_some() {
        eprintln!(
            "note: --window is no longer used: change points are searched over each whole \
             series (E-divisive means); see docs/compare.md"
        );
    }
    let runs = crate::store::load_runs(&a.dirs, &a.matrices)?;
    let opts = history::HistoryOptions {
        // Empty: each run's own report metric.
        metrics: if a.metrics.is_empty() {
            Vec::new()
        } else {
            input::resolve_metrics(&a.metrics, &[])?
        },
        threshold_pct: join::parse_threshold(&a.threshold)?,
        counted_threshold_pct: join::parse_threshold(&a.counted_threshold)?,
        confidence: confidence_of(&a.confidence, a.alpha)?,
        last: a.last,
        min_points: a.min_points,
        ignore: a.ignore.clone(),
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
    if a.require_same_env {
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
    emit(&a.format.exporter().history(&diffs, &h)?)?;
    Ok(Outcome::Done)
}
