//! The axes of the cross product: each present and in range, listed once, and together
//! within `MAX_CELLS`; each server with one source, and engines where a workload creates
//! tables.

use super::MatrixError;
use super::Validator;
use crate::input::repeats::first_repeat;
use crate::matrix::model::WorkloadSpec;
use crate::matrix::pacing::MAX_CONCURRENCY;

/// Most cells a matrix may expand to: far beyond any study, small enough to plan instantly.
pub(crate) const MAX_CELLS: usize = 100_000;
/// The most measured runs (cells x iterations) of one matrix.
pub(crate) const MAX_RUNS: u64 = 1_000_000;

impl Validator<'_> {
    /// Every axis has a value, and concurrency levels are at least 1.
    pub(super) fn check_axes_present(&self) -> Result<(), MatrixError> {
        let m = self.m;
        if m.servers.is_empty() {
            return Err(self.err(
                "servers",
                "`servers` is empty: name at least one server".into(),
            ));
        }
        if m.configs.is_empty() {
            return Err(self.err(
                "configs",
                "`configs` is empty: omit it or name at least one".into(),
            ));
        }
        if m.workloads.is_empty() {
            return Err(self.err(
                "workloads",
                "`workloads` is empty: name at least one".into(),
            ));
        }
        if m.concurrency.is_empty() {
            return Err(self.err(
                "concurrency",
                "`concurrency` is empty: give at least one value".into(),
            ));
        }
        if let Some(i) = m.concurrency.iter().position(|&c| c == 0) {
            return Err(self.err(
                &format!("concurrency[{i}]"),
                "concurrency must be at least 1".into(),
            ));
        }
        // Each level is that many connections (and client threads) at once.
        if let Some(i) = m.concurrency.iter().position(|&c| c > MAX_CONCURRENCY) {
            return Err(self.err(
                &format!("concurrency[{i}]"),
                format!(
                    "concurrency {} is more than {MAX_CONCURRENCY} connections",
                    m.concurrency[i]
                ),
            ));
        }
        Ok(())
    }

    /// The cell count (before anything is expanded: a typo can ask for millions), values
    /// listed twice, servers without exactly one source, and engines a workload needs.
    pub(super) fn check_axes_size(&self) -> Result<(), MatrixError> {
        let m = self.m;
        let cells = [
            m.servers.len(),
            m.configs.len().max(1),
            m.engines.len().max(1),
            m.workloads.len(),
            m.concurrency.len(),
            m.load.rate.as_ref().map_or(1, Vec::len),
        ]
        .iter()
        .try_fold(1usize, |acc, n| acc.checked_mul(*n))
        .filter(|c| *c <= MAX_CELLS);
        if cells.is_none() {
            return Err(self.err(
                "servers",
                format!(
                    "the matrix expands to more than {MAX_CELLS} cells ({} servers x {} configs \
                     x {} engines x {} workloads x {} concurrency levels): split it",
                    m.servers.len(),
                    m.configs.len(),
                    m.engines.len(),
                    m.workloads.len(),
                    m.concurrency.len()
                ),
            ));
        }
        // Every measured run is a results row, and the run's schedule holds them all.
        let runs = cells.map(|c| c as u64 * u64::from(m.iterations));
        if let Some(runs) = runs.filter(|r| *r > MAX_RUNS) {
            return Err(self.err(
                "iterations",
                format!(
                    "the matrix asks for {runs} measured runs (cells x iterations), more than \
                     {MAX_RUNS}: fewer iterations, or split the matrix"
                ),
            ));
        }
        // The same value twice on an axis would run every such cell twice.
        if let Some(i) = first_repeat(&m.concurrency) {
            return Err(self.err(
                &format!("concurrency[{i}]"),
                format!("concurrency {} is listed twice", m.concurrency[i]),
            ));
        }
        if let Some(i) = first_repeat(&m.engines) {
            return Err(self.err(
                &format!("engines[{i}]"),
                format!(
                    "engine `{}` is listed twice",
                    crate::escape::terminal(&m.engines[i])
                ),
            ));
        }
        for (name, s) in &m.servers {
            let path = format!("servers.{name}");
            let n = s.image.is_some() as u8
                + s.build.is_some() as u8
                + s.source.is_some() as u8
                + s.external.is_some() as u8;
            if n != 1 {
                return Err(self.err_at(
                    self.spans.key(&path),
                    format!(
                        "server `{name}` needs exactly one of `image`, `build`, `source` or \
                         `external`"
                    ),
                ));
            }
        }
        let needs_engine = m.workloads.values().find(|w| WorkloadSpec::uses_engine(w));
        if let (Some(w), true) = (needs_engine, m.engines.is_empty()) {
            return Err(self.err(
                "workloads",
                format!(
                    "{} workloads create their own tables: list `engines` (e.g. [InnoDB, MyISAM])",
                    w.kind()
                ),
            ));
        }
        Ok(())
    }
}
