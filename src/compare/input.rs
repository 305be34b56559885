//! Reading stored run directories: results.csv rows, with the run's identity and environment
//! from manifest.json and its default metric from matrix.yaml. Results that cannot be right
//! are refused (`results::check`); facts a manifest of an older rmatrix lacks are unknown.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;

use super::env::{self, RunEnv};
use super::error::CompareError;
use crate::model::metric::Metric;
use crate::model::{CellKey, Dimension};
use crate::results::check;
use crate::results::rundir::{MANIFEST, MATRIX_COPY, RESULTS_CSV};
use crate::results::ResultRow;

/// One stored run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Run {
    pub(crate) path: PathBuf,
    pub(crate) run_id: String,
    /// The manifest's random token of the run directory (empty in runs of an older rmatrix).
    pub(crate) instance: String,
    pub(crate) started_at: String,
    /// The matrix's `report.metric` (default `qps`).
    pub(crate) report_metric: String,
    /// The matrix's `name` (empty when its copy cannot be read).
    pub(crate) matrix_name: String,
    /// What counted its instructions (`counted:` callgrind or perf; empty: not counted).
    pub(crate) counted_by: String,
    pub(crate) rows: Vec<ResultRow>,
    /// The columns of results.csv's header (an older file lacks the newer ones).
    pub(crate) columns: Vec<String>,
    /// Host, rmatrix version, images, server versions and variables (see `env`).
    pub(crate) env: RunEnv,
}

/// The iterations of one cell for one metric.
#[derive(Debug, Clone)]
pub(crate) struct CellSamples {
    pub(crate) dims: IndexMap<String, String>,
    pub(crate) values: Vec<f64>,
}

pub(crate) fn is_run_dir(path: &Path) -> bool {
    path.join(RESULTS_CSV).is_file()
}

