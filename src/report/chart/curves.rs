//! The charts against the load level: the report metric with each point's interval, one
//! line per server/config and the baseline drawn heavier; the latency percentiles per
//! deployment.

use indexmap::IndexMap;

use super::{file_name, title_tail, Line, LineChart, NamedChart, Point};
use crate::matrix::model::Matrix;
use crate::model::metric::Metric;
use crate::report::pivot::CellStats;
use crate::results::ResultRow;

/// The charts against the load level: the report metric, then latency percentiles.
/// A curve needs two load levels: charts where no line has two points are left out (the
/// tables say it all for a matrix with one concurrency).
pub(crate) fn for_run(
    matrix: &Matrix,
    rows: &[ResultRow],
    stats: &[CellStats],
    metric: &Metric,
) -> Vec<NamedChart> {
    let mut charts = metric_vs_concurrency(matrix, stats, metric);
    charts.extend(latency_vs_concurrency(rows));
    charts.retain(|c| c.chart.lines.iter().any(|l| l.points.len() >= 2));
    charts
}

/// The load level a chart's x axis shows: the target rate in an open-loop run, else the
/// concurrency. Its name is the axis label.
fn level(open_loop: bool) -> &'static str {
    if open_loop {
        "target rate (/s)"
    } else {
        "concurrency"
    }
}

/// `metric` against the load level, following the matrix's `report:` block: one line per
/// value of its `columns` (default: server / config; and concurrency, when an open-loop run
/// has several), one chart per value of the other deployment dimensions; each point the
/// cell's mean with its interval.
pub(crate) fn metric_vs_concurrency(
    matrix: &Matrix,
    stats: &[CellStats],
    metric: &Metric,
) -> Vec<NamedChart> {
    let open = matrix.load.open();
    let line_dims = line_dims(matrix, stats, open);
    let chart_dims: Vec<&str> = DEPLOYMENT
        .into_iter()
        .filter(|d| !line_dims.contains(d))
        .collect();
    let x_dim = if open { "rate" } else { "concurrency" };
    let charts = points_by_chart(stats, x_dim, &chart_dims, &line_dims);
    let on_lines: Vec<(&String, &String)> = (matrix.report.baseline.iter())
        .filter(|(d, _)| line_dims.contains(&d.as_str()))
        .collect();
    charts
        .into_iter()
        .map(|(chart_values, lines)| {
            let lines = lines
                .into_iter()
                .map(|(values, points)| line(&line_dims, values, points, &on_lines))
                .collect();
            let named: Vec<&str> = chart_values
                .iter()
                .map(String::as_str)
                .filter(|v| !v.is_empty())
                .collect();
            let mut parts = vec![metric.name];
            parts.extend(&named);
            NamedChart {
                file: file_name(&parts),
                chart: LineChart {
                    title: format!("{}: {}", metric.title, named.join(", ")),
                    x_label: level(open).into(),
                    y_label: format!("{} ({})", metric.name, metric.unit),
                    lines,
                    log_y: false,
                },
            }
        })
        .collect()
}

/// The dimensions of a deployment, which split the cells into lines and charts.
const DEPLOYMENT: [&str; 4] = ["server", "config", "workload", "engine"];

/// Chart dims' values -> line dims' values -> points.
type Charts = IndexMap<Vec<String>, IndexMap<Vec<String>, Vec<Point>>>;

/// The dimensions that tell the lines of a chart apart: the `report:` block's `columns`
/// when they are all deployment dimensions (else server and config), and concurrency when an
/// open-loop run has several.
fn line_dims<'m>(matrix: &'m Matrix, stats: &[CellStats], open: bool) -> Vec<&'m str> {
    let columns = &matrix.report.columns;
    let mut line_dims: Vec<&str> =
        match !columns.is_empty() && columns.iter().all(|c| DEPLOYMENT.contains(&c.as_str())) {
            true => columns.iter().map(String::as_str).collect(),
            false => vec!["server", "config"],
        };
    let several_c = {
        let mut c: Vec<&String> = stats
            .iter()
            .filter_map(|s| s.dims.get("concurrency"))
            .collect();
        c.sort();
        c.dedup();
        c.len() > 1
    };
    if open && several_c {
        line_dims.push("concurrency");
    }
    line_dims
}

/// Each cell's mean, with its interval, at its load level (`x_dim`), grouped by chart and
/// line; cells without a numeric load level are left out.
fn points_by_chart(
    stats: &[CellStats],
    x_dim: &str,
    chart_dims: &[&str],
    line_dims: &[&str],
) -> Charts {
    let mut charts = Charts::new();
    for s in stats {
        let dim = |d: &str| s.dims.get(d).cloned().unwrap_or_default();
        let Ok(x) = dim(x_dim).parse::<f64>() else {
            continue;
        };
        let interval = s
            .half_pct
            .map(|h| (s.mean * (1.0 - h / 100.0), s.mean * (1.0 + h / 100.0)));
        charts
            .entry(chart_dims.iter().map(|d| dim(d)).collect())
            .or_default()
            .entry(line_dims.iter().map(|d| dim(d)).collect())
            .or_default()
            .push(Point {
                x,
                y: s.mean,
                interval,
            });
    }
    charts
}

