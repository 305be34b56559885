//! A run's summary.md and its charts, from what the run directory holds: `run` stores them,
//! `report` prints the summary again from the stored files.

use std::path::Path;

use anyhow::{Context, Result};

use crate::matrix::model::Matrix;
use crate::results::manifest::Manifest;
use crate::results::rundir::MANIFEST;
use crate::results::RunDir;

/// Render summary.md from what the run directory holds (the caller decides where it goes:
/// `run` stores it, `report` prints it and leaves the stored run untouched).
/// A failed attempt that a later attempt measured is left out (`RunDir::current_rows`).
pub fn render(dir: &RunDir, m: &Matrix, template: Option<&Path>) -> Result<String> {
    let rows = dir.current_rows()?;
    let man: Manifest = std::fs::read_to_string(dir.file(MANIFEST))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let facts = super::markdown::RunFacts {
        run_id: man.run_id.clone(),
        started_at: man.started_at.clone(),
        servers: man
            .deployments
            .iter()
            .map(|d| super::markdown::ServerView {
                name: format!("{} / {}", d.server, d.config),
                version: d.version.clone().unwrap_or_else(|| "n/a".into()),
                image: man
                    .images
                    .get(&d.server)
                    .map(|i| i.reference.clone())
                    .unwrap_or_else(|| "external".into()),
            })
            .collect(),
    };
    let template = match template {
        Some(p) => std::fs::read_to_string(p)
            .with_context(|| format!("failed to read template {}", p.display()))?,
        None => super::markdown::DEFAULT_TEMPLATE.to_string(),
    };
    let series = metric_series(dir, m)?;
    let mut ctx = super::markdown::context(m, &rows, &facts, &series);
    // Charts are linked when the run directory holds them (runs before charts had none, and
    // their summaries stay as they were).
    ctx.charts = run_charts(m, &rows, &series)
        .into_iter()
        .filter(|c| dir.file(CHARTS).join(&c.file).is_file())
        .map(|c| super::markdown::ChartLink {
            title: crate::escape::md_text(&c.chart.title),
            file: c.file,
        })
        .collect();
    if m.report.drift {
        let read = |col| {
            crate::results::samples::read_series(
                &dir.file(crate::results::samples::SAMPLES_CSV),
                col,
            )
        };
        // Open loop: throughput against each second's own target (a wave is not drift).
        let throughput = match m.load.open() {
            true => read("served")?,
            false => read("qps")?,
        };
        ctx.drift = super::drift::drifts(&throughput, &read("lat_p95_ms")?, m.report.confidence());
        ctx.drift_served = m.load.open();
    }
    let text = super::markdown::render(&template, &ctx)? + &super::operations::section(dir, m)?;
    Ok(text)
}

/// Folder of the SVG charts in a run directory.
pub const CHARTS: &str = "charts";

fn run_charts(
    m: &Matrix,
    rows: &[crate::results::ResultRow],
    series: &crate::results::samples::Series,
) -> Vec<super::chart::NamedChart> {
    if !m.report.charts {
        return Vec::new();
    }
    let metric = crate::model::metric::Metric::find(&m.report.metric)
        .unwrap_or(&crate::model::metric::METRICS[0]);
    let stats = super::pivot::cell_stats(m, rows, metric, series, m.report.confidence());
    super::chart::for_run(m, rows, &stats, metric)
}

/// The per-second samples of the report metric (only qps and tps have them): they give cells
/// measured once an interval (batch means).
fn metric_series(dir: &RunDir, m: &Matrix) -> Result<crate::results::samples::Series> {
    Ok(match m.report.metric.as_str() {
        col @ ("qps" | "tps") => crate::results::samples::read_series(
            &dir.file(crate::results::samples::SAMPLES_CSV),
            col,
        )?,
        _ => Default::default(),
    })
}

/// Draw the run's charts into `charts/` (each replaced whole, by a rename).
pub fn write_charts(dir: &RunDir, m: &Matrix) -> Result<usize> {
    let rows = dir.current_rows()?;
    let series = metric_series(dir, m)?;
    let charts = run_charts(m, &rows, &series);
    if charts.is_empty() {
        return Ok(0);
    }
    let folder = dir.file(CHARTS);
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("failed to create {}", folder.display()))?;
    let mut written = 0;
    for c in &charts {
        // A chart that cannot be drawn (nothing positive on a log scale) is left out; the
        // tables hold the numbers either way.
        let svg = match super::chart::svg(&c.chart) {
            Ok(svg) => svg,
            Err(e) => {
                eprintln!("warning: chart {} left out: {e:#}", c.file);
                continue;
            }
        };
        let path = folder.join(&c.file);
        let tmp = folder.join(format!(".{}.tmp", c.file));
        std::fs::write(&tmp, svg).with_context(|| format!("failed to write {}", tmp.display()))?;
        std::fs::rename(&tmp, &path)
            .with_context(|| format!("failed to write {}", path.display()))?;
        written += 1;
    }
    Ok(written)
}
