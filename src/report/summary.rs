//! A run's summary.md and its charts, from what the run directory holds: `run` stores them,
//! `report` prints the summary again from the stored files.

use std::path::Path;

use anyhow::{Context, Result};
use indexmap::IndexMap;

use super::chart::{bars, timeline, Chart, NamedChart};
use crate::matrix::model::Matrix;
use crate::results::manifest::Manifest;
use crate::results::rundir::MANIFEST;
use crate::results::RunDir;

/// Render summary.md from what the run directory holds (the caller decides where it goes:
/// `run` stores it, `report` prints it and leaves the stored run untouched).
/// A failed attempt that a later attempt measured is left out (`RunDir::current_rows`).
pub(crate) fn render(dir: &RunDir, m: &Matrix, template: Option<&Path>) -> Result<String> {
    // Charts are linked when the run directory holds them (runs before charts had none, and
    // their summaries stay as they were).
    let stored = |file: &str| dir.file(CHARTS).join(file).is_file();
    render_linking(dir, m, template, &stored)
}

/// `render`, linking the charts `link` accepts by file name (the HTML report links all of
/// them: it draws them itself).
pub(crate) fn render_linking(
    dir: &RunDir,
    m: &Matrix,
    template: Option<&Path>,
    link: &dyn Fn(&str) -> bool,
) -> Result<String> {
    let rows = dir.current_rows()?;
    let man = stored_manifest(dir)?;
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
                    .map(|i| match &i.source {
                        // What it was built from, so that a table of two commits says which.
                        Some(src) => format!(
                            "{} (from {} {}, recipe {}{})",
                            i.reference,
                            src.describe,
                            src.commit.get(..12).unwrap_or(&src.commit),
                            src.recipe,
                            match src.flags.is_empty() {
                                true => String::new(),
                                false => format!(", flags {}", src.flags.join(" ")),
                            }
                        ),
                        None => i.reference.clone(),
                    })
                    .unwrap_or_else(|| "external".into()),
            })
            .collect(),
        data: man.data.clone(),
        params: declared_order(&man.params, m),
    };
    let template_text = match template {
        Some(p) => crate::input::file::read_text(p, crate::input::file::TEMPLATE)?,
        None => super::markdown::DEFAULT_TEMPLATE.to_string(),
    };
    let series = metric_series(dir, m)?;
    let mut ctx = super::markdown::context(m, &rows, &facts, &series);
    ctx.charts = run_charts(dir, m, &rows, &series)?
        .into_iter()
        .filter(|c| link(&c.file))
        .map(|c| super::markdown::ChartLink {
            title: crate::escape::md_text(c.chart.title()),
            file: c.file,
        })
        .collect();
    ctx.load_curves = load_curves(dir, m, &rows)?;
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
    let text = super::markdown::render(&template_text, &ctx).map_err(|e| match template {
        // A user's template that does not parse or render is an input to fix (exit 2).
        Some(p) => crate::error::UsageError(format!(
            "template {}: {}",
            crate::escape::terminal(&p.display().to_string()),
            crate::escape::terminal(&format!("{e:#}"))
        ))
        .into(),
        None => e,
    })? + &super::operations::section(dir, m)?
        + &super::sharing::section(&rows)
        + &super::client_bound::section(&rows);
    Ok(text)
}

/// The manifest's parameter values in the order the matrix declares them (the manifest is
/// read through a JSON value, which sorts its keys); any the matrix does not declare last.
fn declared_order(values: &IndexMap<String, String>, m: &Matrix) -> IndexMap<String, String> {
    let mut out: IndexMap<String, String> = (m.params.keys())
        .filter_map(|k| Some((k.clone(), values.get(k)?.clone())))
        .collect();
    for (k, v) in values {
        out.entry(k.clone()).or_insert_with(|| v.clone());
    }
    out
}

/// The run's manifest.json as `check::read_manifest` accepts it (a run without one, or of an
/// older rmatrix, has its facts unknown).
pub(crate) fn stored_manifest(dir: &RunDir) -> Result<Manifest> {
    let value = crate::results::check::read_manifest(&dir.file(MANIFEST))?;
    Ok(value
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default())
}

