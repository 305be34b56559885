//! A comparison as a chart: one horizontal bar per cell and metric, the change in percent
//! with its interval as a whisker, coloured by verdict (regressions red), the threshold as
//! thin lines either side of zero.

use anyhow::{anyhow, Result};
use plotters::prelude::*;

use super::{draw, number};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Regressed,
    Improved,
    Unchanged,
    TooNoisy,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub label: String,
    pub pct: f64,
    pub interval: Option<(f64, f64)>,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    pub title: String,
    pub bars: Vec<Bar>,
    pub threshold_pct: f64,
}

fn fill(v: Verdict) -> RGBColor {
    match v {
        Verdict::Regressed => RGBColor(214, 39, 40),
        Verdict::Improved => RGBColor(44, 160, 44),
        Verdict::Unchanged => RGBColor(150, 150, 150),
        Verdict::TooNoisy => RGBColor(255, 187, 120),
    }
}

pub fn svg(c: &BarChart) -> Result<String> {
    if c.bars.is_empty() {
        return Err(anyhow!("a comparison with no changes to draw"));
    }
    let n = c.bars.len();
    let ends = c.bars.iter().flat_map(|b| {
        [
            Some(b.pct),
            b.interval.map(|i| i.0),
            b.interval.map(|i| i.1),
        ]
        .into_iter()
        .flatten()
        .filter(|v| v.is_finite())
    });
    let reach = ends
        .map(f64::abs)
        .fold(c.threshold_pct.abs(), f64::max)
        .max(1.0)
        * 1.1;
    let height = 90 + 24 * n as u32;
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
            .build_cartesian_2d(-reach..reach, -0.6..(n as f64 - 0.4))
            .map_err(draw)?;
        chart
            .configure_mesh()
            .y_labels(n)
            .y_label_formatter(&label_of)
            .x_label_formatter(&|v| format!("{}%", number(*v)))
            .disable_y_mesh()
            .light_line_style(RGBColor(240, 240, 240))
            .x_desc("change from the baseline (interval as whiskers)")
            .draw()
            .map_err(draw)?;
        let top = n as f64 - 0.4;
        for x in [-c.threshold_pct, c.threshold_pct] {
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
                let pct = if b.pct.is_finite() { b.pct } else { 0.0 };
                Rectangle::new([(0.0, y - 0.32), (pct, y + 0.32)], fill(b.verdict).filled())
            }))
            .map_err(draw)?;
        chart
            .draw_series(c.bars.iter().enumerate().filter_map(|(i, b)| {
                let (lo, hi) = b.interval.filter(|(l, h)| l.is_finite() && h.is_finite())?;
                let pct = if b.pct.is_finite() { b.pct } else { 0.0 };
                Some(ErrorBar::new_horizontal(
                    y_of(i),
                    lo,
                    pct,
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
            pct,
            interval: Some((pct - 2.0, pct + 2.0)),
            verdict,
        }
    }

    /// One bar per change, regressions in red, labels escaped by the SVG writer.
    #[test]
    fn one_bar_per_change_and_regressions_red() {
        let c = BarChart {
            title: "qps".into(),
            bars: vec![
                bar("a <b> / 1", -12.0, Verdict::Regressed),
                bar("a / 2", 8.0, Verdict::Improved),
                bar("a / 4", 0.5, Verdict::Unchanged),
            ],
            threshold_pct: 5.0,
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
}
