//! `rmatrix report`: a stored run's tables and charts rendered again, in a format.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::stdio::emit;
use crate::error::{Outcome, UsageError};
use crate::export::{Format, RunView};
use crate::matrix::LoadedMatrix;
use crate::results::RunDir;

/// `rmatrix report`'s options.
#[derive(Debug, clap::Args)]
pub(crate) struct ReportArgs {
    /// A run directory written by `rmatrix run`.
    pub(crate) dir: PathBuf,
    /// minijinja template for the Markdown output.
    #[arg(long)]
    pub(crate) template: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "md")]
    pub(crate) format: Format,
    /// Store the re-rendered summary.md, charts/ and report.html in DIR instead of
    /// printing (e.g. after upgrading rmatrix).
    #[arg(long)]
    pub(crate) write: bool,
    /// OpenMetrics: leave out the `run_id` and `matrix` labels, so that a cell is the
    /// same series from run to run (a dashboard's view; two runs' files then collide).
    #[arg(long)]
    pub(crate) no_run_labels: bool,
    /// OpenMetrics: stamp each sample with its iteration's start, so the file can be
    /// backfilled into Prometheus (`promtool tsdb create-blocks-from openmetrics`).
    #[arg(long)]
    pub(crate) timestamps: bool,
}

/// Print a stored run's report, or with `--write` render every stored report again.
pub(super) fn report(a: &ReportArgs) -> Result<Outcome> {
    let series = series_of(a.format, a.no_run_labels, a.timestamps)?;
    let (dir, template) = (a.dir.as_path(), a.template.as_deref());
    if !a.write {
        emit(&report_series(dir, template, a.format, series)?)?;
        return Ok(Outcome::Done);
    }
    // --write renders every stored report, from the matrix copy.
    let (run, loaded) = stored_run(dir, true)?;
    let matrix = &loaded.expect("invariant: asked for the matrix").matrix;
    crate::run::store_reports(&run, matrix, template)?;
    eprintln!(
        "rendered summary.md, charts/ and report.html in {}",
        crate::escape::terminal(&dir.display().to_string())
    );
    Ok(Outcome::Done)
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