pub(crate) fn load_run(path: &Path) -> Result<Run, CompareError> {
    if !is_run_dir(path) {
        return Err(CompareError::NotARun { path: path.into() });
    }
    let manifest = check::read_manifest(&path.join(MANIFEST))?;
    let results = check::read_results(&path.join(RESULTS_CSV))?;
    if !results.rows.iter().any(ResultRow::is_ok) {
        return Err(CompareError::NoResults { path: path.into() });
    }
    let env = env::load(path, manifest.as_ref())?;
    let manifest = manifest.unwrap_or_default();
    let rows = results.rows;
    // The matrix copy only for its report metric (an unknown one is refused by name later)
    // and its name.
    let matrix =
        crate::input::file::read_text(&path.join(MATRIX_COPY), crate::input::file::MATRIX_COPY)
            .ok()
            .and_then(|t| crate::input::yaml::from_str::<serde_json::Value>(&t).ok())
            .unwrap_or_default();
    let report_metric = (matrix["report"]["metric"].as_str())
        .unwrap_or("qps")
        .to_string();
    let matrix_name = matrix["name"].as_str().unwrap_or_default().to_string();
    // Older runs' manifests do not say: their matrix does.
    let counted_by = (manifest["counted"].as_str())
        .or(matrix["counted"].as_str())
        .unwrap_or_default()
        .to_string();
    let dir_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let text = |k: &str| {
        manifest[k]
            .as_str()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let started_at = text("started_at")
        .or_else(|| rows.iter().map(|r| r.started_at.clone()).min())
        .unwrap_or_default();
    Ok(Run {
        path: path.into(),
        run_id: text("run_id").unwrap_or(dir_name),
        instance: text("instance").unwrap_or_default(),
        started_at,
        report_metric,
        matrix_name,
        counted_by,
        rows,
        columns: results.columns,
        env,
    })
}

/// The runs of `paths` (each a run directory or a folder of them, such as `reports/runs`)
/// as they are listed; `in_order` orders them (`store::load_runs` does both, and reads stores).
pub(crate) fn load_runs_unsorted(paths: &[PathBuf]) -> Result<Vec<Run>, CompareError> {
    let mut runs = Vec::new();
    for p in paths {
        if is_run_dir(p) {
            runs.push(load_run(p)?);
            continue;
        }
        for d in run_dirs(p)? {
            match load_run(&d) {
                Ok(run) => runs.push(run),
                // A run that stopped before its first good iteration is no point in a series.
                Err(CompareError::NoResults { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(runs)
}

/// `path` itself when it is a run directory, else the run directories in the folder `path`,
/// by name.
pub(crate) fn run_dirs(path: &Path) -> Result<Vec<PathBuf>, CompareError> {
    if is_run_dir(path) {
        return Ok(vec![path.into()]);
    }
    let entries = std::fs::read_dir(path).map_err(|e| CompareError::Read {
        path: path.into(),
        source: e.into(),
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|d| is_run_dir(d))
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// `runs` (read from `paths`) each once, in start order; none is an error.
pub(crate) fn in_order(runs: Vec<Run>, paths: &[PathBuf]) -> Result<Vec<Run>, CompareError> {
    if runs.is_empty() {
        return Err(CompareError::NoRuns {
            paths: paths.to_vec(),
        });
    }
    let mut runs = once_each(runs);
    runs.sort_by(|a, b| a.started_at.cmp(&b.started_at).then(a.path.cmp(&b.path)));
    Ok(runs)
}

/// What makes a run the same run wherever its directory is copied: its run id and instance
/// token; a run of an older rmatrix (no token) is its directory.
pub(crate) fn identity(run: &Run) -> (String, String) {
    match run.instance.is_empty() {
        false => (run.run_id.clone(), run.instance.clone()),
        true => (
            String::new(),
            (run.path.canonicalize().unwrap_or_else(|_| run.path.clone()))
                .display()
                .to_string(),
        ),
    }
}

/// `runs` with each run once: a copy (a folder given twice, a run copied into a store) is
/// one measurement, not more evidence; each one left out is said on stderr.
fn once_each(runs: Vec<Run>) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::with_capacity(runs.len());
    let mut seen: Vec<(String, String)> = Vec::new();
    for run in runs {
        let id = identity(&run);
        match seen.iter().position(|s| *s == id) {
            Some(first) => eprintln!(
                "note: {} is the run `{}` of {} again ({}): counted once",
                crate::escape::terminal(&run.path.display().to_string()),
                crate::escape::terminal(&run.run_id),
                crate::escape::terminal(&out[first].path.display().to_string()),
                match run.instance.is_empty() {
                    false => "the same run id and instance token",
                    true => "the same directory",
                }
            ),
            None => {
                seen.push(id);
                out.push(run);
            }
        }
    }
    out
}

/// Metric names from `--metric` (repeatable, comma lists, `all`), or the default set.
pub(crate) fn resolve_metrics(
    asked: &[String],
    default: &[&str],
) -> Result<Vec<&'static Metric>, CompareError> {
    let names: Vec<String> = if asked.is_empty() {
        default.iter().map(|s| s.to_string()).collect()
    } else {
        asked
            .iter()
            .flat_map(|a| a.split(','))
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    if names.iter().any(|n| n == "all") {
        return Ok(crate::model::metric::METRICS.iter().collect());
    }
    let mut out: Vec<&'static Metric> = Vec::new();
    for n in names {
        let m = Metric::find(&n).ok_or_else(|| CompareError::UnknownMetric {
            name: n.clone(),
            valid: Metric::names().join(", "),
        })?;
        if !out.iter().any(|o| o.name == m.name) {
            out.push(m);
        }
    }
    Ok(out)
}

/// Check `--ignore` dimension names.
pub(crate) fn check_dims(ignore: &[String]) -> Result<(), CompareError> {
    match ignore.iter().find(|d| Dimension::parse(d).is_none()) {
        Some(bad) => Err(CompareError::UnknownDimension {
            name: bad.clone(),
            valid: Dimension::choices(),
        }),
        None => Ok(()),
    }
}

/// The dimensions a join keeps: all but the ignored ones, in column order.
fn kept(ignore: &[String]) -> impl Iterator<Item = Dimension> + '_ {
    (Dimension::ALL.into_iter()).filter(|d| !ignore.iter().any(|i| i == d.name()))
}

/// Join key of a row: its dimension values except the ignored ones.
pub(crate) fn key_of(r: &ResultRow, ignore: &[String]) -> CellKey {
    CellKey::over(kept(ignore), |d| r.dim(d))
}

/// A row's values on the kept dimensions, by name.
fn dims_of(r: &ResultRow, ignore: &[String]) -> IndexMap<String, String> {
    kept(ignore).map(|d| (d.to_string(), r.dim(d))).collect()
}

/// Display name of a cell: its non-empty dimension values, concurrency as `c<N>`.
pub(crate) fn cell_name(dims: &IndexMap<String, String>) -> String {
    dims.iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(d, v)| {
            if d == "concurrency" {
                format!("c{v}")
            } else {
                v.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" / ")
}

impl Run {
    /// Every metric asked for must have its column in this run's results.csv: a missing
    /// column is not "no values".
    pub(crate) fn require_metrics(&self, metrics: &[&Metric]) -> Result<(), CompareError> {
        let names: Vec<&str> = metrics.iter().map(|m| m.name).collect();
        check::require_columns(&self.path.join(RESULTS_CSV), &self.columns, &names)?;
        Ok(())
    }

    /// Ok iterations of `metric` per cell, keyed by the dimensions not in `ignore`, in the
    /// order the cells first appear in results.csv.
    pub(crate) fn samples(
        &self,
        metric: &Metric,
        ignore: &[String],
    ) -> IndexMap<CellKey, CellSamples> {
        let mut out: IndexMap<CellKey, CellSamples> = IndexMap::new();
        for r in self.rows.iter().filter(|r| r.is_ok()) {
            let Some(v) = metric.value(r).filter(|v| v.is_finite()) else {
                continue;
            };
            out.entry(key_of(r, ignore))
                .or_insert_with(|| CellSamples {
                    dims: dims_of(r, ignore),
                    values: Vec::new(),
                })
                .values
                .push(v);
        }
        out
    }

    /// Every cell key in results.csv, whether its iterations succeeded or not.
    pub(crate) fn cells(&self, ignore: &[String]) -> IndexMap<CellKey, IndexMap<String, String>> {
        let mut out = IndexMap::new();
        for r in &self.rows {
            out.entry(key_of(r, ignore))
                .or_insert_with(|| dims_of(r, ignore));
        }
        out
    }
}

/// Refuse a comparison that compared nothing: no cell in common has a value of any of
/// `metrics` on both sides (call it after the join, whose own errors say more).
pub(crate) fn require_compared(
    base: &Run,
    cand: &Run,
    metrics: &[&Metric],
    ignore: &[String],
) -> Result<(), CompareError> {
    let any = metrics.iter().any(|m| {
        let b = base.samples(m, ignore);
        let c = cand.samples(m, ignore);
        b.keys().any(|k| c.contains_key(k))
    });
    if any {
        return Ok(());
    }
    Err(CompareError::NothingCompared {
        baseline: base.path.clone(),
        candidate: cand.path.clone(),
        metrics: metrics
            .iter()
            .map(|m| m.name)
            .collect::<Vec<_>>()
            .join(", "),
    })
}