/// One line, its points in load order, labelled with its dimensions' `values`; the baseline
/// when its values match every baseline dimension on the lines (`on_lines`).
fn line(
    line_dims: &[&str],
    values: Vec<String>,
    mut points: Vec<Point>,
    on_lines: &[(&String, &String)],
) -> Line {
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    let value = |d: &str| {
        line_dims
            .iter()
            .position(|l| *l == d)
            .map(|i| values[i].as_str())
    };
    let is_baseline =
        !on_lines.is_empty() && on_lines.iter().all(|(d, v)| value(d) == Some(v.as_str()));
    let label = line_dims
        .iter()
        .zip(&values)
        .filter(|(_, v)| !v.is_empty())
        .map(|(d, v)| match *d {
            "concurrency" => format!("{v} conns"),
            _ => v.clone(),
        })
        .collect::<Vec<_>>()
        .join(" / ");
    Line {
        label,
        points,
        baseline: is_baseline,
    }
}

/// The latency percentiles (p50, p95, p99, max; means over iterations) against the load level:
/// one chart per deployment and workload (and engine), on a log scale.
pub(crate) fn latency_vs_concurrency(rows: &[ResultRow]) -> Vec<NamedChart> {
    // A run is all open or all closed loop: open-loop rows carry their rate.
    let open = rows.iter().any(|r| r.rate.is_some());
    // (server, config, workload, engine, the concurrency in an open-loop run).
    type Key = (String, String, String, String, String);
    let mut cells: IndexMap<Key, IndexMap<u32, Vec<&ResultRow>>> = IndexMap::new();
    for r in rows.iter().filter(|r| r.is_ok()) {
        cells
            .entry((
                r.server.clone(),
                r.config.clone(),
                r.workload.clone(),
                r.engine.clone(),
                match open {
                    true => r.concurrency.to_string(),
                    false => String::new(),
                },
            ))
            .or_default()
            .entry(if open {
                r.rate.unwrap_or(0)
            } else {
                r.concurrency
            })
            .or_default()
            .push(r);
    }
    type Get = fn(&ResultRow) -> Option<f64>;
    let percentiles: [(&str, Get); 4] = [
        ("p50", |r| r.lat_p50_ms),
        ("p95", |r| r.lat_p95_ms),
        ("p99", |r| r.lat_p99_ms),
        ("max", |r| r.lat_max_ms),
    ];
    cells
        .into_iter()
        .filter_map(|((server, config, workload, engine, conns), by_c)| {
            let lines: Vec<Line> = percentiles
                .iter()
                .filter_map(|(name, get)| {
                    let mut points: Vec<Point> = by_c
                        .iter()
                        .filter_map(|(c, rs)| {
                            let v: Vec<f64> = rs.iter().filter_map(|r| get(r)).collect();
                            (!v.is_empty() && v.iter().all(|x| *x > 0.0)).then(|| Point {
                                x: *c as f64,
                                y: v.iter().sum::<f64>() / v.len() as f64,
                                interval: None,
                            })
                        })
                        .collect();
                    points.sort_by(|a, b| a.x.total_cmp(&b.x));
                    (!points.is_empty()).then(|| Line {
                        label: name.to_string(),
                        points,
                        baseline: false,
                    })
                })
                .collect();
            (!lines.is_empty()).then(|| NamedChart {
                file: file_name(&["latency", &server, &config, &workload, &engine, &conns]),
                chart: LineChart {
                    title: format!(
                        "Latency percentiles: {server} / {config}, {}",
                        title_tail(&workload, &engine)
                    ),
                    x_label: level(open).into(),
                    y_label: "latency (ms)".into(),
                    lines,
                    log_y: true,
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::pivot::cell_stats;
    use crate::results::samples::Series;
    use crate::stats::Confidence;

    fn rows() -> Vec<ResultRow> {
        let mut rows = Vec::new();
        for server in ["a", "b"] {
            for config in ["off", "on"] {
                for (c, qps) in [(1, 100.0), (2, 180.0), (4, 300.0)] {
                    rows.push(ResultRow {
                        server: server.into(),
                        config: config.into(),
                        workload: "w".into(),
                        concurrency: c,
                        iteration: 1,
                        status: crate::model::Status::Ok,
                        qps: Some(qps),
                        lat_p99_ms: Some(c as f64),
                        ..Default::default()
                    });
                }
            }
        }
        rows
    }

    fn charts(report: &str) -> Vec<NamedChart> {
        let m: Matrix = crate::input::yaml::from_str(&format!(
            "servers: {{a: {{image: x}}, b: {{image: x}}}}\nconfigs: {{off: {{}}, on: {{}}}}\n\
             workloads: {{w: {{slap: {{}}}}}}\nconcurrency: [1, 2, 4]\nlength: 10\nreport: {report}\n"
        ))
        .unwrap();
        let metric = Metric::find("qps").unwrap();
        let stats = cell_stats(&m, &rows(), metric, &Series::new(), Confidence::default());
        metric_vs_concurrency(&m, &stats, metric)
    }

    /// Lines follow `report.columns`, charts the other deployment dimensions; the baseline
    /// line is the one `report.baseline` names.
    #[test]
    fn lines_follow_the_report_columns() {
        let by_config = charts("{metric: qps, columns: [config], baseline: {config: off}}");
        assert_eq!(by_config.len(), 2, "one chart per server");
        assert_eq!(by_config[0].file, "qps-a-w.svg");
        let lines = &by_config[0].chart.lines;
        let labels: Vec<&str> = lines.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(labels, ["off", "on"]);
        assert!(lines[0].baseline && !lines[1].baseline);
        assert_eq!(lines[0].points.len(), 3);

        let default = charts("{metric: qps, columns: [concurrency]}");
        assert_eq!(default.len(), 1, "one chart per workload");
        assert_eq!(
            default[0].chart.lines.len(),
            4,
            "one line per server / config"
        );
        assert_eq!(default[0].chart.lines[3].label, "b / on");
        assert!(default[0].chart.lines.iter().all(|l| !l.baseline));
    }
}
