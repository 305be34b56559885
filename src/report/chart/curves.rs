//! The charts against the load level: the report metric with each point's interval, one
//! line per server/config and the baseline drawn heavier; the latency percentiles per
//! deployment.

use indexmap::IndexMap;

use super::{file_name, title, title_tail, Line, LineChart, NamedChart, Point};
use crate::matrix::model::Matrix;
use crate::model::metric::Metric;
use crate::report::pivot::CellStats;
use crate::results::ResultRow;

/// The charts against the load level: the report metric, then latency percentiles.
/// A curve needs two load levels: charts where no line has two points are left out (the
/// tables say it all for a matrix with one concurrency).
pub fn for_run(
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

/// `metric` against the load level: one chart per workload (and engine), one line per
/// server / config (and concurrency, when an open-loop run has several), each point the
/// cell's mean with its interval.
pub fn metric_vs_concurrency(
    matrix: &Matrix,
    stats: &[CellStats],
    metric: &Metric,
) -> Vec<NamedChart> {
    let open = matrix.load.open();
    let several_c = {
        let mut c: Vec<&String> = stats
            .iter()
            .filter_map(|s| s.dims.get("concurrency"))
            .collect();
        c.sort();
        c.dedup();
        c.len() > 1
    };
    // (workload, engine) -> (server, config, concurrency shown) -> points.
    type Lines = IndexMap<(String, String, String), Vec<Point>>;
    let mut charts: IndexMap<(String, String), Lines> = IndexMap::new();
    for s in stats {
        let dim = |d: &str| s.dims.get(d).cloned().unwrap_or_default();
        let Ok(x) = dim(if open { "rate" } else { "concurrency" }).parse::<f64>() else {
            continue;
        };
        let interval = s
            .half_pct
            .map(|h| (s.mean * (1.0 - h / 100.0), s.mean * (1.0 + h / 100.0)));
        let conns = match open && several_c {
            true => format!(", {} conns", dim("concurrency")),
            false => String::new(),
        };
        charts
            .entry((dim("workload"), dim("engine")))
            .or_default()
            .entry((dim("server"), dim("config"), conns))
            .or_default()
            .push(Point {
                x,
                y: s.mean,
                interval,
            });
    }
    let baseline = &matrix.report.baseline;
    charts
        .into_iter()
        .map(|((workload, engine), lines)| {
            let lines = lines
                .into_iter()
                .map(|((server, config, conns), mut points)| {
                    points.sort_by(|a, b| a.x.total_cmp(&b.x));
                    let is_baseline = !baseline.is_empty()
                        && baseline.iter().all(|(d, v)| match d.as_str() {
                            "server" => *v == server,
                            "config" => *v == config,
                            _ => true,
                        })
                        && baseline.keys().any(|d| d == "server" || d == "config");
                    Line {
                        label: format!("{server} / {config}{conns}"),
                        points,
                        baseline: is_baseline,
                    }
                })
                .collect();
            NamedChart {
                file: file_name(&[metric.name, &workload, &engine]),
                chart: LineChart {
                    title: title(metric.title, &workload, &engine),
                    x_label: level(open).into(),
                    y_label: format!("{} ({})", metric.name, metric.unit),
                    lines,
                    log_y: false,
                },
            }
        })
        .collect()
}

/// The latency percentiles (p50, p95, p99, max; means over iterations) against the load level:
/// one chart per deployment and workload (and engine), on a log scale.
pub fn latency_vs_concurrency(rows: &[ResultRow]) -> Vec<NamedChart> {
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
