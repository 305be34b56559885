//! The `load:` block's checks: rates in range and listed once, a shape only with a rate
//! and with values that make a rate, and a sweep's stop rule only where there is a sweep to
//! stop and a limit to stop at.

use super::Validator;
use crate::input::bounds::MAX_STEP_PCT;
use crate::input::Length;
use crate::matrix::pacing::{ShapeSpec, Until, MAX_RATE};
use crate::matrix::MatrixError;

impl Validator<'_> {
    pub(super) fn check_load(&self) -> Result<(), MatrixError> {
        let l = &self.m.load;
        if let Some(rates) = &l.rate {
            if rates.is_empty() {
                return Err(self.err(
                    "load.rate",
                    "`load.rate` is empty: give at least one rate".into(),
                ));
            }
            if let Some(i) = rates.iter().position(|&r| r == 0 || r > MAX_RATE) {
                return Err(self.err(
                    &format!("load.rate[{i}]"),
                    format!(
                        "rate {} is not between 1 and {MAX_RATE} arrivals per second",
                        rates[i]
                    ),
                ));
            }
            if let Some(i) = crate::input::repeats::first_repeat(rates) {
                return Err(self.err(
                    &format!("load.rate[{i}]"),
                    format!("rate {} is listed twice", rates[i]),
                ));
            }
        } else if l.shape != ShapeSpec::Constant
            || l.arrivals != crate::matrix::pacing::Arrivals::Poisson
        {
            let key = match l.shape {
                ShapeSpec::Constant => "load.arrivals",
                _ => "load.shape",
            };
            return Err(self.err_at(
                self.spans.key(key),
                format!(
                    "`{key}` shapes an open-loop load: give the target rates in `load.rate` \
                     (arrivals per second)"
                ),
            ));
        }
        self.check_shape(&l.shape)?;
        if let Some(until) = l.until {
            let (axis, levels) = match &l.rate {
                Some(r) => ("load.rate", r.as_slice()),
                None => ("concurrency", self.m.concurrency.as_slice()),
            };
            if levels.len() < 2 {
                return Err(self.err(
                    "load.until",
                    format!("`load.until` stops a sweep: `{axis}` needs two levels or more"),
                ));
            }
            // The sweep goes in the order given and stops at the first level past its rule:
            // out of order, it would start at the heaviest load.
            if let Some(i) = (1..levels.len()).find(|&i| levels[i] <= levels[i - 1]) {
                return Err(self.err(
                    &format!("{axis}[{i}]"),
                    format!(
                        "`load.until` sweeps `{axis}` in the order given, from the lowest \
                         level up: {} comes after {}; list the levels in rising order",
                        levels[i],
                        levels[i - 1]
                    ),
                ));
            }
            let lc = self.m.report.load_curve.as_ref();
            let limits = lc.is_some_and(|lc| lc.p99.is_some() || lc.error_pct.is_some());
            if until == Until::Limit && !limits {
                return Err(self.err(
                    "load.until",
                    "`until: limit` stops at the stress limits: set `report.load_curve.p99` \
                     or `error_pct` (e.g. `report: {load_curve: {p99: 100ms}}`)"
                        .into(),
                ));
            }
        }
        Ok(())
    }

    fn check_shape(&self, shape: &ShapeSpec) -> Result<(), MatrixError> {
        let run = self.m.length.and_then(|l| l.as_duration());
        let duration = |path: &str, l: &Length| match (l, run) {
            // A shape that does not change within a run measures a constant rate.
            (Length::Time(d), Some(run)) if *d > run => Err(self.err(
                path,
                format!(
                    "`{path}` ({}s) is longer than the run (`length`: {}s): the rate would not \
                     change within it",
                    d.as_secs_f64(),
                    run.as_secs_f64()
                ),
            )),
            (Length::Time(d), _) if !d.is_zero() => Ok(()),
            _ => Err(self.err(path, format!("`{path}` must be a duration, e.g. 30s"))),
        };
        match shape {
            ShapeSpec::Constant => Ok(()),
            ShapeSpec::Steps(s) => {
                if s.pct.is_empty() {
                    return Err(self.err(
                        "load.shape.steps.pct",
                        "give at least one step, in percent of the cell's rate".into(),
                    ));
                }
                if let Some(i) = s
                    .pct
                    .iter()
                    .position(|p| !(p.is_finite() && *p > 0.0 && *p <= MAX_STEP_PCT))
                {
                    return Err(self.err(
                        &format!("load.shape.steps.pct[{i}]"),
                        format!(
                            "step {} is not a percentage of the cell's rate between 0 and \
                             {MAX_STEP_PCT}",
                            s.pct[i]
                        ),
                    ));
                }
                duration("load.shape.steps.hold", &s.hold)
            }
            ShapeSpec::Wave(w) => {
                if !(w.amplitude_pct.is_finite() && (0.0..=100.0).contains(&w.amplitude_pct)) {
                    return Err(self.err(
                        "load.shape.wave.amplitude_pct",
                        format!(
                            "amplitude_pct {} is not a percentage of the cell's rate between 0 \
                             and 100",
                            w.amplitude_pct
                        ),
                    ));
                }
                duration("load.shape.wave.period", &w.period)
            }
        }
    }
}
