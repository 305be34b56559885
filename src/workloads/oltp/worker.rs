//! One client connection running events until the phase ends, on its own OS thread with a
//! blocking connection, as sysbench's threads do: measured side by side, mysql_async on tokio
//! spent twice sysbench's user CPU per statement (readiness polling and per-packet futures),
//! which at low concurrency is round-trip time lost. Each completed second of counts and
//! latencies goes to the collector; nothing is shared in the hot path but the event budget
//! and the live counter.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::sync::mpsc::Sender;

use anyhow::{Context, Result};
use mysql::prelude::Queryable;
use mysql::{Conn, Params, Statement};
use rand::rngs::SmallRng;

use crate::measure::interval::Counts;
use crate::measure::latency::Latency;
use crate::measure::seconds::Seconds;
use crate::servers::mysql::MysqlClient;
use crate::servers::Endpoint;
use crate::workloads::oltp::rand::KeyDist;
use crate::workloads::oltp::spec::OltpSpec;
use crate::workloads::oltp::sql::{kinds, prepared_tables, EventGen, Kind, Step};
use crate::workloads::oltp::unique::Ids;
use crate::workloads::pace::Tickets;

/// sysbench's default `--mysql-ignore-errors`: deadlock, record changed, lock-wait timeout.
const IGNORED: [u16; 3] = [1213, 1020, 1205];
/// Connection-loss client errors after which sysbench reconnects, and MariaDB's
/// ER_CONNECTION_KILLED (1927), what a client killed mid-statement reads before the socket
/// closes.
const LOST: [u16; 5] = [2013, 2006, 2011, 2055, 1927];

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

/// The phase every worker of one run shares.
pub(crate) struct Phase {
    pub(crate) deadline: Option<Instant>,
    /// The phase's per-second statistics, which each worker's recorder feeds.
    pub(crate) seconds: Arc<Seconds>,
    /// Event count limit shared by all workers (sysbench `--events`).
    pub(crate) budget: Option<(AtomicU64, u64)>,
    pub(crate) live: Arc<AtomicU64>,
    /// Set when the iteration was given up (the stall watchdog): stop at the next event.
    pub(crate) cancelled: Arc<AtomicBool>,
    pub(crate) threads: u32,
    /// oltp_insert without auto_inc: the tables' `rand.unique()` sequence.
    pub(crate) ids: Ids,
    /// Open loop: each event is an arrival, taken from here; the pacer ends the phase.
    pub(crate) tickets: Option<Tickets>,
}

impl Phase {
    fn over(&self) -> bool {
        if self.cancelled.load(Ordering::Relaxed)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
        {
            return true;
        }
        match &self.budget {
            Some((used, total)) => used.fetch_add(1, Ordering::Relaxed) >= *total,
            None => false,
        }
    }
}

pub(crate) struct Worker {
    pub(crate) tid: u32,
    conn: Option<Conn>,
    /// Prepared statements indexed by `(table - 1) * Kind::COUNT + kind`.
    stmts: Vec<Option<Statement>>,
    rng: SmallRng,
    endpoint: Endpoint,
    spec: Arc<OltpSpec>,
}

enum Failure {
    Ignored,
    Lost,
    Fatal,
}

fn classify(e: &mysql::Error) -> Failure {
    match e {
        mysql::Error::MySqlError(s) if IGNORED.contains(&s.code) => Failure::Ignored,
        mysql::Error::MySqlError(s) if LOST.contains(&s.code) => Failure::Lost,
        mysql::Error::IoError(_) | mysql::Error::CodecError(_) => Failure::Lost,
        _ => Failure::Fatal,
    }
}

impl Worker {
    pub(crate) fn open(
        tid: u32,
        endpoint: &Endpoint,
        spec: Arc<OltpSpec>,
        rng: SmallRng,
    ) -> Result<Worker> {
        let mut w = Worker {
            tid,
            conn: None,
            stmts: Vec::new(),
            rng,
            endpoint: endpoint.clone(),
            spec,
        };
        w.connect()?;
        Ok(w)
    }

