//! Run-to-run noise per cell, learned from earlier runs (`rmatrix compare --noise-from`).
//!
//! Iterations inside one run share that run's conditions (host load, caches, container
//! placement), so their spread understates how much a cell moves from one run to the next.
//! Given earlier runs of the same matrix (a nightly store of accepted runs, or repeated
//! baseline runs), each cell's run effect is estimated from the spread of its run means
//! beyond what the iterations explain (`stats::RunNoise`), and `compare` adds it to the
//! variance of every change it judges.

use std::collections::HashMap;

use super::input::Run;
use crate::model::metric::Metric;
use crate::model::CellKey;
use crate::stats::RunNoise;

/// At most this many of the newest runs inform the noise of a cell: older ones may predate
/// a real change and would inflate it.
pub(crate) const MAX_NOISE_RUNS: usize = 10;

#[derive(Debug, Default, Clone)]
pub(crate) struct Noise {
    /// Runs read (after leaving out the compared candidates).
    pub(crate) runs: usize,
    /// By (metric name, join key).
    table: HashMap<(String, CellKey), RunNoise>,
    /// The iterations' variance (log scale) pooled over the runs, with its degrees of
    /// freedom and the runs that have the cell: what a planned compare's iterations will show.
    iterations: HashMap<(String, CellKey), Iterations>,
}

/// One cell's iterations over the runs read, on the log scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Iterations {
    pub(crate) var: f64,
    pub(crate) df: f64,
    pub(crate) runs: usize,
}

impl Iterations {
    /// Pooled over the runs with 2+ positive values; None when there is none.
    fn pool(runs: &[Vec<f64>]) -> Option<Iterations> {
        let (mut ss, mut df) = (0.0, 0.0);
        for v in runs
            .iter()
            .filter(|v| v.len() > 1 && v.iter().all(|x| *x > 0.0))
        {
            let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
            let m = logs.iter().sum::<f64>() / logs.len() as f64;
            ss += logs.iter().map(|x| (x - m).powi(2)).sum::<f64>();
            df += (logs.len() - 1) as f64;
        }
        (df > 0.0).then(|| Iterations {
            var: ss / df,
            df,
            runs: runs.len(),
        })
    }
}

impl Noise {
    /// `runs` in start order; runs whose directory is one of `exclude` (the candidates being
    /// judged) are left out, so a candidate never widens its own interval.
    pub(crate) fn learn(
        runs: &[Run],
        metrics: &[&Metric],
        ignore: &[String],
        exclude: &[Run],
    ) -> Noise {
        // By identity: a copy of a candidate inside the store is the candidate too.
        let excluded: Vec<_> = exclude.iter().map(super::input::identity).collect();
        let used: Vec<&Run> = (runs.iter())
            .filter(|r| {
                let own = excluded.contains(&super::input::identity(r));
                if own {
                    eprintln!(
                        "note: {} is a compared run: it is not counted as run-to-run noise",
                        crate::escape::terminal(&r.path.display().to_string())
                    );
                }
                !own
            })
            .collect();
        let mut per_cell: HashMap<(String, CellKey), Vec<Vec<f64>>> = HashMap::new();
        for run in &used {
            for m in metrics {
                for (key, s) in run.samples(m, ignore) {
                    per_cell
                        .entry((m.name.to_string(), key))
                        .or_default()
                        .push(s.values);
                }
            }
        }
        for v in per_cell.values_mut() {
            let newest = v.len().saturating_sub(MAX_NOISE_RUNS);
            v.drain(..newest);
        }
        let table = (per_cell.iter())
            .filter_map(|(k, v)| RunNoise::learn(v).map(|n| (k.clone(), n)))
            .collect();
        let iterations = (per_cell.iter())
            .filter_map(|(k, v)| Iterations::pool(v).map(|i| (k.clone(), i)))
            .collect();
        Noise {
            runs: used.len(),
            table,
            iterations,
        }
    }

    pub(crate) fn iterations(&self, metric: &str, key: &CellKey) -> Option<&Iterations> {
        self.iterations.get(&(metric.to_string(), key.clone()))
    }

    pub(crate) fn get(&self, metric: &str, key: &CellKey) -> Option<&RunNoise> {
        self.table.get(&(metric.to_string(), key.clone()))
    }
}
