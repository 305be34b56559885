//! An iteration's clients, for either family's sessions: connected in parallel
//! (`open_all`), run for one phase on their own threads (`run_phase`), and what they
//! measured (`measurement`). `driver` plugs them into the phases (`workloads::phases`).

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use anyhow::{anyhow, Result};

use super::collector::{self, Collected};
use super::prepare::seeded;
use super::spec::OltpSpec;
use super::unique::Ids;
use super::worker::{Phase, Worker};
use crate::measure::counters::Status;
use crate::measure::interval::mean_stddev;
use crate::measure::latency::Latency;
use crate::measure::measurement::Measurement;
use crate::servers::sql::SqlClient;
use crate::servers::Endpoint;
use crate::workloads::phases::{self, Begin, Ran};

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

/// What every worker of one phase shares besides the started phase.
pub(super) struct Common {
    pub(super) ids: Ids,
    pub(super) live: Arc<AtomicU64>,
    pub(super) cancelled: Arc<AtomicBool>,
}

/// Run every worker until the phase `begin` starts is over (a duration, a total event count
/// they share, or the pacer's end), each on its own thread; give them back with what the
/// collector gathered.
pub(super) fn run_phase<C: SqlClient>(
    workers: Vec<Worker<C>>,
    begin: &Begin,
    common: Common,
) -> Result<(Vec<Worker<C>>, Ran<Collected>)> {
    let threads = workers.len() as u32;
    let (tx, rx) = std::sync::mpsc::channel();
    let items: Vec<_> = workers.into_iter().map(|w| (w, tx.clone())).collect();
    drop(tx);
    let phase = Phase {
        budget: begin.shared_count().map(|n| (AtomicU64::new(0), n)),
        live: common.live,
        cancelled: common.cancelled,
        threads,
        ids: common.ids,
    };
    // A panicked worker is lost; its stats were sent up to its last second.
    let (ran, _) = phases::on_threads("oltp", items, begin, |_, (mut w, tx), started| {
        w.run(started, &phase, &tx);
        w
    })?;
    // Every sender is gone with its thread: the totals are all in.
    let got = collector::collect(rx, ran.seconds.clone());
    let Ran {
        tally: workers,
        seconds,
        elapsed,
        open,
    } = ran;
    let ran = Ran {
        tally: got,
        seconds,
        elapsed,
        open,
    };
    Ok((workers, ran))
}
