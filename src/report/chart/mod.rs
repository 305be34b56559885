//! Charts as SVG, drawn by plotters' SVG backend (no fonts to load, no browser). This file
//! draws a line chart; which charts a run gets is in `curves` (against the load level) and
//! `timeline` (per second), and `bars` draws a comparison's changes. Pure: statistics in,
//! SVG text out; writing the files is the caller's job.

pub(crate) mod bars;
pub(crate) mod curves;
pub(crate) mod flame;
mod range;
pub(crate) mod timeline;

pub(crate) use curves::for_run;

use anyhow::{anyhow, Result};
use plotters::prelude::*;

/// One point: a mean with the bounds of its interval, when it has one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Point {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) interval: Option<(f64, f64)>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Line {
    pub(crate) label: String,
    pub(crate) points: Vec<Point>,
    /// Drawn heavier: the cells the report compares against.
    pub(crate) baseline: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LineChart {
    pub(crate) title: String,
    pub(crate) x_label: String,
    pub(crate) y_label: String,
    pub(crate) lines: Vec<Line>,
    pub(crate) log_y: bool,
}

/// A chart and the file name it goes to under `charts/` (names are `[A-Za-z0-9._-]`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NamedChart<C = LineChart> {
    pub(crate) file: String,
    pub(crate) chart: C,
}

/// Any chart a run has.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Chart {
    /// Against the load level (`curves`).
    Curve(LineChart),
    /// Per second (`timeline`).
    Timeline(timeline::Timeline),
    /// One load level: the metric per cell (`bars`).
    Bars(bars::BarChart),
    /// The server's profile of a cell (`flame`).
    Flame(flame::Flame),
}

impl Chart {
    pub(crate) fn title(&self) -> &str {
        match self {
            Chart::Curve(c) => &c.title,
            Chart::Timeline(t) => &t.title,
            Chart::Bars(b) => &b.title,
            Chart::Flame(f) => &f.title,
        }
    }

    pub(crate) fn svg(&self) -> Result<String> {
        match self {
            Chart::Curve(c) => svg(c),
            Chart::Timeline(t) => timeline::svg(t),
            Chart::Bars(b) => bars::svg(b),
            Chart::Flame(f) => flame::svg(f),
        }
    }
}

const SIZE: (u32, u32) = (720, 420);

pub(crate) fn svg(c: &LineChart) -> Result<String> {
    let levels = load_levels(c)?;
    let at = |x: f64| levels.iter().position(|l| *l == x).unwrap_or(0) as f64;
    let (y_max, y_min_pos) = y_bounds(c)?;
    let x_range = -0.4..(levels.len() as f64 - 0.6);
    let x_label = |v: &f64| level_label(&levels, *v);
    let y_label = |v: &f64| number(*v);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw)?;
        let mut b = ChartBuilder::on(&root);
        b.caption(&c.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70);
        macro_rules! draw_with {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_labels(levels.len())
                    .x_label_formatter(&x_label)
                    .y_label_formatter(&y_label)
                    .light_line_style(RGBColor(235, 235, 235))
                    .x_desc(c.x_label.as_str())
                    .y_desc(c.y_label.as_str())
                    .draw()
                    .map_err(draw)?;
                for (i, line) in c.lines.iter().enumerate() {
                    let color = color(i);
                    let style = color.stroke_width(if line.baseline { 4 } else { 2 });
                    // Lines step aside a little so that their whiskers do not hide each other.
                    let dodge = (i as f64 - (c.lines.len() as f64 - 1.0) / 2.0) * 0.04;
                    let xy: Vec<(f64, f64)> =
                        line.points.iter().map(|p| (at(p.x) + dodge, p.y)).collect();
                    chart
                        .draw_series(LineSeries::new(xy.clone(), style))
                        .map_err(draw)?
                        .label(if line.baseline {
                            format!("{} (baseline)", line.label)
                        } else {
                            line.label.clone()
                        })
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3))
                        });
                    chart
                        .draw_series(xy.iter().map(|&p| Circle::new(p, 3, color.filled())))
                        .map_err(draw)?;
                    chart
                        .draw_series(line.points.iter().filter_map(|p| {
                            p.interval.map(|(lo, hi)| {
                                let lo = if c.log_y { lo.max(y_min_pos / 2.0) } else { lo };
                                let x = at(p.x) + dodge;
                                ErrorBar::new_vertical(x, lo, p.y, hi, color.stroke_width(1), 8)
                            })
                        }))
                        .map_err(draw)?;
                }
                legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
            }};
        }
        // Headroom above the highest point for the legend.
        let legend_rows = c.lines.len() as f64;
        if c.log_y {
            let top = y_max * 10f64.powf(0.25 * legend_rows.max(2.0));
            draw_with!(b
                .build_cartesian_2d(x_range, range::log(y_min_pos / 2.0, top).log_scale())
                .map_err(draw)?)
        } else {
            let top = range::linear(y_max * (1.1 + 0.07 * legend_rows));
            draw_with!(b.build_cartesian_2d(x_range, 0f64..top).map_err(draw)?)
        }
        root.present().map_err(draw)?;
    }
    Ok(out)
}

