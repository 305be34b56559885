//! An iteration's clients, for either family's sessions: connected in parallel
//! (`open_all`), run for one phase on their own threads (`run_phase`), and what they
//! measured (`measurement`). `driver` orders the phases.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use anyhow::{anyhow, Result};

use super::collector::{self, Collected};
use super::prepare::seeded;
use super::spec::OltpSpec;
use super::unique::Ids;
use super::worker::{Phase, Worker};
use crate::input::Length;
use crate::measure::counters::Status;
use crate::measure::interval::mean_stddev;
use crate::measure::latency::Latency;
use crate::measure::measurement::Measurement;
use crate::measure::seconds::{Live, Seconds};
use crate::servers::sql::SqlClient;
use crate::servers::Endpoint;
use crate::workloads::pace::{Pace, PaceStats, Pacer};
use crate::workloads::threads;

/// The percentile of the per-second lines (sysbench's `--percentile` default).
pub(super) const SAMPLE_PERCENTILE: f64 = 95.0;

pub(super) fn measurement(
    spec: &OltpSpec,
    got: &Collected,
    seconds: f64,
    server: Status,
    cpu: Option<(f64, f64)>,
) -> Measurement {
    let total = got.total();
    let per_thread: Vec<f64> = got.workers.iter().map(|w| w.events as f64).collect();
    Measurement {
        queries: total.counts.queries(),
        errors: total.counts.errors,
        first_error: got.first_error(),
        // sysbench's "transactions" are events, with or without BEGIN/COMMIT.
        commits: total.counts.events,
        reads: Some(total.counts.reads),
        writes: Some(total.counts.writes),
        others: Some(total.counts.others),
        reconnects: Some(total.counts.reconnects),
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

/// A client's error that is neither ignorable nor a lost connection, as an error.
pub(super) fn no_fatal(got: &Collected) -> Result<()> {
    if let Some(e) = got.workers.iter().find_map(|w| w.fatal.clone()) {
        anyhow::bail!("a client stopped on an error: {e}");
    }
    Ok(())
}

/// The clients' service times together (open loop: from each request's send to its end).
pub(super) fn service(got: &Collected) -> Latency {
    let mut service = Latency::default();
    for w in got.workers.iter().filter_map(|w| w.service.as_ref()) {
        service.merge(w);
    }
    service
}

/// Connect `threads` clients in parallel, each preparing its statements.
pub(super) fn open_all<C: SqlClient>(
    endpoint: &Endpoint,
    spec: &Arc<OltpSpec>,
    threads: u32,
) -> Result<Vec<Worker<C>>> {
    std::thread::scope(|s| {
        let opening: Vec<_> = (0..threads)
            .map(|tid| {
                let rng = seeded(spec.rand_seed, tid as u64);
                std::thread::Builder::new()
                    .name(format!("oltp-open-{tid}"))
                    .spawn_scoped(s, move || Worker::open(tid, endpoint, spec.clone(), rng))
            })
            .collect();
        let mut workers = Vec::with_capacity(threads as usize);
        let mut first_error = None;
        for h in opening {
            match h.map_err(anyhow::Error::from).and_then(|h| {
                h.join()
                    .map_err(|_| anyhow!("a client thread panicked while connecting"))?
            }) {
                Ok(w) => workers.push(w),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e.context("failed to open the client connections")),
            None => Ok(workers),
        }
    })
}

/// A phase's workers back, what the collector gathered, its wall time, what the pacer saw.
pub(super) type Ran<C> = (Vec<Worker<C>>, Collected, f64, Option<PaceStats>);

/// Run every worker for `length` (a duration, or a total event count), each on its own
/// thread (in open loop, taking arrivals from a pacer); give them back with what the
/// collector gathered, the phase's wall time and what the pacer saw.
pub(super) fn run_phase<C: SqlClient>(
    workers: Vec<Worker<C>>,
    ids: Ids,
    length: Length,
    pace: Option<Pace>,
    live: Arc<AtomicU64>,
    cancelled: Arc<AtomicBool>,
    shown: Option<Arc<Live>>,
) -> Result<Ran<C>> {
    let threads = workers.len() as u32;
    let (tx, rx) = std::sync::mpsc::channel();
    let items: Vec<_> = workers.into_iter().map(|w| (w, tx.clone())).collect();
    drop(tx);
    let mut pacer = None;
    let ran = threads::gated(
        "oltp",
        items,
        |start| {
            pacer = pace.as_ref().map(|p| Pacer::start(p, length)).transpose()?;
            Ok(Phase {
                seconds: Seconds::new(start),
                deadline: length.as_duration().map(|d| start + d),
                budget: match length {
                    Length::Queries(n) if pacer.is_none() => Some((AtomicU64::new(0), n)),
                    _ => None,
                },
                tickets: pacer.as_ref().map(Pacer::tickets),
                live,
                cancelled,
                threads,
                ids,
            })
        },
        |_, (mut w, tx): (Worker<C>, _), phase| {
            if let Some(p) = phase {
                w.run(p, &tx);
            }
            w
        },
        |start, phase| {
            let seconds = phase.map_or_else(|| Seconds::new(start), |p| p.seconds.clone());
            if let Some(l) = &shown {
                l.set(&seconds);
            }
            collector::collect(rx, seconds)
        },
    );
    // A panicked worker is lost; its stats were sent up to its last second.
    match ran.error {
        Some(e) => Err(e),
        None => Ok((
            ran.outputs,
            ran.during,
            ran.elapsed,
            pacer.map(Pacer::finish),
        )),
    }
}