/// The load-curve tables, asked for or implied by a sweep's stop rule (which reads the same
/// curves): a level measured once reads its interval from its per-second batch means.
fn load_curves(
    dir: &RunDir,
    m: &Matrix,
    rows: &[crate::results::ResultRow],
) -> Result<Vec<super::load_curve::LoadCurve>> {
    let spec = match (&m.report.load_curve, m.load.until) {
        (Some(spec), _) => spec.clone(),
        (None, Some(_)) => Default::default(),
        (None, None) => return Ok(Vec::new()),
    };
    let batches = crate::results::samples::ThroughputBatches::read(dir)?;
    let batches = |r: &crate::results::ResultRow| batches.of(r);
    Ok(super::load_curve::curves(
        &spec,
        m.report.confidence(),
        rows,
        &batches,
    ))
}

/// Folder of the SVG charts in a run directory.
pub(crate) const CHARTS: &str = "charts";

/// Every chart of a run (none when the matrix turns them off): against the load level, then
/// per second.
pub(crate) fn run_charts(
    dir: &RunDir,
    m: &Matrix,
    rows: &[crate::results::ResultRow],
    series: &crate::results::samples::Series,
) -> Result<Vec<NamedChart<Chart>>> {
    if !m.report.charts {
        return Ok(Vec::new());
    }
    let metric = crate::model::metric::Metric::find(&m.report.metric)
        .unwrap_or(&crate::model::metric::METRICS[0]);
    let stats = super::pivot::cell_stats(m, rows, metric, series, m.report.confidence());
    let mut charts: Vec<NamedChart<Chart>> = super::chart::for_run(m, rows, &stats, metric)
        .into_iter()
        .map(|c| NamedChart {
            file: c.file,
            chart: Chart::Curve(c.chart),
        })
        .collect();
    // One load level: no curve, the metric as bars.
    if charts.is_empty() {
        charts.extend(
            bars::metric_bars(m, &stats, metric)
                .into_iter()
                .map(|c| NamedChart {
                    file: c.file,
                    chart: Chart::Bars(c.chart),
                }),
        );
    }
    let throughput = match m.report.metric.as_str() {
        "tps" => "tps",
        _ => "qps",
    };
    let seconds = timeline_seconds(dir, throughput, &m.report.timeline_counters)?;
    charts.extend(
        timeline::for_run(rows, &seconds, throughput)
            .into_iter()
            .map(|c| NamedChart {
                file: c.file,
                chart: Chart::Timeline(c.chart),
            }),
    );
    let flames = flame_graphs(dir, rows)?;
    let differentials = differential_flames(m, &flames);
    charts.extend(flames.into_iter().map(|(_, chart)| chart));
    charts.extend(differentials);
    Ok(charts)
}

/// Against the report's baseline (`baseline: {config: binlog-off}`), a differential flame
/// graph of each profiled cell whose baseline cell was profiled too: red where the cell spent
/// more of its CPU than its baseline, blue where less (first iterations, as the flame
/// graphs).
fn differential_flames(
    m: &Matrix,
    flames: &[(crate::results::ResultRow, NamedChart<Chart>)],
) -> Vec<NamedChart<Chart>> {
    let base = &m.report.baseline;
    if base.is_empty() {
        return Vec::new();
    }
    let folded = |c: &NamedChart<Chart>| match &c.chart {
        Chart::Flame(f) => Some(f.folded.clone()),
        _ => None,
    };
    let is_base = |c: &crate::model::cell::Cell| {
        (base.iter()).all(|(dim, value)| c.get_named(dim).as_deref() == Some(value))
    };
    let mut out = Vec::new();
    for (row, chart) in flames {
        let cell = row.cell();
        if is_base(&cell) {
            continue;
        }
        // The cell whose values are the baseline's on its dimensions and this one's elsewhere.
        let Some((base_row, base_chart)) = flames.iter().find(|(b, _)| {
            let b = b.cell();
            is_base(&b)
                && crate::model::cell::Dimension::ALL
                    .iter()
                    .all(|d| base.contains_key(d.name()) || b.get(*d) == cell.get(*d))
        }) else {
            continue;
        };
        let (Some(before), Some(after)) = (folded(base_chart), folded(chart)) else {
            continue;
        };
        let Ok(joined) = super::chart::flame::differential(&before, &after) else {
            continue;
        };
        let load = load_of(row);
        out.push(NamedChart {
            file: super::chart::file_name(&[
                "flame-diff",
                &row.server,
                &row.config,
                &row.workload,
                &row.engine,
                &load,
            ]),
            chart: Chart::Flame(super::chart::flame::Flame {
                title: format!(
                    "Server CPU, {} / {} against {} / {}: {} at {load} (red: more, blue: less)",
                    row.server,
                    row.config,
                    base_row.server,
                    base_row.config,
                    super::chart::title_tail(&row.workload, &row.engine)
                ),
                folded: joined,
            }),
        });
    }
    out
}

