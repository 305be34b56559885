//! The history of stored runs: per cell and metric, the series of run means in start order,
//! with change points.
//!
//! # Change points: a sliding two-window Welch test
//!
//! For every position `k` of a series of run means, the up to `window` means before `k` are
//! compared with the up to `window` means from `k` on (each side needs at least `min_points`)
//! with Welch's t-test (on the logarithms when all are positive, as `compare` does,
//! `stats::change`). `k` is a candidate when p < alpha (1 - the confidence level) and the
//! change of the window means is at least the threshold. Candidates are taken by increasing p, skipping any closer than
//! `min_points` to one already taken, so one step gives one change point. A run mean (not an
//! iteration) is one point, so night-to-night noise counts as noise.
//!
//! It is a deliberately simple cousin of E-divisive (Hunter/Otava): it finds level shifts
//! that persist for `min_points` runs, needs `2 * min_points` runs before it can flag
//! anything, and cannot flag the newest `min_points - 1` runs yet: compare the newest run with
//! the last good one (`rmatrix compare`) for that.

use indexmap::IndexMap;
use serde::Serialize;

use super::error::CompareError;
use super::input::{cell_name, Run};
use super::join::{RunInfo, COMPARE_FORMAT_VERSION};
use crate::model::metric::Metric;
use crate::stats::{change, summarize, Change, Confidence};

