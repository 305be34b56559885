//! Driving load: one module per workload kind; `run_iteration` picks the driver.

pub mod arrival;
pub mod oltp;
pub mod redis;
pub mod redis_benchmark;
pub mod slap;
pub mod stall;
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
/// (of every phase: prepare, warmup, measured) for the status line and the stall watchdog;
/// per-second samples, where the driver has them, go to `samples`.
///
/// With rmatrix's own clients (slap, oltp, redis), an iteration in which no operation
/// completes for the matrix's `stall_timeout` (default 60 s) fails with `stall::Stalled`;
/// its clients are stopped. The external tools (sysbench, redis-benchmark) report their
/// progress only when they end, so their iterations are not watched.
pub async fn run_iteration(
    workload: &WorkloadSpec,
    server: &Deployed,
    cell: &Cell,
    m: &Matrix,
    live: Arc<AtomicU64>,
    samples: &SampleSink,
) -> Result<Measurement> {
    let watched = match workload {
        WorkloadSpec::Slap(_) | WorkloadSpec::Oltp(_) | WorkloadSpec::Redis(_) => true,
        WorkloadSpec::Sysbench(_) | WorkloadSpec::RedisBenchmark(_) => false,
    };
    let ops = live.clone();
    let drive = drive(workload, server, cell, m, live, samples);
    if !watched {
        return drive.await;
    }
    let timeout = m
        .stall_timeout
        .and_then(|l| l.as_duration())
        .unwrap_or(stall::DEFAULT_STALL_TIMEOUT);
    tokio::select! {
        r = drive => r,
        stalled = stall::watch(&ops, timeout) => Err(stalled.into()),
    }
}

async fn drive(
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
