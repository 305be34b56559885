//! The per-second time series of a run (samples.csv, and warmup.csv before it): throughput
//! above, the latency percentile below on a log scale, one line per load level of a
//! deployment, the warm-up shaded; under them a panel for each server counter the matrix
//! chose (`report.timeline_counters`, from server_seconds.csv). Iteration 1 of each cell:
//! the later ones repeat it.

use anyhow::{anyhow, Result};
use indexmap::IndexMap;
use plotters::prelude::*;

use super::{color, draw, file_name, legend, number, title_tail, NamedChart};
use crate::measure::server_seconds::{Kind, Phase, ServerSecond};
use crate::results::samples::Series;
use crate::results::server_seconds::ServerSeconds;
use crate::results::ResultRow;

/// One load level's seconds: x is the second (the warm-up's are 0 and below), y the value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Trace {
    pub(crate) label: String,
    pub(crate) throughput: Vec<(f64, f64)>,
    pub(crate) latency: Vec<(f64, f64)>,
    /// One series per chosen counter (`Timeline::counters`): a count per second, a level.
    pub(crate) counters: Vec<Vec<(f64, f64)>>,
}

/// A server counter's panel.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CounterPanel {
    pub(crate) name: String,
    /// A count, drawn per second (a level is drawn as read); None when no second has it.
    pub(crate) kind: Option<Kind>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Timeline {
    pub(crate) title: String,
    pub(crate) throughput_label: String,
    /// `p99` where the samples have it, else `p95` (sysbench, runs before p99 was kept).
    pub(crate) latency_label: String,
    pub(crate) traces: Vec<Trace>,
    /// The longest warm-up shown, in seconds (shaded left of 0).
    pub(crate) warmup_s: f64,
    pub(crate) counters: Vec<CounterPanel>,
}

/// The per-second series a run's timelines are drawn from, by (cell key, iteration).
#[derive(Debug, Default)]
pub(crate) struct Seconds {
    pub(crate) throughput: Series,
    pub(crate) p99: Series,
    pub(crate) p95: Series,
    pub(crate) warmup_throughput: Series,
    pub(crate) warmup_p99: Series,
    pub(crate) warmup_p95: Series,
    /// The server's seconds, read when counters are chosen.
    pub(crate) server: ServerSeconds,
    /// The counters chosen (`report.timeline_counters`).
    pub(crate) counters: Vec<String>,
}