#[derive(Debug, Clone)]
pub struct HistoryOptions {
    /// Metrics to follow; empty: each run's own report metric.
    pub metrics: Vec<&'static Metric>,
    pub threshold_pct: f64,
    pub confidence: Confidence,
    /// Runs shown as columns in the compact Markdown view.
    pub last: usize,
    pub window: usize,
    pub min_points: usize,
    pub ignore: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChangePoint {
    /// Mean of the run means in the window before / from this run.
    pub before: f64,
    pub after: f64,
    pub change_pct: Option<f64>,
    pub p_value: f64,
    /// `better` or `worse`, by the metric's direction.
    pub direction: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// Index into `History::runs`.
    pub run: usize,
    pub n: usize,
    pub mean: f64,
    pub stddev: f64,
    pub change_point: Option<ChangePoint>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Series {
    pub cell: String,
    pub dims: IndexMap<String, String>,
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// The smallest regression between two windows of run means flagged with 80% power.
    pub mde_pct: Option<f64>,
    pub points: Vec<Point>,
}

#[derive(Debug, Clone, Serialize)]
pub struct History {
    pub format_version: u32,
    pub method: &'static str,
    pub threshold_pct: f64,
    pub confidence: f64,
    pub alpha: f64,
    /// Runs shown in the compact Markdown view.
    pub last: usize,
    pub window: usize,
    pub min_points: usize,
    pub runs: Vec<RunInfo>,
    pub series: Vec<Series>,
}

/// Positions where the mean shifts (see the module doc), with their test and the means of
/// the two windows that were tested.
pub fn change_points(
    means: &[f64],
    window: usize,
    min_points: usize,
    conf: Confidence,
    threshold_pct: f64,
) -> Vec<(usize, Change, (f64, f64))> {
    let min_points = min_points.max(2);
    let window = window.max(min_points);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let mut found: Vec<(usize, Change, (f64, f64))> = Vec::new();
    if means.len() < 2 * min_points {
        return found;
    }
    for k in min_points..=means.len() - min_points {
        let before = &means[k.saturating_sub(window)..k];
        let after = &means[k..(k + window).min(means.len())];
        let Some(c) = change(before, after, None, conf) else {
            continue;
        };
        if conf.significant(c.p) && c.pct != 0.0 && c.pct.abs() >= threshold_pct {
            found.push((k, c, (mean(before), mean(after))));
        }
    }
    found.sort_by(|a, b| a.1.p.total_cmp(&b.1.p).then(a.0.cmp(&b.0)));
    let mut taken: Vec<(usize, Change, (f64, f64))> = Vec::new();
    for f in found {
        if taken.iter().all(|t| t.0.abs_diff(f.0) >= min_points) {
            taken.push(f);
        }
    }
    taken.sort_by_key(|t| t.0);
    taken
}

/// `runs` must be in start order (`input::load_runs` sorts them). Each run contributes its
/// own report metric unless `opts.metrics` names some.
pub fn history(runs: &[Run], opts: &HistoryOptions) -> Result<History, CompareError> {
    let conf = opts.confidence;
    // (metric, cell key) -> dims and points, in first-seen order.
    type Key = (&'static str, crate::model::CellKey);
    let mut by_series: IndexMap<Key, (IndexMap<String, String>, Vec<Point>)> = IndexMap::new();
    for (i, run) in runs.iter().enumerate() {
        let own: Vec<&'static Metric> = if opts.metrics.is_empty() {
            Metric::find(&run.report_metric).into_iter().collect()
        } else {
            opts.metrics.clone()
        };
        for metric in own {
            for (key, s) in run.samples(metric, &opts.ignore) {
                let Some(sum) = summarize(&s.values, conf) else {
                    continue;
                };
                by_series
                    .entry((metric.name, key))
                    .or_insert_with(|| (s.dims.clone(), Vec::new()))
                    .1
                    .push(Point {
                        run: i,
                        n: sum.n,
                        mean: sum.mean,
                        stddev: sum.stddev.unwrap_or(0.0),
                        change_point: None,
                    });
            }
        }
    }
    // Metrics in a stable order: as first seen.
    let mut series = Vec::new();
    for ((metric_name, _), (dims, mut points)) in by_series {
        let metric = Metric::find(metric_name).expect("invariant: a known metric");
        let means: Vec<f64> = points.iter().map(|p| p.mean).collect();
        for (k, c, (before, after)) in change_points(
            &means,
            opts.window,
            opts.min_points,
            conf,
            opts.threshold_pct,
        ) {
            points[k].change_point = Some(ChangePoint {
                before,
                after,
                change_pct: Some(c.pct),
                p_value: c.p,
                direction: c.direction(metric.higher_is_better),
            });
        }
        series.push(Series {
            cell: cell_name(&dims),
            dims,
            metric: metric.name.into(),
            unit: metric.unit.into(),
            higher_is_better: metric.higher_is_better,
            mde_pct: crate::stats::power::series_mde(
                &means,
                opts.window,
                conf,
                opts.threshold_pct,
                crate::stats::power::Regression::of(metric.higher_is_better),
            )
            .map(|m| m.pct),
            points,
        });
    }
    // One metric's series together, metrics in the order first seen (a stable sort).
    let mut order: Vec<String> = Vec::new();
    for s in &series {
        if !order.contains(&s.metric) {
            order.push(s.metric.clone());
        }
    }
    series.sort_by_key(|s| order.iter().position(|m| *m == s.metric));
    Ok(History {
        format_version: COMPARE_FORMAT_VERSION,
        method: "sliding two-window welch-t on logarithms",
        threshold_pct: opts.threshold_pct,
        confidence: conf.level(),
        alpha: conf.alpha(),
        last: opts.last.max(1),
        window: opts.window,
        min_points: opts.min_points,
        runs: runs.iter().map(RunInfo::from).collect(),
        series,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c99() -> Confidence {
        Confidence::new(0.99).unwrap()
    }

    #[test]
    fn finds_one_step_and_nothing_in_flat_noise() {
        let flat = [
            100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.7, 99.3, 100.1,
        ];
        assert!(change_points(&flat, 5, 3, c99(), 5.0).is_empty());
        let step = [
            100.0, 101.0, 99.0, 100.5, 99.5, 90.2, 89.8, 90.7, 89.3, 90.1,
        ];
        let cps = change_points(&step, 5, 3, c99(), 5.0);
        assert_eq!(cps.len(), 1, "{cps:?}");
        assert_eq!(cps[0].0, 5, "the first run after the step");
        assert!(cps[0].1.pct < 0.0);
        // Too few points after the step: not flagged yet.
        assert!(change_points(&step[..7], 5, 3, c99(), 5.0).is_empty());
        // A single spike is not a change point.
        let spike = [
            100.0, 101.0, 99.0, 100.5, 60.0, 100.2, 99.8, 100.7, 99.3, 100.1,
        ];
        assert!(change_points(&spike, 5, 3, c99(), 5.0).is_empty());
    }
}
