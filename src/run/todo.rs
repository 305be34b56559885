//! What is left to do, read from the rows so far: the adaptive repeats' noisy cells and the
//! sweeps' stops and re-measures (`sweep`).

use anyhow::Result;

use super::*;

/// Would the adaptive repeats still measure `c`: its metric is noisy and a round up to
/// `max_iterations` is not measured yet.
pub(super) fn adaptive_left(m: &Matrix, c: &Cell, rows: &[ResultRow], done: &Done) -> bool {
    let Some(target) = m.repeat.until_cv else {
        return false;
    };
    let key = c.key();
    let max = m.repeat.max_iterations.unwrap_or(10).max(m.iterations);
    (m.iterations + 1..=max).any(|i| !done.contains(&(key.clone(), i)))
        && noisy(m, &key, rows, target)
}

/// Fewer than two measured values of the report metric, or a CV above `target` percent.
pub(super) fn noisy(m: &Matrix, key: &CellKey, rows: &[ResultRow], target: f64) -> bool {
    let metric = crate::model::metric::Metric::find(&m.report.metric)
        .unwrap_or(&crate::model::metric::METRICS[0]);
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
