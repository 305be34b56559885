//! summary.md: the pivot and delta tables rendered through a minijinja template
//! (`reports/templates/summary.md.j2` is built in; users pass their own with --template).

use anyhow::{Context as _, Result};
use serde::Serialize;

use super::metric::Metric;
use super::pivot::{cell_stats, sections, Section};
use crate::matrix::model::Matrix;
use crate::matrix::plan::DIMENSIONS;
use crate::measure::stats::summarize;
use crate::results::ResultRow;

pub const DEFAULT_TEMPLATE: &str = include_str!("../../reports/templates/summary.md.j2");

/// What a template sees.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub title: String,
    pub description: Option<String>,
    pub run_id: String,
    pub started_at: String,
    pub length: String,
    pub warmup: Option<String>,
    pub iterations: u32,
    pub metric: MetricView,
    pub baseline: String,
    pub sections: Vec<Section>,
    pub details: Vec<Detail>,
    pub failures: Vec<Failure>,
    pub servers: Vec<ServerView>,
    /// Every result row, for templates that want to compute their own tables.
    pub rows: Vec<ResultRow>,
}

#[derive(Debug, Serialize)]
pub struct MetricView {
    pub name: String,
    pub title: String,
    pub unit: String,
    pub higher_is_better: bool,
}

#[derive(Debug, Serialize)]
pub struct Detail {
    pub cell: String,
    pub n: usize,
    pub seconds_avg: String,
    pub seconds_min: String,
    pub seconds_max: String,
    pub mean: String,
    pub stddev: String,
    pub cv: String,
    pub p95: String,
    pub p99: String,
    pub errors: u64,
}

#[derive(Debug, Serialize)]
pub struct Failure {
    pub cell: String,
    pub iteration: u32,
    pub error: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ServerView {
    pub name: String,
    pub version: String,
    pub image: String,
}

/// Facts about the run that are not in results.csv (from the manifest).
#[derive(Debug, Default)]
pub struct RunFacts {
    pub run_id: String,
    pub started_at: String,
    pub servers: Vec<ServerView>,
}

fn cell_name(r: &ResultRow) -> String {
    DIMENSIONS
        .iter()
        .map(|d| {
            if *d == "concurrency" {
                format!("c{}", r.concurrency)
            } else {
                r.dim(d)
            }
        })
        .filter(|v| !v.is_empty())
        .collect::<Vec<_>>()
        .join(" / ")
}

pub fn context(matrix: &Matrix, rows: &[ResultRow], facts: &RunFacts) -> Summary {
    let metric = Metric::find(&matrix.report.metric).unwrap_or(&super::metric::METRICS[0]);
    let stats = cell_stats(matrix, rows, metric);
    let fmt3 = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_else(|| "n/a".into());
    let details = stats
        .iter()
        .map(|s| {
            let same: Vec<&ResultRow> = rows
                .iter()
                .filter(|r| {
                    r.is_ok() && DIMENSIONS.iter().all(|d| s.dims.get(*d) == Some(&r.dim(d)))
                })
                .collect();
            let secs = summarize(&same.iter().filter_map(|r| r.seconds).collect::<Vec<_>>());
            let mean_of = |f: fn(&ResultRow) -> Option<f64>| {
                summarize(&same.iter().filter_map(|r| f(r)).collect::<Vec<_>>()).map(|s| s.mean)
            };
            Detail {
                cell: cell_name(same[0]),
                n: s.n,
                seconds_avg: fmt3(secs.map(|s| s.mean)),
                seconds_min: fmt3(secs.map(|s| s.min)),
                seconds_max: fmt3(secs.map(|s| s.max)),
                mean: metric.format(s.mean),
                stddev: metric.format(s.stddev),
                cv: format!("{:.1}%", s.cv_pct),
                p95: fmt3(mean_of(|r| r.lat_p95_ms)),
                p99: fmt3(mean_of(|r| r.lat_p99_ms)),
                errors: same.iter().filter_map(|r| r.errors).sum(),
            }
        })
        .collect();
    let failures = rows
        .iter()
        .filter(|r| !r.is_ok())
        .map(|r| Failure {
            cell: cell_name(r),
            iteration: r.iteration,
            error: r.error.replace('|', "\\|"),
        })
        .collect();
    let baseline = matrix
        .report
        .baseline
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    Summary {
        title: matrix
            .name
            .clone()
            .unwrap_or_else(|| "rmatrix results".into()),
        description: matrix.description.clone(),
        run_id: facts.run_id.clone(),
        started_at: facts.started_at.clone(),
        length: matrix.length.to_string(),
        warmup: matrix.warmup.map(|w| w.to_string()),
        iterations: matrix.iterations,
        metric: MetricView {
            name: metric.name.into(),
            title: metric.title.into(),
            unit: metric.unit.into(),
            higher_is_better: metric.higher_is_better,
        },
        baseline,
        sections: sections(matrix, &stats, metric),
        details,
        failures,
        servers: facts.servers.clone(),
        rows: rows.to_vec(),
    }
}

pub fn render(template: &str, ctx: &Summary) -> Result<String> {
    let mut env = minijinja::Environment::new();
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .context("invariant: valid syntax config")?,
    );
    env.add_template("summary", template)
        .context("failed to parse the report template")?;
    let out = env
        .get_template("summary")?
        .render(minijinja::Value::from(minijinja::value::Serde(ctx)))
        .context("failed to render the report template")?;
    Ok(out)
}
