//! A sweep's curves, read from its results rows: one per server, config, engine and workload
//! (and connections, in open loop), each with its load levels in increasing load and every
//! level's measurements in iteration order, as the knee and limit rules (`stats::knee`) read
//! them. The run's stop rule and the report's load-curve tables both start here.

use indexmap::IndexMap;

use super::ResultRow;
use crate::stats::knee::{Level, Obs};

/// A curve's identity: deployment, engine, workload and, in open loop, the connections.
pub(crate) type CurveKey = (String, String, String, String, Option<u32>);

pub(crate) fn curve_key(r: &ResultRow) -> CurveKey {
    (
        r.server.clone(),
        r.config.clone(),
        r.engine.clone(),
        r.workload.clone(),
        r.rate.map(|_| r.concurrency),
    )
}

/// The level a row measured: its rate in open loop, else its connections.
pub(crate) fn load_of(r: &ResultRow) -> u32 {
    r.rate.unwrap_or(r.concurrency)
}

/// One level of a curve: its load and every row measured there (failed ones too).
pub(crate) struct LevelRows<'a> {
    pub(crate) load: u32,
    pub(crate) rows: Vec<&'a ResultRow>,
}

impl LevelRows<'_> {
    /// The successful rows.
    pub(crate) fn ok(&self) -> impl Iterator<Item = &ResultRow> {
        self.rows.iter().copied().filter(|r| r.is_ok())
    }

    /// The level as the rules read it; `batches` gives a row's batch means of its
    /// per-second throughput, when its measurement was long enough for them.
    pub(crate) fn level(&self, batches: &dyn Fn(&ResultRow) -> Option<Vec<f64>>) -> Level {
        let mut ok: Vec<&ResultRow> = self.ok().collect();
        ok.sort_by_key(|r| r.iteration);
        let mut tried: Vec<u32> = self.rows.iter().map(|r| r.iteration).collect();
        tried.sort_unstable();
        tried.dedup();
        Level {
            load: self.load as f64,
            obs: ok.iter().map(|r| obs(r)).collect(),
            tried,
            batches: ok.first().and_then(|r| batches(r)),
        }
    }
}

/// Throughput (arrivals served per second in open loop), p99 and error rate of one row.
pub(crate) fn obs(r: &ResultRow) -> Obs {
    let ops = r.queries.unwrap_or(0) as f64;
    let errors = r.errors.unwrap_or(0) as f64;
    Obs {
        throughput: match r.rate {
            Some(_) => r.achieved_rate.unwrap_or(0.0),
            None => r.qps.unwrap_or(0.0),
        },
        p99_ms: r.lat_p99_ms.unwrap_or(f64::INFINITY),
        error_rate: if ops + errors > 0.0 {
            errors / (ops + errors)
        } else {
            0.0
        },
    }
}

/// Each curve's levels in increasing load. A level with no successful row is not on the
/// curve (a level that fails is not asked again).
pub(crate) fn curves(rows: &[ResultRow]) -> IndexMap<CurveKey, Vec<LevelRows<'_>>> {
    let mut groups: IndexMap<CurveKey, Vec<&ResultRow>> = IndexMap::new();
    for r in rows {
        groups.entry(curve_key(r)).or_default().push(r);
    }
    groups
        .into_iter()
        .map(|(key, rows)| {
            let mut loads: Vec<u32> = rows.iter().map(|r| load_of(r)).collect();
            loads.sort_unstable();
            loads.dedup();
            let levels = loads
                .into_iter()
                .map(|load| LevelRows {
                    load,
                    rows: rows
                        .iter()
                        .copied()
                        .filter(|r| load_of(r) == load)
                        .collect(),
                })
                .filter(|l| l.ok().next().is_some())
                .collect();
            (key, levels)
        })
        .filter(|(_, levels): &(CurveKey, Vec<LevelRows>)| !levels.is_empty())
        .collect()
}

/// The curve a cell belongs to and its level on it (as a row of it would have them).
pub(crate) fn cell_curve(c: &super::Cell) -> (CurveKey, u32) {
    (
        (
            c.server.clone(),
            c.config.clone(),
            c.engine.clone().unwrap_or_default(),
            c.workload.clone(),
            c.rate.map(|_| c.concurrency),
        ),
        c.rate.unwrap_or(c.concurrency),
    )
}