/// One timeline per deployment and workload (and engine) with per-second samples.
pub(crate) fn for_run(
    rows: &[ResultRow],
    seconds: &Seconds,
    throughput: &str,
) -> Vec<NamedChart<Timeline>> {
    // A run is all open or all closed loop: open-loop lines are named by their rate.
    let open = rows.iter().any(|r| r.rate.is_some());
    type Key = (String, String, String, String);
    let mut groups: IndexMap<Key, Vec<Trace>> = IndexMap::new();
    let mut warmup_s: IndexMap<Key, f64> = IndexMap::new();
    for r in rows.iter().filter(|r| r.is_ok() && r.iteration == 1) {
        let id = (r.cell_key().to_string(), 1);
        let Some(measured) = seconds.throughput.get(&id).filter(|v| !v.is_empty()) else {
            continue;
        };
        // p99 where both phases have it, else p95 for both.
        let (lat, warm_lat) = match seconds.p99.get(&id) {
            Some(p) if !p.is_empty() => (p, seconds.warmup_p99.get(&id)),
            _ => match seconds.p95.get(&id) {
                Some(p) => (p, seconds.warmup_p95.get(&id)),
                None => continue,
            },
        };
        let warm = seconds.warmup_throughput.get(&id);
        let w = warm.map_or(0, Vec::len) as f64;
        // The warm-up's last second ends at 0, the measured phase's first at 1.
        let at = |i: usize, offset: f64| i as f64 + 1.0 - offset;
        let mut throughput: Vec<(f64, f64)> = Vec::new();
        let mut latency: Vec<(f64, f64)> = Vec::new();
        if let Some(warm) = warm {
            throughput.extend(warm.iter().enumerate().map(|(i, v)| (at(i, w), *v)));
        }
        if let Some(warm) = warm_lat {
            let wl = warm.len() as f64;
            latency.extend(warm.iter().enumerate().map(|(i, v)| (at(i, wl), *v)));
        }
        throughput.extend(measured.iter().enumerate().map(|(i, v)| (at(i, 0.0), *v)));
        latency.extend(lat.iter().enumerate().map(|(i, v)| (at(i, 0.0), *v)));
        let key = (
            r.server.clone(),
            r.config.clone(),
            r.workload.clone(),
            r.engine.clone(),
        );
        let label = match r.rate {
            Some(rate) if open => format!("{rate}/s, {} conns", r.concurrency),
            _ => format!("{} conns", r.concurrency),
        };
        let max_w = warmup_s.entry(key.clone()).or_default();
        *max_w = max_w.max(w);
        let server = seconds.server.get(&(r.cell_key(), 1));
        let counters = (seconds.counters.iter())
            .map(|c| server.map_or_else(Vec::new, |s| counter_series(s, c)))
            .collect();
        groups.entry(key).or_default().push(Trace {
            label,
            throughput,
            latency,
            counters,
        });
    }
    let p99 = !seconds.p99.is_empty();
    let panels: Vec<CounterPanel> = (seconds.counters.iter())
        .map(|name| CounterPanel {
            name: name.clone(),
            kind: kind_of(&seconds.server, name),
        })
        .collect();
    groups
        .into_iter()
        .map(|(key, traces)| {
            let (server, config, workload, engine) = &key;
            NamedChart {
                file: file_name(&["seconds", server, config, workload, engine]),
                chart: Timeline {
                    title: format!(
                        "Per second: {server} / {config}, {}",
                        title_tail(workload, engine)
                    ),
                    throughput_label: format!("{throughput} (/s)"),
                    latency_label: if p99 { "p99 (ms)" } else { "p95 (ms)" }.into(),
                    warmup_s: warmup_s.get(&key).copied().unwrap_or_default(),
                    counters: panels.clone(),
                    traces,
                },
            }
        })
        .collect()
}

/// One counter's whole seconds: x as for throughput (the warm-up's last whole second at 0),
/// a count per second of its interval, a level as read; a second without its line is 0.
fn counter_series(seconds: &[ServerSecond], name: &str) -> Vec<(f64, f64)> {
    let whole = |s: &&ServerSecond| s.span_s >= 0.9;
    let last = |phase| {
        (seconds.iter().filter(whole))
            .filter(|s| s.phase == phase)
            .map(|s| s.second)
            .max()
            .unwrap_or(0)
    };
    let (w, m) = (last(Phase::Warmup), last(Phase::Measured));
    let value = |phase, second: u32| {
        let s = seconds
            .iter()
            .find(|s| s.phase == phase && s.second == second);
        let v = s.and_then(|s| {
            (s.values.iter().find(|(k, _, _)| k == name)).map(|(_, kind, v)| match kind {
                Kind::Count => *v as f64 / s.span_s,
                Kind::Level => *v as f64,
            })
        });
        v.unwrap_or(0.0)
    };
    let warm = (1..=w).map(|k| (f64::from(k) - f64::from(w), value(Phase::Warmup, k)));
    let measured = (1..=m).map(|k| (f64::from(k), value(Phase::Measured, k)));
    warm.chain(measured).collect()
}

/// Whether `name` is a count or a level, as the file says; None when no line has it.
fn kind_of(server: &ServerSeconds, name: &str) -> Option<Kind> {
    server
        .values()
        .flatten()
        .flat_map(|s| &s.values)
        .find(|(k, _, _)| k == name)
        .map(|(_, kind, _)| *kind)
}

const SIZE: (u32, u32) = (720, 520);
/// The height of one counter's panel.
const PANEL_H: u32 = 170;

