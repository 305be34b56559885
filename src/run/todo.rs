//! What is left to do, read from the rows so far: the adaptive repeats' noisy cells and the
//! sweeps' stops and re-measures (`sweep`).

use anyhow::Result;

use super::*;

/// Would the adaptive repeats still measure `c`: it wants more (`wants`, read once from
/// `rows` for every cell) and a round up to `max_iterations` is not measured yet.
pub(super) fn adaptive_left(
    m: &Matrix,
    c: &Cell,
    rows: &[ResultRow],
    done: &Done,
    wants: &Wants,
) -> bool {
    if !adaptive(m) {
        return false;
    }
    let key = c.key();
    let max = m.repeat.max_iterations.unwrap_or(10).max(m.iterations);
    (m.iterations + 1..=max).any(|i| !done.contains(&(key.clone(), i))) && wants.more(m, &key, rows)
}

/// Whether the matrix repeats cells adaptively (`repeat.until_cv` or `until_interval`).
pub(super) fn adaptive(m: &Matrix) -> bool {
    m.repeat.until_cv.is_some() || m.repeat.until_interval.is_some()
}

/// What the adaptive repeats still want, read from the rows so far: the cells whose change
/// against the baseline is still wider than `until_interval`, with their baseline cells
/// (a paired change needs both in the same rounds).
pub(super) struct Wants {
    wide: std::collections::BTreeSet<CellKey>,
}

impl Wants {
    pub(super) fn read(m: &Matrix, rows: &[ResultRow]) -> Wants {
        let mut wide = std::collections::BTreeSet::new();
        if let Some(target) = m.repeat.until_interval {
            for (cell, base) in wide_changes(m, rows, target) {
                wide.insert(cell);
                wide.insert(base);
            }
        }
        Wants { wide }
    }

    /// `key` wants another round: its metric is noisier than `until_cv`, or a change it is
    /// part of is wider than `until_interval`.
    pub(super) fn more(&self, m: &Matrix, key: &CellKey, rows: &[ResultRow]) -> bool {
        m.repeat
            .until_cv
            .is_some_and(|target| noisy(m, key, rows, target))
            || self.wide.contains(key)
    }
}

/// Fewer than two measured values of the report metric, or a CV above `target` percent.
pub(super) fn noisy(m: &Matrix, key: &CellKey, rows: &[ResultRow], target: f64) -> bool {
    let metric = report_metric(m);
    let values: Vec<f64> = rows
        .iter()
        .filter(|r| r.is_ok() && r.cell_key() == *key)
        .filter_map(|r| metric.value(r))
        .collect();
    values.len() < 2
        || crate::stats::summarize(&values, crate::stats::Confidence::default())
            .and_then(|s| s.cv)
            .is_some_and(|cv| cv * 100.0 > target)
}

fn report_metric(m: &Matrix) -> &'static crate::model::metric::Metric {
    crate::model::metric::Metric::find(&m.report.metric)
        .unwrap_or(&crate::model::metric::METRICS[0])
}

/// The (cell, baseline cell) pairs whose change of the report metric, as the summary
/// computes it (`report::pivot::change_of`, at the report's confidence), reaches more than
/// `target` percentage points from its estimate on either side, or has no interval yet.
pub(super) fn wide_changes(m: &Matrix, rows: &[ResultRow], target: f64) -> Vec<(CellKey, CellKey)> {
    use crate::report::pivot;
    let conf = m.report.confidence();
    let stats = pivot::cell_stats(m, rows, report_metric(m), &Default::default(), conf);
    let key = |s: &pivot::CellStats| {
        CellKey::of(|d| s.dims.get(&d.to_string()).cloned().unwrap_or_default())
    };
    let mut out = Vec::new();
    for s in &stats {
        let Some(b) = pivot::baseline_of(m, &stats, s).filter(|b| b.dims != s.dims) else {
            continue;
        };
        let wide = pivot::change_of(b, s, conf)
            .is_none_or(|c| c.pct - c.lo_pct > target || c.hi_pct - c.pct > target);
        if wide {
            out.push((key(s), key(b)));
        }
    }
    out
}

/// Where each sweep with a stop rule stands (`load.until`), from the rows so far; the
/// batch means of a level measured once come from the run's samples.csv, which is not read
/// when the matrix's levels are too short to have any.
pub(super) fn read_sweeps(
    m: &Matrix,
    rows: &[ResultRow],
    dir: Option<&RunDir>,
) -> Result<sweep::Sweeps> {
    use crate::results::samples::ThroughputBatches;
    if m.load.until.is_none() {
        return Ok(sweep::Sweeps::default());
    }
    // Batch means need two seconds per batch, MIN_BATCHES batches.
    let min = std::time::Duration::from_secs(2 * crate::stats::batch::MIN_BATCHES as u64);
    let long_enough = m
        .length
        .and_then(|l| l.as_duration())
        .is_none_or(|d| d >= min);
    let batches = match dir {
        Some(d) if long_enough => ThroughputBatches::read(d)?,
        _ => ThroughputBatches::default(),
    };
    Ok(sweep::Sweeps::read(m, rows, &|r| batches.of(r)))
}
