//! CSV for scripts: a comparison and a history, one line per cell x metric (and run), each
//! line carrying `format_version`. A run's own CSV is its results.csv.

use anyhow::Result;

use super::{Exporter, RunView};
use crate::compare::env::EnvDiff;
use crate::compare::history::History;
use crate::compare::join::{Comparison, COMPARE_FORMAT_VERSION};

pub(crate) struct Csv;

impl Exporter for Csv {
    fn needs_matrix(&self) -> bool {
        // results.csv as stored.
        false
    }

    /// results.csv as stored, each field made safe for a terminal and a spreadsheet (a
    /// server's error text can carry escape sequences and formulas).
    fn run(&self, run: &RunView) -> Result<String> {
        use crate::results::stored_csv;
        let path = run.dir.file(crate::results::rundir::RESULTS_CSV);
        let Some(bytes) = stored_csv::bytes(&path, crate::input::file::RESULTS)? else {
            return Ok(String::new());
        };
        let (headers, records) = stored_csv::records(&path, &bytes)?;
        let safe = |r: &csv::StringRecord| -> Vec<String> {
            r.iter()
                .map(|f| crate::escape::csv_text(&crate::escape::terminal(f)))
                .collect()
        };
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(safe(&headers))?;
        for (_, rec) in &records {
            w.write_record(safe(rec))?;
        }
        let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(String::from_utf8(bytes)?)
    }

    fn compare(&self, _: &[EnvDiff], comparisons: &[Comparison]) -> Result<String> {
        self::comparisons(comparisons)
    }

    fn history(&self, _: &[EnvDiff], history: &History) -> Result<String> {
        self::history(history)
    }
}

pub(crate) const CSV_COLUMNS: [&str; 33] = [
    "format_version",
    "baseline",
    "candidate",
    "cell",
    "server",
    "config",
    "engine",
    "workload",
    "concurrency",
    "metric",
    "higher_is_better",
    "baseline_n",
    "baseline_mean",
    "baseline_stddev",
    "candidate_n",
    "candidate_mean",
    "candidate_stddev",
    "change_pct",
    "ci_low_pct",
    "ci_high_pct",
    "p_value",
    "threshold_pct",
    "alpha",
    "verdict",
    "confidence",
    "basis",
    "noise_runs",
    "env_differs",
    "mde_pct",
    "sees_threshold",
    "p_adjusted",
    "assumed_run_noise_pct",
    "client_bound",
];

/// One line per cell x metric; cells on one side only have verdict `only_in_baseline` or
/// `only_in_candidate`, cells without a successful iteration on a side
/// `no_successful_iteration`, with empty numbers.
pub(crate) fn comparisons(comparisons: &[Comparison]) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(CSV_COLUMNS)?;
    let opt = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    for c in comparisons {
        for ch in &c.changes {
            let dim = |d: &str| ch.dims.get(d).cloned().unwrap_or_default();
            w.write_record([
                COMPARE_FORMAT_VERSION.to_string(),
                c.baseline.run_id.clone(),
                c.candidate.run_id.clone(),
                ch.cell.clone(),
                dim("server"),
                dim("config"),
                dim("engine"),
                dim("workload"),
                dim("concurrency"),
                ch.metric.clone(),
                ch.higher_is_better.to_string(),
                ch.baseline.n.to_string(),
                ch.baseline.mean.to_string(),
                opt(ch.baseline.stddev),
                ch.candidate.n.to_string(),
                ch.candidate.mean.to_string(),
                opt(ch.candidate.stddev),
                opt(ch.change_pct),
                opt(ch.ci_low_pct),
                opt(ch.ci_high_pct),
                opt(ch.p_value),
                c.threshold_of(ch).to_string(),
                c.alpha.to_string(),
                serde_json::to_value(ch.verdict)?
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                c.confidence.to_string(),
                ch.basis
                    .map(|b| serde_json::to_value(b).map(|v| v.as_str().unwrap_or("").to_string()))
                    .transpose()?
                    .unwrap_or_default(),
                ch.noise_runs.map(|n| n.to_string()).unwrap_or_default(),
                ch.env_differs.to_string(),
                opt(ch.mde_pct),
                ch.sees_threshold.map(|b| b.to_string()).unwrap_or_default(),
                opt(ch.p_adjusted),
                c.assumed_run_noise_pct.to_string(),
                ch.client_bound.to_string(),
            ])?;
        }
        for (verdict, cells) in [
            ("only_in_baseline", &c.only_in_baseline),
            ("only_in_candidate", &c.only_in_candidate),
            ("no_successful_iteration", &c.no_successful_iteration),
        ] {
            for cell in cells.iter() {
                let mut rec = vec![String::new(); CSV_COLUMNS.len()];
                rec[0] = COMPARE_FORMAT_VERSION.to_string();
                rec[1] = c.baseline.run_id.clone();
                rec[2] = c.candidate.run_id.clone();
                rec[3] = cell.clone();
                rec[23] = verdict.into();
                rec[24] = c.confidence.to_string();
                w.write_record(&rec)?;
            }
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// An optional number as a CSV field (empty when absent).
fn num(v: Option<f64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

pub(crate) fn history(h: &History) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "format_version",
        "cell",
        "server",
        "config",
        "engine",
        "workload",
        "concurrency",
        "metric",
        "higher_is_better",
        "run_id",
        "started_at",
        "n",
        "mean",
        "stddev",
        "change_point",
        "change_pct",
        "change_lo_pct",
        "change_hi_pct",
        "p_value",
        "direction",
        "mde_pct",
    ])?;
    for s in &h.series {
        for p in &s.points {
            let dim = |d: &str| s.dims.get(d).cloned().unwrap_or_default();
            let cp = p.change_point.as_ref();
            w.write_record([
                h.format_version.to_string(),
                s.cell.clone(),
                dim("server"),
                dim("config"),
                dim("engine"),
                dim("workload"),
                dim("concurrency"),
                s.metric.clone(),
                s.higher_is_better.to_string(),
                h.runs[p.run].run_id.clone(),
                h.runs[p.run].started_at.clone(),
                p.n.to_string(),
                p.mean.to_string(),
                p.stddev.to_string(),
                cp.is_some().to_string(),
                num(cp.and_then(|c| c.change_pct)),
                num(cp.and_then(|c| c.change_lo_pct)),
                num(cp.and_then(|c| c.change_hi_pct)),
                cp.map(|c| c.p_value.to_string()).unwrap_or_default(),
                cp.map(|c| c.direction.to_string()).unwrap_or_default(),
                s.mde_pct.map(|v| v.to_string()).unwrap_or_default(),
            ])?;
        }
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}
