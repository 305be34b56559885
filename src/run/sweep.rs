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
pub struct Sweeps {
    /// The highest level still to run, once the stop rule has fired.
    stops: IndexMap<CurveKey, u32>,
    /// (level, iteration) to measure before the curve's next step can be told.
    wanted: IndexMap<CurveKey, Vec<(u32, u32)>>,
}

impl Sweeps {
    /// Read the sweeps of `m` from `rows` (nothing without a stop rule).
    pub fn read(m: &Matrix, rows: &[ResultRow], batches: Batches) -> Sweeps {
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
    pub fn skips(&self, c: &Cell) -> bool {
        let (key, load) = curve::cell_curve(c);
        self.stops.get(&key).is_some_and(|&last| load > last)
    }

    /// The (cell, iteration) pairs among `cells` to measure before their curves can go on.
    pub fn wanted<'c>(&self, cells: &'c [Cell]) -> Vec<(&'c Cell, u32)> {
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
