//! One oltp iteration on PostgreSQL: tables ready -> nothing left to count (the prepare's
//! backends gone) -> clients connected and statements prepared -> warmup (discarded) -> the
//! clients' statistics flushed -> server counters -> measured phase -> clients closed ->
//! server counters once settled. The phases run as on MySQL (`oltp/driver.rs`: the same
//! workers, pacer, recorders and collector); what differs is the counters: a backend sends
//! its statistics at most once a second while it lives and at its exit, so the counters
//! are read after each client flushed them (before) and after every client has gone (after).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::prepare;
use super::session::PgSession;
use crate::measure::counters::Status;
use crate::measure::cpu;
use crate::measure::measurement::{Loaded, Measurement};
use crate::servers::postgres::client::connect;
use crate::servers::postgres::counters::{self, Control};
use crate::workloads::oltp::phase::{
    measurement, no_fatal, open_all, run_phase, service, SAMPLE_PERCENTILE,
};
use crate::workloads::oltp::prepare::Prepared;
use crate::workloads::oltp::schema::{initial_rows, takes_unique_ids};
use crate::workloads::oltp::spec::OltpSpec;
use crate::workloads::oltp::unique::Ids;
use crate::workloads::oltp::worker::Worker;
use crate::workloads::threads::{blocking, Cancel};
use crate::workloads::Iteration;

/// PostgreSQL 15 keeps its statistics in shared memory and has `pg_stat_force_next_flush()`;
/// before it a collector process receives them, at most every 500 ms from each backend.
const SHARED_STATS: u32 = 150_000;

/// One iteration, as oltp's `run_iteration` on MySQL.
pub async fn run_iteration(it: &Iteration<'_>, spec: &OltpSpec) -> Result<Measurement> {
    let Iteration {
        endpoint,
        concurrency,
        warmup,
        length,
        window,
        pace,
        ..
    } = *it;
    let (live, phase) = (it.live.clone(), it.phase.cloned());
    let started = Instant::now();
    let loaded = prepare::ensure(endpoint, spec, &live)
        .await
        .context("failed to prepare the sbtest tables")?;
    let loaded = (loaded == Prepared::Loaded).then(|| Loaded {
        rows: u64::from(spec.tables) * u64::from(initial_rows(spec)),
        seconds: started.elapsed().as_secs_f64(),
    });
    let ids = match takes_unique_ids(spec) {
        true => super::unique::resume(&connect(endpoint, &spec.db).await?).await?,
        false => Ids::fresh(),
    };
    let control = Control::connect(endpoint).await?;
    // Whatever ran before (the prepare, the last iteration) has left and been counted.
    control.settled().await?;
    let spec = Arc::new(spec.clone());
    let threads = concurrency.max(1);
    let mut workers = blocking({
        let (endpoint, spec) = (endpoint.clone(), spec.clone());
        move || open_all::<PgSession>(&endpoint, &spec, threads)
    })
    .await?;

    let cancel = Cancel::default();
    let pace = pace.cloned();
    let mut warmup_samples = Vec::new();
    if let Some(w) = warmup {
        let (live, stop, pace, ids) = (live.clone(), cancel.flag(), pace.clone(), ids.clone());
        window.warmup_open();
        let ran = blocking(move || run_phase(workers, ids, w, pace, live, stop, None)).await;
        window.warmup_close();
        let (back, got, seconds, _) = ran?;
        warmup_samples = got.samples(seconds, threads, SAMPLE_PERCENTILE);
        workers = back;
    }
    let (workers, version_num) = blocking(move || flush(workers)).await?;
    let before = read_flushed(&control, version_num).await?;
    let cpu0 = cpu::process_seconds();
    let stop = cancel.flag();
    window.open();
    let phase_ids = ids.clone();
    let ran =
        blocking(move || run_phase(workers, phase_ids, length, pace, live, stop, phase)).await;
    window.close();
    let cpu1 = cpu::process_seconds();
    // Closed, so that each backend sends what it has left, and exits.
    let ran = match ran {
        Ok((workers, got, seconds, open)) => {
            blocking(move || {
                drop(workers);
                Ok((got, seconds, open))
            })
            .await
        }
        Err(e) => Err(e),
    };
    let after = control.settled().await;
    // Kept after the counters were read: the UPDATE is not the measured phase's work. The
    // warm-up's ids are in it too (one sequence over both phases).
    if takes_unique_ids(&spec) {
        super::unique::keep(&connect(endpoint, &spec.db).await?, &ids).await?;
    }
    let (got, seconds, open) = ran?;
    let server = counters::measured(&before, &after?);

    no_fatal(&got)?;
    let service = service(&got);
    Ok(Measurement {
        samples: got.samples(seconds, threads, SAMPLE_PERCENTILE),
        warmup_samples,
        open,
        service,
        loaded,
        ..measurement(&spec, &got, seconds, server, cpu0.zip(cpu1))
    })
}

/// Make every client send its pending statistics now (its connect, prepares and warm-up):
/// `pg_stat_force_next_flush()` from PostgreSQL 15, else a statement more than 500 ms
/// after its last report. Gives the clients back with the server's `server_version_num`.
fn flush(mut workers: Vec<Worker<PgSession>>) -> Result<(Vec<Worker<PgSession>>, u32)> {
    let version_num = (workers.iter_mut())
        .find_map(|w| w.session().map(|s| s.version_num))
        .unwrap_or(0);
    let query = match version_num >= SHARED_STATS {
        true => "SELECT pg_stat_force_next_flush()",
        false => {
            std::thread::sleep(Duration::from_millis(600));
            "SELECT 1"
        }
    };
    for s in workers.iter_mut().filter_map(Worker::session) {
        s.client()
            .batch_execute(query)
            .context("failed to flush a client's statistics")?;
    }
    Ok((workers, version_num))
}

/// The counters once the clients' flushed statistics are in: at once from shared memory,
/// else when two reads of the collector's file agree.
async fn read_flushed(control: &Control, version_num: u32) -> Result<Status> {
    let mut last = control.snapshot().await?;
    if version_num >= SHARED_STATS {
        return Ok(last);
    }
    let give_up = Instant::now() + Duration::from_secs(10);
    while Instant::now() < give_up {
        tokio::time::sleep(Duration::from_millis(600)).await;
        let now = control.snapshot().await?;
        if now == last {
            break;
        }
        last = now;
    }
    Ok(last)
}