    /// Connect and prepare the test's statements for every table, as thread_init does.
    fn connect(&mut self) -> Result<()> {
        let tables = prepared_tables(&self.spec);
        let kinds = kinds(&self.spec);
        // The driver's statement cache must hold every statement: an evicted one is closed
        // on the server while this worker still executes it.
        let opts = self
            .endpoint
            .blocking_opts(Some(&self.spec.db))
            .stmt_cache_size(tables as usize * kinds.len() + 16);
        let mut conn =
            Conn::new(opts).with_context(|| format!("failed to connect to {:?}", self.endpoint))?;
        let mut stmts = vec![None; tables as usize * Kind::COUNT];
        for t in 1..=tables {
            for &k in &kinds {
                let sql = k.sql(t, &self.spec);
                let s = conn
                    .prep(&sql)
                    .with_context(|| format!("failed to prepare {sql}"))?;
                stmts[(t as usize - 1) * Kind::COUNT + k.index()] = Some(s);
            }
        }
        self.conn = Some(conn);
        self.stmts = stmts;
        Ok(())
    }

    /// The server's id of this client's connection, while it has one.
    pub(crate) fn connection_id(&self) -> Option<u32> {
        self.conn.as_ref().map(Conn::connection_id)
    }

    /// Run events until the phase is over; each second's stats go to the phase's `seconds`,
    /// this worker's totals to `tx` at the end.
    pub(crate) fn run(&mut self, phase: &Phase, tx: &Sender<Summary>) {
        let spec = self.spec.clone();
        let gen = EventGen {
            spec: &spec,
            dist: KeyDist::new(&spec),
            tid: self.tid,
            threads: phase.threads,
        };
        let mut summary = Summary::default();
        let mut rec = phase.seconds.recorder();
        let mut plan = Vec::with_capacity(32);
        'events: while self.conn.is_some() {
            // The latency's origin: the intended start in open loop, the send in closed loop.
            let intended = match &phase.tickets {
                _ if phase.cancelled.load(Ordering::Relaxed) => break,
                Some(t) => match t.next_blocking() {
                    Some(at) => Some(at),
                    None => break,
                },
                None if phase.over() => break,
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
                        if !self.reconnect(phase) {
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

    /// Execute one event's statements, classifying each as sysbench's driver does.
    fn execute(&mut self, plan: &mut Vec<Step>, st: &mut Counts) -> Result<(), (Failure, String)> {
        let Some(conn) = self.conn.as_mut() else {
            return Err((Failure::Fatal, "no connection".into()));
        };
        for step in plan.drain(..) {
            let res = match step {
                Step::Begin => conn.query_drop("BEGIN").map(|_| false),
                Step::Commit => conn.query_drop("COMMIT").map(|_| false),
                Step::Text(q) => conn.query_drop(q).map(|_| false),
                Step::Exec {
                    kind,
                    table,
                    params,
                } => {
                    let i = (table as usize - 1) * Kind::COUNT + kind.index();
                    let Some(stmt) = self.stmts.get(i).and_then(Option::as_ref) else {
                        return Err((Failure::Fatal, format!("{kind:?} is not prepared")));
                    };
                    let read = stmt.num_columns() > 0;
                    conn.exec_drop(stmt, Params::Positional(params))
                        .map(|_| read)
                }
            };
            match res {
                Ok(true) => st.reads += 1,
                Ok(false) if conn.affected_rows() > 0 => st.writes += 1,
                Ok(false) => st.others += 1,
                Err(e) => {
                    let text = e.to_string();
                    return Err((classify(&e), text));
                }
            }
        }
        Ok(())
    }

    /// Reconnect (1 ms between attempts, as sysbench) until the phase would have ended.
    fn reconnect(&mut self, phase: &Phase) -> bool {
        self.conn = None;
        let give_up = phase.deadline.unwrap_or_else(Instant::now) + Duration::from_secs(10);
        while Instant::now() < give_up && !phase.cancelled.load(Ordering::Relaxed) {
            if self.connect().is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    }
}
