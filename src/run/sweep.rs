//! What a sweep with a stop rule (`load.until`) still asks for, read from the rows so far:
//! the level past which nothing runs (the one after the knee, or the first past a limit), and
//! the levels to measure again before a step can be told (`stats::knee`). Pure: the run loop
//! asks it after every measured cell, and a resumed run asks it on the stored rows.

use indexmap::IndexMap;

use crate::matrix::model::Matrix;
use crate::matrix::pacing::Until;
use crate::model::curve::{self, CurveKey};
use crate::model::{Cell, ResultRow};
use crate::report::load_curve::{limits, rule, Batches};
use crate::stats::knee::{self, Outcome};

/// Per curve: where its sweep stands.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Sweeps {
    /// The highest level still to run, once the stop rule has fired.
    stops: IndexMap<CurveKey, u32>,
    /// (level, iteration) to measure before the curve's next step can be told.
    wanted: IndexMap<CurveKey, Vec<(u32, u32)>>,
}

impl Sweeps {
    /// Read the sweeps of `m` from `rows` (nothing without a stop rule).
    pub(crate) fn read(m: &Matrix, rows: &[ResultRow], batches: Batches) -> Sweeps {
        let Some(until) = m.load.until else {
            return Sweeps::default();
        };
        let spec = m.report.load_curve.clone().unwrap_or_default();
        let rule = rule(&spec, m.report.confidence(), true);
        let mut out = Sweeps::default();
        for (key, level_rows) in curve::curves(rows) {
            let levels: Vec<knee::Level> = level_rows.iter().map(|l| l.level(batches)).collect();
            let outcome = match until {
                Until::Knee => knee::knee(&levels, &rule).outcome,
                Until::Limit => knee::limit(&levels, &rule, limits(&spec)).1,
            };
            match outcome {
                // The knee's next level showed it: that one was the last to run.
                Outcome::Knee(i) => {
                    out.stops.insert(key, level_rows[i + 1].load);
                }
                Outcome::Broken(i) => {
                    out.stops.insert(key, level_rows[i].load);
                }
                Outcome::Measure(m) => {
                    let want = m
                        .into_iter()
                        .map(|(i, it)| (level_rows[i].load, it))
                        .collect();
                    out.wanted.insert(key, want);
                }
                Outcome::GoOn => {}
            }
        }
        out
    }

    /// A cell above the level where its curve's sweep stopped: not run.
    pub(crate) fn skips(&self, c: &Cell) -> bool {
        let (key, load) = curve::cell_curve(c);
        self.stops.get(&key).is_some_and(|&last| load > last)
    }

    /// The (cell, iteration) pairs among `cells` to measure before their curves can go on.
    pub(crate) fn wanted<'c>(&self, cells: &'c [Cell]) -> Vec<(&'c Cell, u32)> {
        let mut out = Vec::new();
        for (key, want) in &self.wanted {
            for &(load, iteration) in want {
                if let Some(c) = cells
                    .iter()
                    .find(|c| curve::cell_curve(c) == (key.clone(), load))
                {
                    out.push((c, iteration));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Status;

    fn matrix(until: &str) -> Matrix {
        let text = format!(
            "servers: {{r: {{image: redis:7}}}}\nworkloads: {{get: {{redis: {{test: get}}}}}}\n\
             concurrency: [1, 2, 4, 8]\nload: {{until: {until}}}\nlength: 2s\n\
             report: {{load_curve: {{min_gain_pct: 5, p99: 10ms, max_measurements: 3}}}}\n"
        );
        crate::matrix::load_str(&text, std::path::Path::new("m.yaml"))
            .unwrap()
            .matrix
    }

    fn row(c: u32, iteration: u32, qps: f64, p99: f64) -> ResultRow {
        ResultRow {
            server: "r".into(),
            config: "default".into(),
            workload: "get".into(),
            concurrency: c,
            iteration,
            status: Status::Ok,
            queries: Some(qps as u64),
            errors: Some(0),
            qps: Some(qps),
            lat_p99_ms: Some(p99),
            ..ResultRow::default()
        }
    }

    fn cells(m: &Matrix) -> Vec<Cell> {
        crate::matrix::expand(m, &[])
            .deployments
            .into_iter()
            .flat_map(|d| d.cells)
            .collect()
    }

    fn none(_: &ResultRow) -> Option<Vec<f64>> {
        None
    }

    #[test]
    fn a_knee_sweep_asks_for_the_measurements_it_needs_then_stops_past_the_knee() {
        let m = matrix("knee");
        let all = cells(&m);
        let mut rows = vec![row(1, 1, 1000.0, 1.0), row(2, 1, 1900.0, 1.1)];
        // One measurement each: both levels measured again, their second iteration.
        let s = Sweeps::read(&m, &rows, &none);
        let want: Vec<(u32, u32)> = s
            .wanted(&all)
            .iter()
            .map(|(c, i)| (c.concurrency, *i))
            .collect();
        assert_eq!(want, [(1, 2), (2, 2)]);
        assert!(!s.skips(&all[3]));
        rows.extend([row(1, 2, 1010.0, 1.0), row(2, 2, 1910.0, 1.1)]);
        rows.extend([row(4, 1, 1920.0, 3.0), row(4, 2, 1915.0, 3.1)]);
        let s = Sweeps::read(&m, &rows, &none);
        assert!(s.wanted(&all).is_empty(), "{s:?}");
        // The knee is at 2 (4 gained ~0.5%, p99 rose): 4 was the last level to run.
        assert!(s.skips(&all[3]) && !s.skips(&all[2]));
        // A later round's rows do not move it.
        rows.push(row(4, 3, 9000.0, 0.5));
        assert_eq!(Sweeps::read(&m, &rows, &none), s);
    }

    #[test]
    fn a_limit_sweep_stops_at_the_first_level_past_a_limit() {
        let m = matrix("limit");
        let all = cells(&m);
        let rows = vec![
            row(1, 1, 1000.0, 1.0),
            row(1, 2, 1000.0, 1.1),
            row(2, 1, 1900.0, 40.0),
            row(2, 2, 1900.0, 42.0),
        ];
        let s = Sweeps::read(&m, &rows, &none);
        assert!(s.skips(&all[2]) && !s.skips(&all[1]));
        // Without a stop rule nothing is skipped or asked for.
        let plain = Sweeps::read(&matrix("knee"), &[], &none);
        assert_eq!(plain, Sweeps::default());
    }
}
