//! One oltp iteration: tables ready -> clients connected and statements prepared ->
//! warmup (discarded) -> server counters -> measured phase -> server counters.

use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use rand::Rng;

use super::collector::{self, Collected};
use super::prepare::{self, seeded};
use super::worker::{Phase, Worker};
use crate::matrix::oltp::OltpSpec;
use crate::matrix::Length;
use crate::measure::counters::{self, Status};
use crate::measure::cpu;
use crate::measure::interval::mean_stddev;
use crate::measure::measurement::Measurement;
use crate::results::samples::SampleSink;
use crate::server::Endpoint;

/// The percentile of the per-second lines (sysbench's `--percentile` default).
const SAMPLE_PERCENTILE: f64 = 95.0;

#[allow(clippy::too_many_arguments)] // one per matrix dimension the driver needs; a struct would only rename them
pub async fn run_iteration(
    endpoint: &Endpoint,
    spec: &OltpSpec,
    engine: &str,
    concurrency: u32,
    warmup: Option<Length>,
    length: Length,
    live: Arc<AtomicU64>,
    samples: &SampleSink,
) -> Result<Measurement> {
    prepare::ensure(endpoint, spec, engine)
        .await
        .context("failed to prepare the sbtest tables")?;
    let spec = Arc::new(spec.clone());
    let threads = concurrency.max(1);
    let opens = (0..threads).map(|tid| {
        let rng = seeded(spec.rand_seed, tid as u64);
        Worker::open(tid, endpoint, spec.clone(), rng)
    });
    let mut workers = futures_util::future::try_join_all(opens).await?;
    let mut control = endpoint.connect(Some(&spec.db)).await?;

    if let Some(w) = warmup {
        let (back, _, _) = run_phase(workers, w, Arc::new(AtomicU64::new(0))).await;
        workers = back;
    }

    let before = status(&mut control).await?;
    let cpu0 = cpu::process_seconds();
    let (workers, got, seconds) = run_phase(workers, length, live).await;
    let cpu1 = cpu::process_seconds();
    let after = status(&mut control).await?;
    let mut server = counters::delta(&before, &after);
    // The second SHOW GLOBAL STATUS counts itself.
    for k in ["Questions", "Com_show_status"] {
        if let Some(q) = server.get_mut(k) {
            *q = q.saturating_sub(1);
        }
    }
    // Keep the results readable: counters that moved, and always the ones compared.
    server
        .retain(|k, v| *v != 0 || counters::RECORDED.contains(&k.as_str()) || k == "Com_rollback");
    for w in workers {
        w.close().await;
    }
    let _ = control.disconnect().await;

    samples.write(&got.samples(seconds, threads, SAMPLE_PERCENTILE))?;
    // As in sysbench, an error that is neither ignorable nor a lost connection ends the run:
    // the numbers of the clients left would not be the cell's.
    if let Some(e) = got.workers.iter().find_map(|w| w.fatal.clone()) {
        anyhow::bail!("a client stopped on an error: {e}");
    }
    Ok(measurement(&spec, &got, seconds, server, cpu0.zip(cpu1)))
}

fn measurement(
    spec: &OltpSpec,
    got: &Collected,
    seconds: f64,
    server: Status,
    cpu: Option<(f64, f64)>,
) -> Measurement {
    let total = got.total();
    let per_thread: Vec<f64> = got.workers.iter().map(|w| w.events as f64).collect();
    Measurement {
        queries: total.queries(),
        errors: total.errors,
        first_error: got.first_error(),
        // sysbench's "transactions" are events, with or without BEGIN/COMMIT.
        commits: total.events,
        reads: Some(total.reads),
        writes: Some(total.writes),
        others: Some(total.others),
        reconnects: Some(total.reconnects),
        seconds,
        latency: collector::latency(&total),
        server,
        thread_events: Some(mean_stddev(&per_thread)),
        client_cpu_s: cpu.map(|(a, b)| b - a),
        percentiles: spec
            .percentiles
            .iter()
            .map(|p| (*p, total.percentile_ms(*p)))
            .collect(),
        ..Measurement::default()
    }
}

async fn status(conn: &mut Conn) -> Result<Status> {
    let rows: Vec<(String, String)> = conn.query("SHOW GLOBAL STATUS").await?;
    Ok(counters::parse(rows))
}

/// Run every worker for `length` (a duration, or a total event count); give them back with
/// what the collector gathered and the phase's wall time.
async fn run_phase(
    workers: Vec<Worker>,
    length: Length,
    live: Arc<AtomicU64>,
) -> (Vec<Worker>, Collected, f64) {
    let start = Instant::now();
    let phase = Arc::new(Phase {
        start,
        deadline: length.as_duration().map(|d| start + d),
        budget: match length {
            Length::Queries(n) => Some((AtomicU64::new(0), n)),
            Length::Time(_) => None,
        },
        live,
        threads: workers.len() as u32,
        unique: AtomicU32::new(0),
        unique_offset: rand::rng().random(),
    });
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let collector = tokio::spawn(collector::collect(rx));
    let handles: Vec<_> = workers
        .into_iter()
        .map(|mut w| {
            let (phase, tx) = (phase.clone(), tx.clone());
            tokio::spawn(async move {
                w.run(&phase, &tx).await;
                w
            })
        })
        .collect();
    drop(tx);
    let mut back = Vec::with_capacity(handles.len());
    for h in handles {
        // A panicked worker is lost; its stats were sent up to its last second.
        if let Ok(w) = h.await {
            back.push(w);
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let got = collector.await.unwrap_or_default();
    (back, got, seconds)
}