pub(crate) fn svg(t: &Timeline) -> Result<String> {
    let xs = || {
        t.traces
            .iter()
            .flat_map(|tr| tr.throughput.iter().chain(&tr.latency).map(|p| p.0))
    };
    let x_min = xs().fold(f64::INFINITY, f64::min).min(1.0 - t.warmup_s);
    let x_max = xs().fold(f64::NEG_INFINITY, f64::max);
    if !x_max.is_finite() {
        return Err(anyhow!("a timeline with no seconds"));
    }
    let top = t
        .traces
        .iter()
        .flat_map(|tr| tr.throughput.iter().map(|p| p.1))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let x_range = super::range::linear(x_min - 0.5)..super::range::linear(x_max + 0.5);
    let top_y = super::range::linear((top * 1.15).max(1.0));
    let mut out = String::new();
    {
        let height = SIZE.1 + PANEL_H * t.counters.len() as u32;
        let root = SVGBackend::with_string(&mut out, (SIZE.0, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw)?;
        let root = root.titled(&t.title, ("sans-serif", 18)).map_err(draw)?;
        // Without counters the chart is as it always was.
        let n = t.counters.len() as u32;
        let (base, panels) = match n {
            0 => (root.clone(), None),
            _ => {
                let (base, panels) = root.split_vertically(root.dim_in_pixel().1 - PANEL_H * n);
                (base, Some(panels))
            }
        };
        let (upper, lower) = base.split_vertically(SIZE.1 / 2 - 10);
        let shade = RGBColor(230, 230, 230).filled();

        // Throughput; the legend (one entry per load level) goes here.
        let mut chart = ChartBuilder::on(&upper)
            .margin(10)
            .x_label_area_size(20)
            .y_label_area_size(70)
            .build_cartesian_2d(x_range.clone(), 0f64..top_y)
            .map_err(draw)?;
        chart
            .configure_mesh()
            .y_label_formatter(&|v| number(*v))
            .x_label_formatter(&|v| number(*v))
            .light_line_style(RGBColor(240, 240, 240))
            .y_desc(t.throughput_label.as_str())
            .draw()
            .map_err(draw)?;
        if t.warmup_s > 0.0 {
            let area = [(x_min - 0.5, 0.0), (0.5, top_y)];
            chart
                .draw_series(std::iter::once(Rectangle::new(area, shade)))
                .map_err(draw)?
                .label("warm-up")
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 18, y + 5)], shade));
        }
        for (i, tr) in t.traces.iter().enumerate() {
            let c = color(i);
            chart
                .draw_series(LineSeries::new(tr.throughput.clone(), c.stroke_width(2)))
                .map_err(draw)?
                .label(tr.label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(3))
                });
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;

        latency_panel(t, &lower, x_range.clone(), x_min)?;
        if let Some(panels) = panels {
            let areas = panels.split_evenly((t.counters.len(), 1));
            for (i, (panel, area)) in t.counters.iter().zip(&areas).enumerate() {
                counter_panel(t, i, panel, area, x_range.clone(), x_min)?;
            }
        }
        root.present().map_err(draw)?;
    }
    Ok(out)
}

/// The latency percentile on a log scale: seconds with no event (latency 0) are gaps, not
/// zeros.
fn latency_panel(
    t: &Timeline,
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    x_range: std::ops::Range<f64>,
    x_min: f64,
) -> Result<()> {
    let lat = || {
        t.traces
            .iter()
            .flat_map(|tr| tr.latency.iter().map(|p| p.1))
            .filter(|v| v.is_finite() && *v > 0.0)
    };
    let lat_min = lat().fold(f64::INFINITY, f64::min);
    let lat_max = lat().fold(0.0, f64::max);
    if lat_max <= 0.0 {
        return Ok(());
    }
    let shade = RGBColor(230, 230, 230).filled();
    let y = super::range::log(lat_min / 1.5, lat_max * 1.5);
    let (lo, hi) = (y.start, y.end);
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(70)
        .build_cartesian_2d(x_range, (lo..hi).log_scale())
        .map_err(draw)?;
    chart
        .configure_mesh()
        .y_label_formatter(&|v| number(*v))
        .x_label_formatter(&|v| number(*v))
        .light_line_style(RGBColor(240, 240, 240))
        .x_desc("second (warm-up at 0 and before)")
        .y_desc(t.latency_label.as_str())
        .draw()
        .map_err(draw)?;
    if t.warmup_s > 0.0 {
        let area = [(x_min - 0.5, lo), (0.5, hi)];
        chart
            .draw_series(std::iter::once(Rectangle::new(area, shade)))
            .map_err(draw)?;
    }
    for (i, tr) in t.traces.iter().enumerate() {
        let c = color(i);
        for run in tr.latency.split(|p| p.1.is_nan() || p.1 <= 0.0) {
            if !run.is_empty() {
                chart
                    .draw_series(LineSeries::new(run.to_vec(), c.stroke_width(2)))
                    .map_err(draw)?;
            }
        }
    }
    Ok(())
}

