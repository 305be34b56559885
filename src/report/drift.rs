//! The stability check of a long run: for each iteration with per-second samples, its
//! throughput and p95 latency in the first third against the last third (batch means on each
//! side), so that a server that slows down, or a cache that warms up, shows as a drift with
//! its interval rather than hiding in a mean.

use serde::Serialize;

use crate::results::samples::Series;
use crate::stats::{drift::drift, Change, Confidence};

/// One iteration's drift line.
#[derive(Debug, Serialize)]
pub(crate) struct Drift {
    pub(crate) cell: String,
    pub(crate) iteration: u32,
    pub(crate) seconds: usize,
    pub(crate) throughput: String,
    pub(crate) p95: String,
    pub(crate) verdict: String,
}

fn text(c: Option<&Change>, conf: Confidence) -> String {
    match c {
        Some(c) => format!("{} {}", c.text(), conf.mark(c.p)),
        None => "too short".into(),
    }
}

/// Every iteration that has samples, in cell order; `qps` and `p95` are samples.csv's
/// columns by (cell key, iteration).
pub(crate) fn drifts(qps: &Series, p95: &Series, conf: Confidence) -> Vec<Drift> {
    let mut keys: Vec<&(String, u32)> = qps.keys().collect();
    keys.sort();
    keys.into_iter()
        .map(|key| {
            let series = &qps[key];
            let t = drift(series, conf);
            let l = p95.get(key).and_then(|s| drift(s, conf));
            let moved = |c: &Option<Change>| c.as_ref().is_some_and(|c| conf.significant(c.p));
            let verdict = match (t.is_none(), moved(&t), moved(&l)) {
                (true, _, _) => "n/a",
                (_, false, false) => "steady",
                (_, true, false) => "throughput drifts",
                (_, false, true) => "latency drifts",
                (_, true, true) => "throughput and latency drift",
            };
            Drift {
                cell: crate::escape::md_cell(&cell_name(&key.0)),
                iteration: key.1,
                seconds: series.len(),
                throughput: text(t.as_ref(), conf),
                p95: text(l.as_ref(), conf),
                verdict: verdict.into(),
            }
        })
        .collect()
}

/// A cell key (`server|config|engine|workload|concurrency[|rate]`) as the other tables name
/// cells: `server / config / workload / c16 / 2000/s`, an empty engine left out.
fn cell_name(key: &str) -> String {
    key.split('|')
        .enumerate()
        .filter(|(_, v)| !v.is_empty())
        .map(|(i, v)| match i {
            4 => format!("c{v}"),
            5 => format!("{v}/s"),
            _ => v.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slowing_iteration_drifts_and_a_steady_one_does_not() {
        let wobble = |i: usize| [13.0, -7.0, 2.0, -11.0, 5.0, -2.0, 9.0][i % 7];
        let steady: Vec<f64> = (0..300).map(|i| 1000.0 + wobble(i)).collect();
        let slowing: Vec<f64> = (0..300)
            .map(|i| (1000.0 + wobble(i)) * (1.0 - 0.2 * i as f64 / 300.0))
            .collect();
        let lat: Vec<f64> = (0..300).map(|i| 2.0 + wobble(i) / 100.0).collect();
        let key = |c: &str| (format!("s|{c}||w|4"), 1);
        let qps = Series::from([(key("a"), steady), (key("b"), slowing)]);
        let p95 = Series::from([(key("a"), lat.clone()), (key("b"), lat)]);
        let d = drifts(&qps, &p95, Confidence::default());
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].cell, "s / a / w / c4");
        assert_eq!(
            cell_name("s|a|InnoDB|w|4|2000"),
            "s / a / InnoDB / w / c4 / 2000/s"
        );
        assert_eq!((d[0].verdict.as_str(), d[0].seconds), ("steady", 300));
        assert_eq!(d[1].verdict, "throughput drifts");
        let short = Series::from([(key("c"), vec![1.0; 10])]);
        assert_eq!(
            drifts(&short, &Series::new(), Confidence::default())[0].verdict,
            "n/a"
        );
    }
}
