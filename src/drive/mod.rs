//! Driving load: one module per workload kind; `run_iteration` picks the driver.

pub mod slap;

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use anyhow::Result;

use crate::matrix::model::{Matrix, WorkloadSpec};
use crate::matrix::Cell;
use crate::measure::measurement::Measurement;
use crate::server::Deployed;

/// One measured iteration of `cell` against `server`; `live` counts completed operations
/// for the status line.
pub async fn run_iteration(
    workload: &WorkloadSpec,
    server: &Deployed,
    cell: &Cell,
    m: &Matrix,
    live: Arc<AtomicU64>,
) -> Result<Measurement> {
    match workload {
        WorkloadSpec::Slap(spec) => {
            let engine = cell.engine.as_deref().unwrap_or("InnoDB");
            slap::run_iteration(
                &server.endpoint,
                spec,
                engine,
                cell.concurrency,
                m.warmup,
                m.length,
                live,
            )
            .await
        }
    }
}
