//! Driving load: one module per workload kind; `run_iteration` picks the driver.

pub mod arrival;
pub mod oltp;
pub mod redis;
pub mod redis_benchmark;
pub mod slap;
pub mod sysbench;

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use anyhow::Result;

use crate::matrix::model::{Matrix, WorkloadSpec};
use crate::matrix::Cell;
use crate::measure::measurement::Measurement;
use crate::results::samples::SampleSink;
use crate::server::Deployed;

/// One measured iteration of `cell` against `server`; `live` counts completed operations
/// for the status line; per-second samples, where the driver has them, go to `samples`.
pub async fn run_iteration(
    workload: &WorkloadSpec,
    server: &Deployed,
    cell: &Cell,
    m: &Matrix,
    live: Arc<AtomicU64>,
    samples: &SampleSink,
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
        WorkloadSpec::Oltp(spec) => {
            let engine = cell.engine.as_deref().unwrap_or(&spec.mysql_storage_engine);
            oltp::run_iteration(
                &server.endpoint,
                spec,
                engine,
                cell.concurrency,
                m.warmup,
                m.length,
                live,
                samples,
            )
            .await
        }
        WorkloadSpec::Sysbench(spec) => {
            sysbench::run_iteration(&server.endpoint, spec, cell.concurrency, m, samples).await
        }
        WorkloadSpec::Redis(spec) => {
            redis::run_iteration(server, spec, cell.concurrency, m.warmup, m.length, live).await
        }
        WorkloadSpec::RedisBenchmark(spec) => {
            redis_benchmark::run_iteration(server, spec, cell.concurrency, m.warmup, m.length, live)
                .await
        }
    }
}
