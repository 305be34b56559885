//! One client connection running events until the phase ends, on its own OS thread with a
//! blocking connection, as sysbench's threads do: measured side by side, mysql_async on tokio
//! spent twice sysbench's user CPU per statement (readiness polling and per-packet futures),
//! which at low concurrency is round-trip time lost. Each completed second of counts and
//! latencies goes to the collector; nothing is shared in the hot path but the event budget
//! and the live counter. What a connection of one server family does (connect, prepare,
//! execute, classify a failure) is its `SqlClient`, which `session.rs` drives.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::sync::mpsc::Sender;

use anyhow::Result;
use rand::rngs::SmallRng;

use crate::measure::interval::Counts;
use crate::measure::latency::Latency;
use crate::servers::sql::{Failure, SqlClient};
use crate::servers::Endpoint;
use crate::workloads::oltp::rand::KeyDist;
use crate::workloads::oltp::session::Session;
use crate::workloads::oltp::spec::OltpSpec;
use crate::workloads::oltp::sql::{EventGen, Step};
use crate::workloads::oltp::unique::Ids;
use crate::workloads::phases::Started;

/// Per-worker totals for thread fairness.
#[derive(Debug, Clone, Default)]
pub(crate) struct Summary {
    pub(crate) events: u64,
    /// Sum of this worker's event latencies (sysbench's per-thread "execution time").
    pub(crate) busy_s: f64,
    pub(crate) first_error: Option<String>,
    /// The error that stopped this worker, if one did.
    pub(crate) fatal: Option<String>,
    /// Open loop: each event's service time, from its first statement's send to its end.
    /// None in closed loop: a histogram per worker is 190 KB once touched, and 512 workers
    /// would carry 512 of them for nothing.
    pub(crate) service: Option<Latency>,
}

/// What every worker of one phase shares besides the started phase (`phases::Started`: its
/// deadline, per-second statistics and, in open loop, arrivals).
pub(crate) struct Phase {
    /// Event count limit shared by all workers (sysbench `--events`).
    pub(crate) budget: Option<(AtomicU64, u64)>,
    pub(crate) live: Arc<AtomicU64>,
    /// Set when the iteration was given up (the stall watchdog): stop at the next event.
    pub(crate) cancelled: Arc<AtomicBool>,
    pub(crate) threads: u32,
    /// oltp_insert without auto_inc: the tables' `rand.unique()` sequence.
    pub(crate) ids: Ids,
}

impl Phase {
    fn over(&self, deadline: Option<Instant>) -> bool {
        if self.cancelled.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
            return true;
        }
        match &self.budget {
            Some((used, total)) => used.fetch_add(1, Ordering::Relaxed) >= *total,
            None => false,
        }
    }
}

pub(crate) struct Worker<C: SqlClient> {
    pub(crate) tid: u32,
    conn: Option<Session<C>>,
    rng: SmallRng,
    endpoint: Endpoint,
    spec: Arc<OltpSpec>,
}

impl<C: SqlClient> Worker<C> {
    pub(crate) fn open(
        tid: u32,
        endpoint: &Endpoint,
        spec: Arc<OltpSpec>,
        rng: SmallRng,
    ) -> Result<Worker<C>> {
        let conn = Some(Session::open(endpoint, &spec)?);
        Ok(Worker {
            tid,
            conn,
            rng,
            endpoint: endpoint.clone(),
            spec,
        })
    }

    /// This client's connection, while it has one.
    pub(crate) fn client(&mut self) -> Option<&mut C> {
        self.conn.as_mut().map(Session::client)
    }

    /// Run events until the phase is over (open loop: each event is an arrival taken from
    /// the pacer, which ends the phase); each second's stats go to the phase's `seconds`,
    /// this worker's totals to `tx` at the end.
    pub(crate) fn run(&mut self, started: &Started, phase: &Phase, tx: &Sender<Summary>) {
        let spec = self.spec.clone();
        let gen = EventGen {
            spec: &spec,
            dist: KeyDist::new(&spec),
            tid: self.tid,
            threads: phase.threads,
            auto_id: C::AUTO_ID,
        };
        let mut summary = Summary::default();
        let mut rec = started.seconds.recorder();
        let mut plan = Vec::with_capacity(32);
        'events: while self.conn.is_some() {
            // The latency's origin: the intended start in open loop, the send in closed loop.
            let intended = match &started.tickets {
                _ if phase.cancelled.load(Ordering::Relaxed) => break,
                Some(t) => match t.next_blocking() {
                    Some(at) => Some(at),
                    None => break,
                },
                None if phase.over(started.deadline) => break,
                None => None,
            };
            let t0 = Instant::now();
            // This event's counts, added to the second in which it ends.
            let mut ev = Counts::default();
            loop {
                gen.event(&mut self.rng, || phase.ids.take(), &mut plan);
                match self.execute(&mut plan, &mut ev) {
                    Ok(()) => break,
                    Err((Failure::Ignored, _)) => ev.errors += 1,
                    Err((Failure::Lost, e)) => {
                        if !self.reconnect(started.deadline, phase) {
                            summary.first_error.get_or_insert(e.clone());
                            summary.fatal = Some(format!("could not reconnect after: {e}"));
                            break 'events;
                        }
                        ev.reconnects += 1;
                    }
                    Err((Failure::Fatal, e)) => {
                        ev.errors += 1;
                        rec.counts(Instant::now(), &ev);
                        summary.first_error.get_or_insert(e.clone());
                        summary.fatal = Some(e);
                        self.conn = None;
                        break 'events;
                    }
                }
            }
            let end = Instant::now();
            let us = end.duration_since(intended.unwrap_or(t0)).as_micros() as u64;
            if intended.is_some() {
                summary
                    .service
                    .get_or_insert_with(Latency::default)
                    .record_us(end.duration_since(t0).as_micros() as u64);
            }
            rec.event(end, us, &ev);
            summary.events += 1;
            summary.busy_s += us as f64 / 1e6;
            phase.live.fetch_add(ev.queries(), Ordering::Relaxed);
        }
        drop(rec);
        let _ = tx.send(summary);
    }

    fn execute(&mut self, plan: &mut Vec<Step>, st: &mut Counts) -> Result<(), (Failure, String)> {
        match self.conn.as_mut() {
            Some(conn) => conn.execute(plan, st),
            None => Err((Failure::Fatal, "no connection".into())),
        }
    }

    /// Reconnect (1 ms between attempts, as sysbench) until the phase would have ended.
    fn reconnect(&mut self, deadline: Option<Instant>, phase: &Phase) -> bool {
        self.conn = None;
        let give_up = deadline.unwrap_or_else(Instant::now) + Duration::from_secs(10);
        while Instant::now() < give_up && !phase.cancelled.load(Ordering::Relaxed) {
            if let Ok(conn) = Session::open(&self.endpoint, &self.spec) {
                self.conn = Some(conn);
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    }
}
