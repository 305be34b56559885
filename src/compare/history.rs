//! The history of stored runs: per cell and metric, the series of run means in start order,
//! with change points.
//!
//! # Change points over the whole series
//!
//! E-divisive means with a t-test, as Hunter and Apache Otava do (`stats::changepoint`):
//! each series of run means is split recursively where the energy statistic is largest,
//! and a change point is kept when Student's t-test between its neighbouring segments (on
//! the logarithms when all are positive, as `compare` does) is significant at alpha (1 - the
//! confidence level) and the change is at least the threshold. Every segment holds at least
//! `min_points` runs, so the newest `min_points - 1` runs cannot start a change point yet:
//! compare the newest run with the last good one (`rmatrix compare`) for that. A run mean
//! (not an iteration) is one point, so night-to-night noise counts as noise; a run's
//! iterations only floor the variance (a run mean is never more precise than they say).

use indexmap::IndexMap;
use serde::Serialize;

use super::error::CompareError;
use super::input::{cell_name, Run};
use super::join::{RunInfo, COMPARE_FORMAT_VERSION};
use crate::model::metric::Metric;
use crate::stats::changepoint::{self, Rules, RunMean, Shift};
use crate::stats::{summarize, Confidence};

#[derive(Debug, Clone)]
pub(crate) struct HistoryOptions {
    /// Metrics to follow; empty: each run's own report metric.
    pub(crate) metrics: Vec<&'static Metric>,
    pub(crate) threshold_pct: f64,
    /// The smallest shift of a counted metric's mean that counts (`--counted-threshold`):
    /// counts barely move between runs of one build, so 1% is a change.
    pub(crate) counted_threshold_pct: f64,
    pub(crate) confidence: Confidence,
    /// Runs shown as columns in the compact Markdown view.
    pub(crate) last: usize,
    pub(crate) min_points: usize,
    pub(crate) ignore: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct ChangePoint {
    /// Mean of the run means of the segment before / from this run (up to the neighbouring
    /// change points), and how many runs each holds.
    pub(crate) before: f64,
    pub(crate) after: f64,
    pub(crate) runs_before: usize,
    pub(crate) runs_after: usize,
    /// The change with its interval at the confidence level; `None` from a mean of 0.
    pub(crate) change_pct: Option<f64>,
    pub(crate) change_lo_pct: Option<f64>,
    pub(crate) change_hi_pct: Option<f64>,
    pub(crate) p_value: f64,
    /// `better` or `worse`, by the metric's direction.
    pub(crate) direction: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Point {
    /// Index into `History::runs`.
    pub(crate) run: usize,
    pub(crate) n: usize,
    pub(crate) mean: f64,
    pub(crate) stddev: f64,
    pub(crate) change_point: Option<ChangePoint>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Series {
    pub(crate) cell: String,
    pub(crate) dims: IndexMap<String, String>,
    pub(crate) metric: String,
    pub(crate) unit: String,
    pub(crate) higher_is_better: bool,
    /// The smallest regression between two windows of run means flagged with 80% power.
    pub(crate) mde_pct: Option<f64>,
    pub(crate) points: Vec<Point>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct History {
    pub(crate) format_version: u32,
    pub(crate) method: &'static str,
    pub(crate) threshold_pct: f64,
    pub(crate) counted_threshold_pct: f64,
    pub(crate) confidence: f64,
    pub(crate) alpha: f64,
    /// Runs shown in the compact Markdown view.
    pub(crate) last: usize,
    pub(crate) min_points: usize,
    pub(crate) runs: Vec<RunInfo>,
    pub(crate) series: Vec<Series>,
}

impl ChangePoint {
    fn new(s: &Shift, higher_is_better: bool) -> ChangePoint {
        let up = s.pct.map_or(s.after > s.before, |p| p > 0.0);
        ChangePoint {
            before: s.before,
            after: s.after,
            runs_before: s.runs_before,
            runs_after: s.runs_after,
            change_pct: s.pct,
            change_lo_pct: s.lo_pct,
            change_hi_pct: s.hi_pct,
            p_value: s.p,
            direction: if up == higher_is_better {
                "better"
            } else {
                "worse"
            },
        }
    }
}

/// `runs` must be in start order (`input::in_order` sorts them). Each run contributes its
/// own report metric unless `opts.metrics` names some.
pub(crate) fn history(runs: &[Run], opts: &HistoryOptions) -> Result<History, CompareError> {
    let conf = opts.confidence;
    if opts.min_points < 2 {
        return Err(CompareError::BadMinPoints(opts.min_points));
    }
    let threshold_of = |m: &Metric| match m.counted {
        true => opts.counted_threshold_pct,
        false => opts.threshold_pct,
    };
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
        let means: Vec<RunMean> = points
            .iter()
            .map(|p| RunMean {
                mean: p.mean,
                var: p.stddev * p.stddev / p.n as f64,
            })
            .collect();
        let rules = Rules {
            min_points: opts.min_points,
            conf,
            threshold_pct: threshold_of(metric),
        };
        for shift in changepoint::change_points(&means, &rules) {
            points[shift.at].change_point = Some(ChangePoint::new(&shift, metric.higher_is_better));
        }
        series.push(Series {
            cell: cell_name(&dims),
            dims,
            metric: metric.name.into(),
            unit: metric.unit.into(),
            higher_is_better: metric.higher_is_better,
            mde_pct: crate::stats::power::series_mde(
                &means.iter().map(|m| m.mean).collect::<Vec<f64>>(),
                opts.min_points,
                conf,
                threshold_of(metric),
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
        method: "e-divisive means with student-t on logarithms",
        threshold_pct: opts.threshold_pct,
        counted_threshold_pct: opts.counted_threshold_pct,
        confidence: conf.level(),
        alpha: conf.alpha(),
        last: opts.last.max(1),
        min_points: opts.min_points,
        runs: runs.iter().map(RunInfo::from).collect(),
        series,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ResultRow, Status};

    /// A run whose one cell counted `per_op` instructions in three iterations a few apart.
    fn counted_run(i: usize, per_op: f64) -> Run {
        let rows = (0..3)
            .map(|it| ResultRow {
                server: "s".into(),
                workload: "get".into(),
                concurrency: 1,
                iteration: it + 1,
                status: Status::Ok,
                qps: Some(1000.0),
                srv_instr_per_op: Some(per_op + it as f64),
                ..Default::default()
            })
            .collect();
        Run {
            path: format!("r{i}").into(),
            run_id: format!("r{i}"),
            rows,
            ..Run::default()
        }
    }

    /// Counted instructions 1% up from the fifth run: a change point under the counted
    /// threshold (0.5%), none under the usual 5%.
    #[test]
    fn a_counted_series_changes_at_the_counted_threshold() {
        let per_op = [
            5000.0, 5001.0, 4999.5, 5000.5, 5050.0, 5051.0, 5049.5, 5050.5,
        ];
        let runs: Vec<Run> = (per_op.iter().enumerate())
            .map(|(i, v)| counted_run(i, *v))
            .collect();
        let mut opts = HistoryOptions {
            metrics: vec![Metric::find("srv_instr_per_op").unwrap()],
            threshold_pct: 5.0,
            counted_threshold_pct: 0.5,
            confidence: Confidence::default(),
            last: 8,
            min_points: 3,
            ignore: Vec::new(),
        };
        let at = |h: &History| (h.series[0].points.iter()).position(|p| p.change_point.is_some());
        assert_eq!(at(&history(&runs, &opts).unwrap()), Some(4));
        opts.counted_threshold_pct = 5.0;
        assert_eq!(at(&history(&runs, &opts).unwrap()), None);
    }
}
