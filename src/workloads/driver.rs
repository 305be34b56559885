//! Driving load: one module per workload kind; `run_iteration` picks the driver.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use anyhow::Result;

use super::{oltp, redis, redis_benchmark, slap, stall, sysbench};

use crate::matrix::model::{Matrix, WorkloadSpec};
use crate::matrix::Cell;
use crate::measure::measurement::Measurement;
use crate::results::samples::SampleSink;
use crate::servers::Deployed;

/// One measured iteration of `cell` against `server`; `live` counts completed operations
/// (of every phase: prepare, warmup, measured) for the status line and the stall watchdog;
/// per-second samples, where the driver has them, go to `samples`.
///
/// An iteration in which no operation completes for the matrix's `stall_timeout` (default
/// 60 s) fails with `stall::Stalled`, and its clients are stopped. rmatrix's own clients
/// (slap, oltp, redis) count their operations; the external tools (sysbench,
/// redis-benchmark) report only when they end, so for them the server is asked once a second
/// whether it answers at all (`stall::probe_server`); when it stops, the tool is killed.
pub async fn run_iteration(
    workload: &WorkloadSpec,
    server: &Deployed,
    cell: &Cell,
    m: &Matrix,
    live: Arc<AtomicU64>,
    samples: &SampleSink,
) -> Result<Measurement> {
    let probed = match workload {
        WorkloadSpec::Slap(_) | WorkloadSpec::Oltp(_) | WorkloadSpec::Redis(_) => None,
        WorkloadSpec::Sysbench(_) => Some(stall::Family::Mysql),
        WorkloadSpec::RedisBenchmark(_) => Some(stall::Family::Redis),
    };
    let timeout = m
        .stall_timeout
        .and_then(|l| l.as_duration())
        .unwrap_or(stall::DEFAULT_STALL_TIMEOUT);
    let ops = match probed {
        None => live.clone(),
        Some(_) => Arc::new(AtomicU64::new(0)),
    };
    let drive = drive(workload, server, cell, m, live, samples);
    let probe = async {
        match probed {
            Some(family) => stall::probe_server(&server.endpoint, family, timeout, &ops).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        r = drive => r,
        _ = probe => unreachable!("the probe runs until dropped"),
        stalled = stall::watch(&ops, timeout, match probed {
            None => "no operation completed",
            Some(_) => "the server answered no probe",
        }) => Err(stalled.into()),
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
            slap::driver::run_iteration(
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
            oltp::driver::run_iteration(
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
            sysbench::driver::run_iteration(&server.endpoint, spec, cell.concurrency, m, samples)
                .await
        }
        WorkloadSpec::Redis(spec) => {
            redis::driver::run_iteration(server, spec, cell.concurrency, m.warmup, m.length, live)
                .await
        }
        WorkloadSpec::RedisBenchmark(spec) => {
            redis_benchmark::driver::run_iteration(
                server,
                spec,
                cell.concurrency,
                m.warmup,
                m.length,
                live,
            )
            .await
        }
    }
}
