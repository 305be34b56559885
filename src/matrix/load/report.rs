//! The `report` block: its durations with units, its percentages in range, a known metric
//! and confidence level, and dimensions and baseline values the matrix has.

use super::validator::choices;
use super::MatrixError;
use super::Validator;
use crate::escape::terminal;
use crate::input::bounds::MAX_TIMELINE_COUNTERS;
use crate::matrix::model::{ApdexT, LoadCurveSpec, MEASUREMENTS};
use crate::model::metric::Metric;
use crate::model::Dimension;

impl Validator<'_> {
    /// Durations with units, percentages in range, names the matrix knows.
    pub(super) fn check_report(&self) -> Result<(), MatrixError> {
        let r = &self.m.report;
        // (field, path, value) of every duration the report block holds.
        let ts: Vec<(&str, String, crate::input::Length)> = match &r.apdex_t {
            None => Vec::new(),
            Some(ApdexT::All(t)) => vec![("apdex_t", "report.apdex_t".into(), *t)],
            Some(ApdexT::PerWorkload(map)) => {
                for w in map.keys() {
                    let path = format!("report.apdex_t.{w}");
                    if !self.m.workloads.contains_key(w) {
                        return Err(self.err_at(
                            self.spans.key(&path),
                            format!(
                                "unknown workload `{}`; valid choices: {}",
                                crate::escape::terminal(w),
                                choices(self.m.workloads.keys())
                            ),
                        ));
                    }
                }
                map.iter()
                    .map(|(w, t)| ("apdex_t", format!("report.apdex_t.{w}"), *t))
                    .collect()
            }
        };
        if let Some(lc) = &r.load_curve {
            self.check_load_curve(lc)?;
        }
        self.check_timeline_counters()?;
        let p99 = r.load_curve.as_ref().and_then(|lc| lc.p99);
        let ts = ts
            .into_iter()
            .chain(p99.map(|t| ("p99", "report.load_curve.p99".to_string(), t)));
        for (name, path, t) in ts {
            match t {
                crate::input::Length::Queries(n) => {
                    return Err(self.err(
                        &path,
                        format!("`{n}` needs a unit: ms, s, m or h (e.g. {n}ms)"),
                    ))
                }
                crate::input::Length::Time(d) if d.is_zero() => {
                    return Err(self.err(&path, format!("{name} must be more than 0ms")));
                }
                _ => {}
            }
        }
        self.check_apdex()?;
        if Metric::find(&r.metric).is_none() {
            return Err(self.err(
                "report.metric",
                format!(
                    "unknown metric `{}`; valid choices: {}",
                    terminal(&r.metric),
                    Metric::names().join(", ")
                ),
            ));
        }
        if let Some(c) = r.confidence {
            if crate::stats::Confidence::parse(&c.to_string()).is_none() {
                return Err(self.err(
                    "report.confidence",
                    format!(
                        "confidence {c} is not a level between 50 and 100 percent \
                         (e.g. 95 or 0.95)"
                    ),
                ));
            }
        }
        for (list, name) in [(&r.rows, "rows"), (&r.columns, "columns")] {
            for (i, dim) in list.iter().enumerate() {
                let p = format!("report.{name}[{i}]");
                if Dimension::parse(dim).is_none() {
                    return Err(self.err(
                        &p,
                        format!(
                            "unknown dimension `{}`; valid dimensions: {}",
                            terminal(dim),
                            Dimension::choices()
                        ),
                    ));
                }
            }
        }
        if let Some(d) = r.rows.iter().find(|d| r.columns.contains(d)) {
            return Err(self.err(
                "report.columns",
                format!("`{}` is in both report rows and columns", terminal(d)),
            ));
        }
        for (dim, value) in &r.baseline {
            let p = format!("report.baseline.{dim}");
            let d = self.check_dim(dim, &p)?;
            self.check_value(d, value, &p)?;
        }
        Ok(())
    }

    /// The Apdex metric needs each workload's T: without it every cell's score is empty.
    fn check_apdex(&self) -> Result<(), MatrixError> {
        let r = &self.m.report;
        if r.metric != "apdex" {
            return Ok(());
        }
        let missing = (self.m.workloads.keys()).find(|w| r.apdex_t_ms(w).is_none());
        match (missing, &r.apdex_t) {
            (None, _) => Ok(()),
            (Some(_), None) => Err(self.err(
                "report.metric",
                "metric `apdex` scores latencies against a target T: set `report.apdex_t` \
                 (e.g. `apdex_t: 2ms`, or one per workload)"
                    .into(),
            )),
            (Some(w), Some(_)) => Err(self.err(
                "report.apdex_t",
                format!(
                    "metric `apdex` needs a T for every workload: `report.apdex_t` has none for \
                     `{w}`"
                ),
            )),
        }
    }

    /// `report.timeline_counters`: at most 4, each named as a server names its counters.
    fn check_timeline_counters(&self) -> Result<(), MatrixError> {
        let names = &self.m.report.timeline_counters;
        if names.len() > MAX_TIMELINE_COUNTERS {
            return Err(self.err(
                "report.timeline_counters",
                format!(
                    "{} counters: the per-second charts draw at most {MAX_TIMELINE_COUNTERS}",
                    names.len()
                ),
            ));
        }
        for (i, name) in names.iter().enumerate() {
            crate::input::untrusted::counter_name(name)
                .map_err(|e| self.err(&format!("report.timeline_counters[{i}]"), e))?;
        }
        Ok(())
    }

    /// The knee and limit rules' numbers: `report.load_curve`.
    fn check_load_curve(&self, lc: &LoadCurveSpec) -> Result<(), MatrixError> {
        if !(lc.min_gain_pct.is_finite() && lc.min_gain_pct >= 0.0) {
            return Err(self.err(
                "report.load_curve.min_gain_pct",
                format!(
                    "min_gain_pct {} is not a percentage of 0 or more (e.g. 5)",
                    lc.min_gain_pct
                ),
            ));
        }
        if !MEASUREMENTS.contains(&lc.max_measurements) {
            return Err(self.err(
                "report.load_curve.max_measurements",
                format!(
                    "max_measurements {} is not between {} and {} (measurements of one level a \
                     sweep may ask for)",
                    lc.max_measurements,
                    MEASUREMENTS.start(),
                    MEASUREMENTS.end()
                ),
            ));
        }
        if let Some(e) = lc
            .error_pct
            .filter(|e| !(e.is_finite() && (0.0..=100.0).contains(e)))
        {
            return Err(self.err(
                "report.load_curve.error_pct",
                format!("error_pct {e} is not a percentage between 0 and 100"),
            ));
        }
        Ok(())
    }
}