/// Counter `i`'s panel: one line per load level, the warm-up shaded.
fn counter_panel(
    t: &Timeline,
    i: usize,
    panel: &CounterPanel,
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    x_range: std::ops::Range<f64>,
    x_min: f64,
) -> Result<()> {
    let top = (t.traces.iter())
        .flat_map(|tr| tr.counters.get(i).into_iter().flatten().map(|p| p.1))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let top_y = super::range::linear((top * 1.15).max(1.0));
    let label = match panel.kind {
        Some(Kind::Count) => format!("{} (/s)", panel.name),
        Some(Kind::Level) => panel.name.clone(),
        None => format!("{} (no second has it)", panel.name),
    };
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(25)
        .y_label_area_size(70)
        .build_cartesian_2d(x_range, 0f64..top_y)
        .map_err(draw)?;
    chart
        .configure_mesh()
        .y_label_formatter(&|v| number(*v))
        .x_label_formatter(&|v| number(*v))
        .light_line_style(RGBColor(240, 240, 240))
        .y_desc(label.as_str())
        .draw()
        .map_err(draw)?;
    if t.warmup_s > 0.0 {
        let area = [(x_min - 0.5, 0.0), (0.5, top_y)];
        let shade = RGBColor(230, 230, 230).filled();
        chart
            .draw_series(std::iter::once(Rectangle::new(area, shade)))
            .map_err(draw)?;
    }
    for (j, tr) in t.traces.iter().enumerate() {
        if let Some(series) = tr.counters.get(i).filter(|s| !s.is_empty()) {
            let c = color(j);
            chart
                .draw_series(LineSeries::new(series.clone(), c.stroke_width(2)))
                .map_err(draw)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(key: &str, v: &[f64]) -> Series {
        [((key.to_string(), 1), v.to_vec())].into_iter().collect()
    }

    fn row(server: &str, concurrency: u32) -> ResultRow {
        ResultRow {
            server: server.into(),
            config: "default".into(),
            workload: "w".into(),
            concurrency,
            iteration: 1,
            status: crate::model::row::Status::Ok,
            ..ResultRow::default()
        }
    }

    #[test]
    fn warmup_seconds_end_at_zero_and_p99_is_preferred() {
        let r = row("s", 4);
        let key = r.cell_key().to_string();
        let seconds = Seconds {
            throughput: series(&key, &[10.0, 11.0, 12.0]),
            p99: series(&key, &[1.0, 2.0, 3.0]),
            p95: series(&key, &[0.5, 0.6, 0.7]),
            warmup_throughput: series(&key, &[5.0, 6.0]),
            warmup_p99: series(&key, &[4.0, 5.0]),
            ..Seconds::default()
        };
        let charts = for_run(&[r], &seconds, "qps");
        assert_eq!(charts.len(), 1);
        let t = &charts[0].chart;
        assert_eq!(t.warmup_s, 2.0);
        assert_eq!(t.latency_label, "p99 (ms)");
        let tr = &t.traces[0];
        assert_eq!(tr.throughput.first(), Some(&(-1.0, 5.0)));
        assert_eq!(tr.throughput[2], (1.0, 10.0));
        assert_eq!(tr.latency.last(), Some(&(3.0, 3.0)));
        let text = svg(t).unwrap();
        roxmltree::Document::parse(&text).unwrap();
    }

    /// One trace per load level, one chart per deployment; the SVG has a legend entry each.
    #[test]
    fn one_trace_per_level_and_one_chart_per_deployment() {
        let rows = [row("a", 1), row("a", 2), row("b", 1)];
        let mut seconds = Seconds::default();
        for r in &rows {
            let key = r.cell_key().to_string();
            seconds.throughput.extend(series(&key, &[1.0, 2.0]));
            seconds.p95.extend(series(&key, &[0.1, 0.0]));
        }
        let charts = for_run(&rows, &seconds, "qps");
        assert_eq!(charts.len(), 2);
        assert_eq!(charts[0].chart.traces.len(), 2);
        assert_eq!(charts[0].chart.latency_label, "p95 (ms)");
        let text = svg(&charts[0].chart).unwrap();
        let doc = roxmltree::Document::parse(&text).unwrap();
        let texts: Vec<&str> = doc
            .descendants()
            .filter_map(|n| n.text())
            .map(str::trim)
            .collect();
        assert!(
            texts.contains(&"1 conns") && texts.contains(&"2 conns"),
            "{texts:?}"
        );
    }

    /// A chosen counter's panel: a count per second of its interval, a level as read, the
    /// warm-up's last whole second at 0, a second without a line at 0, partial seconds out.
    #[test]
    fn counters_under_the_throughput() {
        let r = row("s", 2);
        let key = r.cell_key().to_string();
        let sec = |phase, second, span_s, values: Vec<(&str, Kind, u64)>| ServerSecond {
            phase,
            second,
            span_s,
            values: values
                .into_iter()
                .map(|(k, kind, v)| (k.to_string(), kind, v))
                .collect(),
        };
        let (c, l) = (Kind::Count, Kind::Level);
        let server = vec![
            sec(
                Phase::Warmup,
                1,
                1.0,
                vec![("fsyncs", c, 10), ("running", l, 2)],
            ),
            sec(Phase::Warmup, 2, 0.2, vec![("fsyncs", c, 1)]),
            sec(
                Phase::Measured,
                1,
                1.0,
                vec![("fsyncs", c, 30), ("running", l, 3)],
            ),
            sec(Phase::Measured, 2, 1.0, vec![("running", l, 4)]),
            sec(Phase::Measured, 3, 0.5, vec![("fsyncs", c, 20)]),
        ];
        let seconds = Seconds {
            throughput: series(&key, &[10.0, 11.0]),
            p95: series(&key, &[0.5, 0.6]),
            server: [((r.cell_key(), 1), server)].into_iter().collect(),
            counters: vec!["fsyncs".into(), "running".into(), "nowhere".into()],
            ..Seconds::default()
        };
        let charts = for_run(&[r], &seconds, "qps");
        let t = &charts[0].chart;
        let tr = &t.traces[0];
        assert_eq!(tr.counters[0], [(0.0, 10.0), (1.0, 30.0), (2.0, 0.0)]);
        assert_eq!(tr.counters[1], [(0.0, 2.0), (1.0, 3.0), (2.0, 4.0)]);
        assert!(tr.counters[2].iter().all(|p| p.1 == 0.0));
        assert_eq!(t.counters[0].kind, Some(Kind::Count));
        assert_eq!(t.counters[1].kind, Some(Kind::Level));
        assert_eq!(t.counters[2].kind, None);
        let text = svg(t).unwrap();
        let doc = roxmltree::Document::parse(&text).unwrap();
        let texts: Vec<&str> = doc.descendants().filter_map(|n| n.text()).collect();
        for label in ["fsyncs (/s)", "running", "nowhere (no second has it)"] {
            assert!(
                texts.iter().any(|t| t.trim() == label),
                "{label}: {texts:?}"
            );
        }
        let height = doc.root_element().attribute("height").unwrap();
        assert_eq!(height, (SIZE.1 + 3 * PANEL_H).to_string());
    }
}