/// A cell's load level as chart names and titles write it: `r200` (open loop) or `c8`.
fn load_of(row: &crate::results::ResultRow) -> String {
    match row.rate {
        Some(rate) => format!("r{rate}"),
        None => format!("c{}", row.concurrency),
    }
}

/// A flame graph of each profiled cell's first iteration (`profiles/`), with its row.
fn flame_graphs(
    dir: &RunDir,
    rows: &[crate::results::ResultRow],
) -> Result<Vec<(crate::results::ResultRow, NamedChart<Chart>)>> {
    let mut out = Vec::new();
    for r in rows.iter().filter(|r| r.is_ok() && r.iteration == 1) {
        let Some(folded) = crate::results::profiles::read(&dir.path, r)? else {
            continue;
        };
        let load = load_of(r);
        out.push((
            r.clone(),
            NamedChart {
                file: super::chart::file_name(&[
                    "flame",
                    &r.server,
                    &r.config,
                    &r.workload,
                    &r.engine,
                    &load,
                ]),
                chart: Chart::Flame(super::chart::flame::Flame {
                    title: format!(
                        "Server CPU: {} / {}, {} at {load} (iteration 1)",
                        r.server,
                        r.config,
                        super::chart::title_tail(&r.workload, &r.engine)
                    ),
                    folded,
                }),
            },
        ));
    }
    Ok(out)
}

/// The series the per-second charts read, from samples.csv and warmup.csv.
fn timeline_seconds(
    dir: &RunDir,
    throughput: &str,
    counters: &[String],
) -> Result<timeline::Seconds> {
    use crate::results::samples::{read_series, SAMPLES_CSV, WARMUP_CSV};
    use crate::results::server_seconds::SERVER_SECONDS_CSV;
    let (measured, warmup) = (dir.file(SAMPLES_CSV), dir.file(WARMUP_CSV));
    Ok(timeline::Seconds {
        throughput: read_series(&measured, throughput)?,
        p99: read_series(&measured, "lat_p99_ms")?,
        p95: read_series(&measured, "lat_p95_ms")?,
        warmup_throughput: read_series(&warmup, throughput)?,
        warmup_p99: read_series(&warmup, "lat_p99_ms")?,
        warmup_p95: read_series(&warmup, "lat_p95_ms")?,
        server: match counters.is_empty() {
            true => Default::default(),
            false => crate::results::server_seconds::read(&dir.file(SERVER_SECONDS_CSV))?,
        },
        counters: counters.to_vec(),
    })
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

/// Draw the run's charts into `charts/` (each replaced whole, by a rename); returns them.
pub(crate) fn write_charts(dir: &RunDir, m: &Matrix) -> Result<Vec<NamedChart<String>>> {
    let drawn = draw_charts(dir, m)?;
    if drawn.is_empty() {
        return Ok(drawn);
    }
    let folder = dir.file(CHARTS);
    // A link in its place would have the stale charts' removal and the writes land outside
    // the run.
    if std::fs::symlink_metadata(&folder).is_ok_and(|m| !m.is_dir()) {
        return Err(crate::error::UsageError(format!(
            "{} is not a folder (a symbolic link or a file): the charts are written into \
             the run directory's own charts/ only; remove it and render again",
            crate::escape::terminal(&folder.display().to_string())
        ))
        .into());
    }
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("failed to create {}", folder.display()))?;
    // Charts an earlier rendering drew under other names go (a re-render after an upgrade).
    if let Ok(entries) = std::fs::read_dir(&folder) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".svg") && !drawn.iter().any(|c| c.file == name) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    for c in &drawn {
        // Written whole or not at all; a failed write (a full disk) leaves no temp file.
        crate::results::files::replace_file(&folder.join(&c.file), c.chart.as_bytes())?;
    }
    Ok(drawn)
}

