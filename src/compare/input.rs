//! Reading stored run directories: results.csv rows, with the run's identity from
//! manifest.json and its default metric from matrix.yaml (both read leniently, so runs of
//! older or newer rmatrix versions still compare as long as results.csv is readable).

use std::path::{Path, PathBuf};

use indexmap::IndexMap;

use super::error::CompareError;
use crate::matrix::plan::DIMENSIONS;
use crate::report::metric::Metric;
use crate::results::rundir::{MANIFEST, MATRIX_COPY, RESULTS_CSV};
use crate::results::{ResultRow, FORMAT_VERSION};

/// One stored run.
#[derive(Debug, Clone)]
pub struct Run {
    pub path: PathBuf,
    pub run_id: String,
    pub started_at: String,
    /// The matrix's `report.metric` (default `qps`).
    pub report_metric: String,
    pub rows: Vec<ResultRow>,
}

/// The iterations of one cell for one metric.
#[derive(Debug, Clone)]
pub struct CellSamples {
    pub dims: IndexMap<String, String>,
    pub values: Vec<f64>,
}

pub fn is_run_dir(path: &Path) -> bool {
    path.join(RESULTS_CSV).is_file()
}

pub fn load_run(path: &Path) -> Result<Run, CompareError> {
    if !is_run_dir(path) {
        return Err(CompareError::NotARun { path: path.into() });
    }
    let read_err = |p: &Path, e: Box<dyn std::error::Error + Send + Sync>| CompareError::Read {
        path: p.into(),
        source: e,
    };
    let manifest: serde_json::Value = match std::fs::read_to_string(path.join(MANIFEST)) {
        Ok(text) => {
            serde_json::from_str(&text).map_err(|e| read_err(&path.join(MANIFEST), e.into()))?
        }
        Err(_) => serde_json::Value::Null,
    };
    if let Some(found) = manifest["format_version"].as_u64() {
        if found > u64::from(FORMAT_VERSION) {
            return Err(CompareError::NewerFormat {
                path: path.into(),
                found,
                supported: FORMAT_VERSION,
            });
        }
    }
    let csv = path.join(RESULTS_CSV);
    let rows = read_rows_lenient(&csv).map_err(|e| read_err(&csv, e))?;
    if !rows.iter().any(ResultRow::is_ok) {
        return Err(CompareError::NoResults { path: path.into() });
    }
    let report_metric = std::fs::read_to_string(path.join(MATRIX_COPY))
        .ok()
        .and_then(|t| serde_yaml::from_str::<serde_yaml::Value>(&t).ok())
        .and_then(|m| m["report"]["metric"].as_str().map(str::to_string))
        .unwrap_or_else(|| "qps".into());
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
        started_at,
        report_metric,
        rows,
    })
}

/// results.csv rows, where columns this version knows but the file lacks (it was written by
/// an older rmatrix; columns are only ever added) are read as empty.
pub fn read_rows_lenient(
    path: &Path,
) -> Result<Vec<ResultRow>, Box<dyn std::error::Error + Send + Sync>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.serialize(ResultRow::default())?;
    let text = String::from_utf8(w.into_inner().map_err(|e| e.to_string())?)?;
    let known = csv::StringRecord::from(
        text.lines()
            .next()
            .unwrap_or("")
            .split(',')
            .collect::<Vec<_>>(),
    );
    let mut r = csv::Reader::from_path(path)?;
    let have = r.headers()?.clone();
    let pos: Vec<Option<usize>> = known
        .iter()
        .map(|k| have.iter().position(|h| h == k))
        .collect();
    let mut rows = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let rec = rec?;
        let full: csv::StringRecord = pos
            .iter()
            .map(|p| p.and_then(|p| rec.get(p)).unwrap_or(""))
            .collect();
        rows.push(
            full.deserialize::<ResultRow>(Some(&known))
                .map_err(|e| format!("row {}: {e}", i + 2))?,
        );
    }
    Ok(rows)
}

/// The runs named by `paths`: each is a run directory or a folder of run directories (such
/// as `reports/runs`), ordered by start time.
pub fn load_runs(paths: &[PathBuf]) -> Result<Vec<Run>, CompareError> {
    let mut runs = Vec::new();
    for p in paths {
        if is_run_dir(p) {
            runs.push(load_run(p)?);
            continue;
        }
        let entries = std::fs::read_dir(p).map_err(|e| CompareError::Read {
            path: p.clone(),
            source: e.into(),
        })?;
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|d| is_run_dir(d))
            .collect();
        dirs.sort();
        for d in dirs {
            match load_run(&d) {
                Ok(run) => runs.push(run),
                // A run that stopped before its first good iteration is no point in a series.
                Err(CompareError::NoResults { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    if runs.is_empty() {
        return Err(CompareError::NoRuns {
            paths: paths.to_vec(),
        });
    }
    runs.sort_by(|a, b| a.started_at.cmp(&b.started_at).then(a.path.cmp(&b.path)));
    Ok(runs)
}

/// Metric names from `--metric` (repeatable, comma lists, `all`), or the default set.
pub fn resolve_metrics(
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
        return Ok(crate::report::metric::METRICS.iter().collect());
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
pub fn check_dims(ignore: &[String]) -> Result<(), CompareError> {
    match ignore.iter().find(|d| !DIMENSIONS.contains(&d.as_str())) {
        Some(bad) => Err(CompareError::UnknownDimension {
            name: bad.clone(),
            valid: DIMENSIONS.join(", "),
        }),
        None => Ok(()),
    }
}

/// Join key of a row: its dimension values except the ignored ones.
pub fn key_of(r: &ResultRow, ignore: &[String]) -> String {
    DIMENSIONS
        .iter()
        .filter(|d| !ignore.iter().any(|i| i == *d))
        .map(|d| r.dim(d))
        .collect::<Vec<_>>()
        .join("|")
}

/// Display name of a cell: its non-empty dimension values, concurrency as `c<N>`.
pub fn cell_name(dims: &IndexMap<String, String>) -> String {
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
    /// Ok iterations of `metric` per cell, keyed by the dimensions not in `ignore`, in the
    /// order the cells first appear in results.csv.
    pub fn samples(&self, metric: &Metric, ignore: &[String]) -> IndexMap<String, CellSamples> {
        let mut out: IndexMap<String, CellSamples> = IndexMap::new();
        for r in self.rows.iter().filter(|r| r.is_ok()) {
            let Some(v) = metric.value(r).filter(|v| v.is_finite()) else {
                continue;
            };
            let dims: IndexMap<String, String> = DIMENSIONS
                .iter()
                .filter(|d| !ignore.iter().any(|i| i == *d))
                .map(|d| (d.to_string(), r.dim(d)))
                .collect();
            let key = dims.values().cloned().collect::<Vec<_>>().join("|");
            out.entry(key)
                .or_insert_with(|| CellSamples {
                    dims,
                    values: Vec::new(),
                })
                .values
                .push(v);
        }
        out
    }

    /// Every cell key in results.csv, whether its iterations succeeded or not.
    pub fn cells(&self, ignore: &[String]) -> IndexMap<String, IndexMap<String, String>> {
        let mut out = IndexMap::new();
        for r in &self.rows {
            let dims: IndexMap<String, String> = DIMENSIONS
                .iter()
                .filter(|d| !ignore.iter().any(|i| i == *d))
                .map(|d| (d.to_string(), r.dim(d)))
                .collect();
            out.entry(dims.values().cloned().collect::<Vec<_>>().join("|"))
                .or_insert(dims);
        }
        out
    }
}