/// The load levels of a chart's points, in order. They are spaced evenly whatever their
/// values (they usually double), and labelled with their values.
fn load_levels(c: &LineChart) -> Result<Vec<f64>> {
    let mut levels: Vec<f64> = (c.lines.iter().flat_map(|l| l.points.iter()))
        .map(|p| p.x)
        .filter(|x| x.is_finite())
        .collect();
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    if levels.is_empty() {
        return Err(anyhow!("a chart with no points"));
    }
    Ok(levels)
}

/// The highest value of a chart (points and interval ends) and its lowest positive one.
fn y_bounds(c: &LineChart) -> Result<(f64, f64)> {
    let values = || {
        (c.lines.iter().flat_map(|l| l.points.iter())).flat_map(|p| {
            [Some(p.y), p.interval.map(|i| i.0), p.interval.map(|i| i.1)]
                .into_iter()
                .flatten()
                .filter(|v| v.is_finite())
        })
    };
    let y_max = values().fold(f64::NEG_INFINITY, f64::max);
    let y_min_pos = values().filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
    if y_max.is_nan() || y_max <= 0.0 || (c.log_y && !y_min_pos.is_finite()) {
        return Err(anyhow!("a chart with no positive values"));
    }
    Ok((y_max, y_min_pos))
}

/// The x axis label at `v`: the load level on a level's position, nothing between them.
fn level_label(levels: &[f64], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < levels.len() {
        number(levels[i as usize])
    } else {
        String::new()
    }
}

/// Ten colours that stay apart on white and for most colour-blind readers (Tableau 10).
pub(super) fn color(i: usize) -> RGBAColor {
    const PALETTE: [(u8, u8, u8); 10] = [
        (31, 119, 180),
        (214, 39, 40),
        (44, 160, 44),
        (255, 127, 14),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (127, 127, 127),
        (188, 189, 34),
        (23, 190, 207),
    ];
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    RGBColor(r, g, b).to_rgba()
}

/// An axis label: integers without decimals, small values with as many as they need.
pub(super) fn number(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.round() {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// The legend box every chart draws (white, thin border) at `at`.
pub(super) fn legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    at: SeriesLabelPosition,
) -> Result<()>
where
    DB: DrawingBackend + 'a,
    CT: plotters::coord::CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(at)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.3))
        .draw()
        .map_err(draw)
}

pub(super) fn draw<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("drawing a chart failed: {e:?}")
}

pub(crate) fn title_tail(workload: &str, engine: &str) -> String {
    if engine.is_empty() {
        workload.to_string()
    } else {
        format!("{workload} on {engine}")
    }
}

/// A chart's file name: its non-empty parts joined by `-`.
pub(crate) fn file_name(parts: &[&str]) -> String {
    file_name_with(parts, "svg")
}

/// The same name for a file of another kind beside the chart (`csv`).
pub(crate) fn file_name_with(parts: &[&str], extension: &str) -> String {
    let parts: Vec<&str> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
    format!("{}.{extension}", parts.join("-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(lines: usize, log_y: bool) -> LineChart {
        LineChart {
            title: "Throughput: w on InnoDB".into(),
            x_label: "concurrency".into(),
            y_label: "qps".into(),
            lines: (0..lines)
                .map(|i| Line {
                    label: format!("s{i} / c"),
                    points: [1.0, 2.0, 4.0, 8.0, 16.0]
                        .iter()
                        .map(|&x| Point {
                            x,
                            y: 100.0 * x * (i + 1) as f64,
                            interval: Some((90.0 * x, 110.0 * x * (i + 1) as f64)),
                        })
                        .collect(),
                    baseline: i == 0,
                })
                .collect(),
            log_y,
        }
    }

    /// The SVG parses as XML and has one polyline per line, plus the legend's paths.
    #[test]
    fn one_series_per_line_and_valid_svg() {
        for log_y in [false, true] {
            let text = svg(&chart(3, log_y)).unwrap();
            let doc = roxmltree::Document::parse(&text).unwrap();
            let polylines = doc
                .descendants()
                .filter(|n| n.has_tag_name("polyline"))
                .count();
            // Each line: its series, its legend sample; error bars are 3 lines each.
            assert!(polylines >= 6, "{polylines}");
            let texts: Vec<&str> = doc
                .descendants()
                .filter(|n| n.has_tag_name("text"))
                .filter_map(|n| n.text())
                .map(str::trim)
                .collect();
            assert!(texts.contains(&"s0 / c (baseline)"), "{texts:?}");
            assert!(texts.contains(&"s2 / c"), "{texts:?}");
            assert!(texts.contains(&"Throughput: w on InnoDB"));
        }
    }

    #[test]
    fn an_empty_chart_is_an_error_not_a_panic() {
        assert!(svg(&chart(0, false)).is_err());
        let mut one = chart(1, true);
        one.lines[0].points.truncate(1);
        assert!(svg(&one).is_ok());
    }
}