/// Every chart of the run drawn as SVG text, by file name. A chart that cannot be drawn
/// (nothing positive on a log scale) is left out with a warning; the tables hold the numbers
/// either way.
pub(crate) fn draw_charts(dir: &RunDir, m: &Matrix) -> Result<Vec<NamedChart<String>>> {
    let rows = dir.current_rows()?;
    let series = metric_series(dir, m)?;
    let mut drawn = Vec::new();
    for c in run_charts(dir, m, &rows, &series)? {
        match c.chart.svg() {
            Ok(svg) => drawn.push(NamedChart {
                file: c.file,
                chart: svg,
            }),
            Err(e) => eprintln!("warning: chart {} left out: {e:#}", c.file),
        }
    }
    Ok(drawn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_show_in_the_order_the_matrix_declares_them() {
        let m: Matrix = crate::input::yaml::from_str(
            "params: {rev: {}, iters: {type: int}}\nservers: {a: {image: x}}\n\
             workloads: {w: {slap: {}}}\nlength: 10\n",
        )
        .unwrap();
        let read_back: IndexMap<String, String> = [("extra", "1"), ("iters", "3"), ("rev", "a")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let keys: Vec<String> = declared_order(&read_back, &m).into_keys().collect();
        assert_eq!(keys, ["rev", "iters", "extra"]);
    }

    /// Each profiled cell against its baseline cell (the same cell at `config: off`): one
    /// differential flame graph per pair whose two sides were profiled, none for the baseline.
    #[test]
    fn a_differential_flame_graph_of_each_cell_against_its_baseline() {
        let m: Matrix = crate::input::yaml::from_str(
            "servers: {a: {image: x}}\nconfigs: {off: {}, on: {}}\n\
             workloads: {w: {slap: {}}, v: {slap: {}}}\nlength: 10\n\
             report: {baseline: {config: off}}\n",
        )
        .unwrap();
        let flame = |config: &str, workload: &str, folded: &str| {
            let mut row = crate::results::ResultRow::default();
            (row.server, row.config, row.workload) = ("a".into(), config.into(), workload.into());
            row.concurrency = 2;
            let chart = NamedChart {
                file: format!("flame-{config}-{workload}.svg"),
                chart: Chart::Flame(super::super::chart::flame::Flame {
                    title: String::new(),
                    folded: folded.into(),
                }),
            };
            (row, chart)
        };
        let flames = [
            flame("off", "w", "mariadbd;write 10\n"),
            flame("on", "w", "mariadbd;write 10\nmariadbd;MYSQL_BIN_LOG 30\n"),
            flame("on", "v", "mariadbd;read 10\n"),
        ];
        let diffs = differential_flames(&m, &flames);
        assert_eq!(diffs.len(), 1, "only w has both sides");
        assert!(
            diffs[0].file.starts_with("flame-diff-a-on-w"),
            "{}",
            diffs[0].file
        );
        let Chart::Flame(f) = &diffs[0].chart else {
            panic!("a flame graph")
        };
        assert!(f.title.contains("a / on against a / off"), "{}", f.title);
        assert!(
            f.folded.contains("mariadbd;MYSQL_BIN_LOG 0 30"),
            "{}",
            f.folded
        );
    }
}
