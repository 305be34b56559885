//! Horizontal bars with their intervals as whiskers: a comparison's changes in percent (one
//! bar per cell, coloured by verdict, regressions red, the threshold as thin lines either
//! side of zero), and the report metric of a run with one load level (`metric_bars`).

use anyhow::{anyhow, Result};
use indexmap::IndexMap;
use plotters::prelude::*;

use super::{color, draw, legend, number, NamedChart};
use crate::matrix::model::Matrix;
use crate::model::metric::Metric;
use crate::report::pivot::CellStats;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Regressed,
    Improved,
    Small,
    Unchanged,
    CannotTell,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bar {
    pub(crate) label: String,
    pub(crate) value: f64,
    pub(crate) interval: Option<(f64, f64)>,
    pub(crate) fill: RGBColor,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BarChart {
    pub(crate) title: String,
    pub(crate) x_label: String,
    pub(crate) bars: Vec<Bar>,
    /// Changes in percent: the axis is centred on 0 with these thin lines either side.
    pub(crate) threshold_pct: Option<f64>,
    /// What each colour means.
    pub(crate) legend: Vec<(String, RGBColor)>,
}

impl Verdict {
    pub(crate) fn fill(self) -> RGBColor {
        match self {
            Verdict::Regressed => RGBColor(214, 39, 40),
            Verdict::Improved => RGBColor(44, 160, 44),
            Verdict::Small => RGBColor(31, 119, 180),
            Verdict::Unchanged => RGBColor(150, 150, 150),
            Verdict::CannotTell => RGBColor(255, 187, 120),
        }
    }

    pub(crate) fn legend() -> Vec<(String, RGBColor)> {
        [
            ("regressed", Verdict::Regressed),
            ("improved", Verdict::Improved),
            ("small", Verdict::Small),
            ("unchanged", Verdict::Unchanged),
            ("cannot tell", Verdict::CannotTell),
        ]
        .into_iter()
        .map(|(l, v)| (l.to_string(), v.fill()))
        .collect()
    }
}

/// The report metric of a run with a single load level, where no curve can be drawn: one
/// bar per cell with its interval, coloured by the value of `report.columns` (default
/// server / config), labelled by the other dimensions that vary; one chart per server when
/// neither rows nor columns name it.
pub(crate) fn metric_bars(
    matrix: &Matrix,
    stats: &[CellStats],
    metric: &Metric,
) -> Vec<NamedChart<BarChart>> {
    const DEPLOYMENT: [&str; 4] = ["server", "config", "engine", "workload"];
    let columns: Vec<&str> = match matrix
        .report
        .columns
        .iter()
        .all(|c| DEPLOYMENT.contains(&c.as_str()))
    {
        true if !matrix.report.columns.is_empty() => {
            matrix.report.columns.iter().map(String::as_str).collect()
        }
        _ => vec!["server", "config"],
    };
    let rows: Vec<&str> = matrix.report.rows.iter().map(String::as_str).collect();
    let chart_dims: Vec<&str> = DEPLOYMENT
        .into_iter()
        .filter(|d| !columns.contains(d) && !rows.contains(d))
        .collect();
    let varying = |d: &str| {
        let mut v: Vec<&String> = stats.iter().filter_map(|s| s.dims.get(d)).collect();
        v.sort();
        v.dedup();
        v.len() > 1
    };
    // Labels name the dimensions that vary within a chart and are not the colour.
    let label_dims: Vec<&str> = [
        "server",
        "workload",
        "engine",
        "config",
        "concurrency",
        "rate",
    ]
    .into_iter()
    .filter(|d| !columns.contains(d) && !chart_dims.contains(d) && varying(d))
    .collect();
    // chart dims' values -> its bars and its legend.
    type Charts = IndexMap<Vec<String>, (Vec<Bar>, IndexMap<String, RGBColor>)>;
    let mut charts: Charts = IndexMap::new();
    let mut colours: IndexMap<String, RGBColor> = IndexMap::new();
    for s in stats {
        let dim = |d: &str| s.dims.get(d).cloned().unwrap_or_default();
        let key: Vec<String> = chart_dims.iter().map(|d| dim(d)).collect();
        let group = columns
            .iter()
            .map(|d| dim(d))
            .filter(|v| !v.is_empty())
            .collect::<Vec<_>>()
            .join(" / ");
        let next = colours.len();
        let fill = *colours.entry(group.clone()).or_insert_with(|| {
            let c = color(next);
            RGBColor(c.0, c.1, c.2)
        });
        let label = label_dims
            .iter()
            .map(|d| dim(d))
            .filter(|v| !v.is_empty())
            .collect::<Vec<_>>()
            .join(" / ");
        let (bars, legend) = charts.entry(key).or_default();
        legend.entry(group.clone()).or_insert(fill);
        bars.push(Bar {
            label: if label.is_empty() { group } else { label },
            value: s.mean,
            interval: s
                .half_pct
                .map(|h| (s.mean * (1.0 - h / 100.0), s.mean * (1.0 + h / 100.0))),
            fill,
        });
    }
    charts
        .into_iter()
        .map(|(key, (bars, legend))| {
            named_chart(metric, &key, bars, legend, !label_dims.is_empty())
        })
        .collect()
}

/// One chart of `metric_bars`: its bars in matrix order, named by the chart dimensions'
/// values `key`; a legend only when the bars are `labelled` by other dimensions than colour.
fn named_chart(
    metric: &Metric,
    key: &[String],
    mut bars: Vec<Bar>,
    legend: IndexMap<String, RGBColor>,
    labelled: bool,
) -> NamedChart<BarChart> {
    // The colours of one label side by side, labels in matrix order.
    let mut order: Vec<String> = Vec::new();
    for b in &bars {
        if !order.contains(&b.label) {
            order.push(b.label.clone());
        }
    }
    bars.sort_by_key(|b| order.iter().position(|l| *l == b.label));
    let named: Vec<&str> = key
        .iter()
        .map(String::as_str)
        .filter(|v| !v.is_empty())
        .collect();
    let mut parts = vec![metric.name, "bars"];
    parts.extend(&named);
    NamedChart {
        file: super::file_name(&parts),
        chart: BarChart {
            title: match named.is_empty() {
                true => metric.title.to_string(),
                false => format!("{}: {}", metric.title, named.join(", ")),
            },
            x_label: format!("{} ({}), mean with its interval", metric.name, metric.unit),
            bars,
            threshold_pct: None,
            // Bars named by their colour need no legend.
            legend: match labelled {
                true => legend.into_iter().collect(),
                false => Vec::new(),
            },
        },
    }
}

/// The value axis: centred on 0 for changes (with the threshold in view), else from 0 to
/// the largest end with room for the legend.
fn x_range(c: &BarChart) -> Result<std::ops::Range<f64>> {
    let ends = || {
        c.bars.iter().flat_map(|b| {
            [
                Some(b.value),
                b.interval.map(|i| i.0),
                b.interval.map(|i| i.1),
            ]
            .into_iter()
            .flatten()
            .filter(|v| v.is_finite())
        })
    };
    Ok(match c.threshold_pct {
        // Changes: centred on 0.
        Some(t) => {
            let reach = ends().map(f64::abs).fold(t.abs(), f64::max).max(1.0) * 1.1;
            let reach = super::range::linear(reach);
            -reach..reach
        }
        None => {
            let lo = ends().fold(0.0, f64::min);
            let hi = ends().fold(0.0, f64::max);
            if hi <= lo {
                return Err(anyhow!("bars with no values"));
            }
            // Room on the right for the legend.
            let room = if c.legend.is_empty() { 1.05 } else { 1.45 };
            super::range::linear(lo * 1.05)..super::range::linear(hi * room)
        }
    })
}

pub(crate) fn svg(c: &BarChart) -> Result<String> {
    if c.bars.is_empty() {
        return Err(anyhow!("a bar chart with no bars"));
    }
    let n = c.bars.len();
    let x_range = x_range(c)?;
    let percent = c.threshold_pct.is_some();
    let height = 110 + 24 * n as u32;
    let label_width = c.bars.iter().map(|b| b.label.len()).max().unwrap_or(10) as u32 * 6 + 20;
    let mut out = String::new();
    {
        let root =
            SVGBackend::with_string(&mut out, (560 + label_width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw)?;
        // Bar i sits at y = n - 1 - i: the first change on top.
        let y_of = |i: usize| (n - 1 - i) as f64;
        let label_of = |v: &f64| {
            let i = v.round();
            match (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
                true => c.bars[n - 1 - i as usize].label.clone(),
                false => String::new(),
            }
        };
        let mut chart = ChartBuilder::on(&root)
            .caption(&c.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(label_width)
            .build_cartesian_2d(x_range, -0.6..(n as f64 - 0.4))
            .map_err(draw)?;
        chart
            .configure_mesh()
            .y_labels(n)
            .y_label_formatter(&label_of)
            .x_label_formatter(&|v| match percent {
                true => format!("{}%", number(*v)),
                false => number(*v),
            })
            .disable_y_mesh()
            .light_line_style(RGBColor(240, 240, 240))
            .x_desc(c.x_label.as_str())
            .draw()
            .map_err(draw)?;
        let top = n as f64 - 0.4;
        for x in c.threshold_pct.iter().flat_map(|t| [-t, *t]) {
            chart
                .draw_series(LineSeries::new(
                    [(x, -0.6), (x, top)],
                    BLACK.mix(0.35).stroke_width(1),
                ))
                .map_err(draw)?;
        }
        chart
            .draw_series(LineSeries::new(
                [(0.0, -0.6), (0.0, top)],
                BLACK.stroke_width(1),
            ))
            .map_err(draw)?;
        chart
            .draw_series(c.bars.iter().enumerate().map(|(i, b)| {
                let y = y_of(i);
                let v = if b.value.is_finite() { b.value } else { 0.0 };
                Rectangle::new([(0.0, y - 0.32), (v, y + 0.32)], b.fill.filled())
            }))
            .map_err(draw)?;
        for (label, fill) in &c.legend {
            let fill = *fill;
            chart
                .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())
                .map_err(draw)?
                .label(label.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], fill.filled()));
        }
        if !c.legend.is_empty() {
            legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        }
        chart
            .draw_series(c.bars.iter().enumerate().filter_map(|(i, b)| {
                let (lo, hi) = b.interval.filter(|(l, h)| l.is_finite() && h.is_finite())?;
                let v = if b.value.is_finite() { b.value } else { 0.0 };
                Some(ErrorBar::new_horizontal(
                    y_of(i),
                    lo,
                    v,
                    hi,
                    BLACK.stroke_width(1),
                    8,
                ))
            }))
            .map_err(draw)?;
        root.present().map_err(draw)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(label: &str, pct: f64, verdict: Verdict) -> Bar {
        Bar {
            label: label.into(),
            value: pct,
            interval: Some((pct - 2.0, pct + 2.0)),
            fill: verdict.fill(),
        }
    }

    /// One bar per change, regressions in red, labels escaped by the SVG writer.
    #[test]
    fn one_bar_per_change_and_regressions_red() {
        let c = BarChart {
            title: "qps".into(),
            x_label: "change".into(),
            legend: vec![],
            bars: vec![
                bar("a <b> / 1", -12.0, Verdict::Regressed),
                bar("a / 2", 8.0, Verdict::Improved),
                bar("a / 4", 0.5, Verdict::Unchanged),
            ],
            threshold_pct: Some(5.0),
        };
        let text = svg(&c).unwrap();
        let doc = roxmltree::Document::parse(&text).unwrap();
        let red = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some("#D62728"))
            .count();
        assert_eq!(red, 1);
        let texts: Vec<&str> = doc
            .descendants()
            .filter_map(|n| n.text())
            .map(str::trim)
            .collect();
        assert!(texts.contains(&"a <b> / 1"), "{texts:?}");
        assert!(svg(&BarChart { bars: vec![], ..c }).is_err());
    }

    /// A run with one load level: a chart per server, a bar per cell, a colour per column
    /// value, the bars of one row side by side.
    #[test]
    fn metric_bars_follow_the_report_block() {
        let m: Matrix = crate::input::yaml::from_str(
            "servers: {a: {image: x}, b: {image: x}}\nconfigs: {off: {}, on: {}}\n\
             workloads: {w1: {slap: {}}, w2: {slap: {}}}\nlength: 10\n\
             report: {metric: qps, rows: [workload], columns: [config]}\n",
        )
        .unwrap();
        let mut rows = Vec::new();
        for server in ["a", "b"] {
            for config in ["off", "on"] {
                for workload in ["w1", "w2"] {
                    rows.push(crate::results::ResultRow {
                        server: server.into(),
                        config: config.into(),
                        workload: workload.into(),
                        concurrency: 1,
                        iteration: 1,
                        status: crate::model::Status::Ok,
                        qps: Some(if config == "on" { 50.0 } else { 100.0 }),
                        ..Default::default()
                    });
                }
            }
        }
        let metric = Metric::find("qps").unwrap();
        let stats = crate::report::pivot::cell_stats(
            &m,
            &rows,
            metric,
            &Default::default(),
            crate::stats::Confidence::default(),
        );
        let charts = metric_bars(&m, &stats, metric);
        assert_eq!(charts.len(), 2);
        assert_eq!(charts[0].file, "qps-bars-a.svg");
        let c = &charts[0].chart;
        let labels: Vec<&str> = c.bars.iter().map(|b| b.label.as_str()).collect();
        assert_eq!(labels, ["w1", "w1", "w2", "w2"]);
        assert_eq!(c.legend.len(), 2);
        assert_ne!(c.bars[0].fill, c.bars[1].fill);
        assert_eq!(c.bars[1].value, 50.0);
        roxmltree::Document::parse(&svg(c).unwrap()).unwrap();
    }
}
