//! Output formats: one file per format, each rendering the three things the commands print
//! (a stored run, a comparison between runs, a history of runs). Adding a format is a file
//! here and one line in `Format`: the exporter says what it needs (`needs_matrix`).

pub(crate) mod bmf;
pub(crate) mod csv;
mod decimal;
pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod junit;
pub(crate) mod markdown;
pub(crate) mod openmetrics;

use std::path::Path;

use anyhow::Result;

use crate::compare::env::EnvDiff;
use crate::compare::history::History;
use crate::compare::join::Comparison;
use crate::matrix::model::Matrix;
use crate::results::RunDir;

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Md,
    Csv,
    Json,
    /// One self-contained page: the Markdown's tables, the charts inline, the manifest.
    Html,
    /// OpenMetrics text (also valid Prometheus text): one gauge family per metric, the
    /// cell's dimensions as labels (`report` and `compare`).
    Openmetrics,
    /// Bencher Metric Format JSON, for `bencher run --adapter json` (`report` and one
    /// candidate's `compare`).
    Bmf,
}

impl Format {
    pub(crate) fn exporter(self) -> &'static dyn Exporter {
        match self {
            Format::Md => &markdown::Markdown,
            Format::Csv => &csv::Csv,
            Format::Json => &json::Json,
            Format::Html => &html::Html,
            Format::Openmetrics => &openmetrics::OpenMetrics,
            Format::Bmf => &bmf::Bmf,
        }
    }
}

/// The refusal of a format that has no history view (one value per cell and run does not
/// fit it): a usage error, exit code 2, naming the formats that have one.
pub(crate) fn not_for_history(format: &str) -> anyhow::Error {
    crate::error::UsageError(format!(
        "history has no {format} output; use --format md, csv, json or html"
    ))
    .into()
}

/// A stored run, as `rmatrix report` shows it.
pub(crate) struct RunView<'a> {
    pub(crate) dir: &'a RunDir,
    /// The run's own matrix (its copy in the run directory), for the formats that need it.
    pub(crate) matrix: Option<&'a Matrix>,
    /// A user's summary template instead of the built-in one (Markdown only).
    pub(crate) template: Option<&'a Path>,
    /// How OpenMetrics labels and stamps its samples.
    pub(crate) series: Series,
}

/// How a run's OpenMetrics samples are labelled and stamped (`report --no-run-labels`,
/// `--timestamps`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Series {
    /// Every sample labelled with the run's `run_id` and `matrix`, so that two runs' files
    /// never make one series (a dashboard that wants one series per cell turns it off).
    pub(crate) run_labels: bool,
    /// Every sample stamped with its iteration's start: a file Prometheus can backfill
    /// (`promtool tsdb create-blocks-from openmetrics`).
    pub(crate) timestamps: bool,
}

impl Default for Series {
    fn default() -> Series {
        Series {
            run_labels: true,
            timestamps: false,
        }
    }
}

/// What each format renders. `diffs` are the environment differences between the runs
/// compared (Markdown shows them above the tables; the machine formats carry them in the
/// comparison itself or leave them to `--require-same-env`).
pub(crate) trait Exporter {
    /// Whether `run` reads the run's own matrix (`RunView::matrix`), loaded from its copy in
    /// the run directory; the machine formats render the stored rows without it.
    fn needs_matrix(&self) -> bool;
    fn run(&self, run: &RunView) -> Result<String>;
    fn compare(&self, diffs: &[EnvDiff], comparisons: &[Comparison]) -> Result<String>;
    fn history(&self, diffs: &[EnvDiff], history: &History) -> Result<String>;
}
