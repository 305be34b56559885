//! One slap client: a blocking connection on its own OS thread cycling through the query
//! list, as mariadb-slap's threads do. Measured side by side, mysql_async on tokio spent up to
//! twice mariadb-slap's client CPU per query (readiness polling, a future per packet), which
//! is round-trip time lost at low concurrency.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{Context, Result};
use mysql::prelude::Queryable;
use mysql::Conn;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::measure::interval::Counts;
use crate::measure::latency::Latency;
use crate::measure::seconds::Recorder;
use crate::servers::mysql::MysqlClient;
use crate::servers::Endpoint;
use crate::workloads::pace::Until;
use crate::workloads::slap::sql::{SlapSql, Statement, SCHEMA};

/// Client errors after which the connection is gone (server gone, lost, out of sync) and
/// MariaDB's ER_CONNECTION_KILLED.
const LOST: [u16; 5] = [2013, 2006, 2011, 2055, 1927];

/// What every client of a phase shares: read-only but for the counters.
pub(crate) struct Shared<'a> {
    pub(crate) sql: &'a SlapSql,
    pub(crate) keys: &'a [String],
    /// Statements between COMMITs (0: autocommit).
    pub(crate) commit: u32,
    /// Completed statements of every phase (the status line and the stall watchdog).
    pub(crate) live: &'a AtomicU64,
    /// Set when the iteration was given up (the stall watchdog): stop at the next statement.
    pub(crate) cancelled: &'a AtomicBool,
}

#[derive(Default)]
pub(crate) struct ClientResult {
    pub(crate) queries: u64,
    pub(crate) errors: u64,
    pub(crate) commits: u64,
    pub(crate) first_error: Option<String>,
    pub(crate) latency: Latency,
    /// Open loop only: from each statement's send to its reply (a touched histogram is
    /// 190 KB, so closed-loop clients carry none).
    pub(crate) service: Option<Latency>,
}

pub(crate) struct Client {
    conn: Option<Conn>,
    rng: SmallRng,
    /// A keyed statement's text, reused from query to query.
    text: String,
}

impl Client {
    pub(crate) fn open(endpoint: &Endpoint, no_autocommit: bool) -> Result<Client> {
        let opts = endpoint.blocking_opts(Some(SCHEMA));
        let mut conn =
            Conn::new(opts).with_context(|| format!("failed to connect to {endpoint:?}"))?;
        if no_autocommit {
            conn.query_drop("SET AUTOCOMMIT=0")?;
        }
        Ok(Client {
            conn: Some(conn),
            rng: SmallRng::from_os_rng(),
            text: String::with_capacity(256),
        })
    }

    /// Run statements until `until` says stop; a lost connection ends this client (its
    /// connection is then gone), other errors are counted and the client goes on.
    pub(crate) fn run(
        &mut self,
        shared: &Shared,
        until: &Until,
        mut rec: Option<Recorder>,
    ) -> ClientResult {
        let mut r = ClientResult::default();
        let Some(conn) = self.conn.as_mut() else {
            return r;
        };
        let list = &shared.sql.queries;
        // Each statement's class in the per-second lines: a SELECT reads, the rest write.
        let class: Vec<Counts> = list
            .iter()
            .map(|s| match s {
                Statement::Fixed(t) | Statement::WithKey(t) if t.starts_with("SELECT") => {
                    Counts::READ
                }
                _ => Counts::WRITE,
            })
            .collect();
        let mut done: u64 = 0;
        let mut since_commit = 0u32;
        loop {
            if shared.cancelled.load(Ordering::Relaxed) {
                break;
            }
            // The latency's origin: the intended start in open loop, the send in closed loop.
            let intended = match until {
                Until::Closed { share, deadline } => {
                    if share.is_some_and(|s| done >= s)
                        || deadline.is_some_and(|d| Instant::now() >= d)
                    {
                        break;
                    }
                    None
                }
                Until::Paced(t) => match t.next_blocking() {
                    Some(at) => Some(at),
                    None => break,
                },
            };
            let i = (done % list.len() as u64) as usize;
            let text = list[i].render_into(shared.keys, &mut self.rng, &mut self.text);
            let t0 = Instant::now();
            let res = conn.query_drop(text);
            let end = Instant::now();
            let us = end.duration_since(intended.unwrap_or(t0)).as_micros() as u64;
            if intended.is_some() {
                r.service
                    .get_or_insert_with(Latency::default)
                    .record_us(end.duration_since(t0).as_micros() as u64);
            }
            done += 1;
            match res {
                Ok(()) => {
                    r.queries += 1;
                    r.latency.record_us(us);
                    if let Some(rec) = rec.as_mut() {
                        rec.event(end, us, &class[i]);
                    }
                    shared.live.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => {
                    r.errors += 1;
                    if let Some(rec) = rec.as_mut() {
                        rec.counts(end, &Counts::ERROR);
                    }
                    r.first_error.get_or_insert_with(|| e.to_string());
                    if lost(&e) {
                        // This client stops, the others go on.
                        self.conn = None;
                        return r;
                    }
                }
            }
            if shared.commit > 0 {
                since_commit += 1;
                if since_commit == shared.commit {
                    since_commit = 0;
                    if conn.query_drop("COMMIT").is_ok() {
                        r.commits += 1;
                    }
                }
            }
        }
        if shared.commit > 0 && since_commit > 0 && conn.query_drop("COMMIT").is_ok() {
            r.commits += 1;
        }
        r
    }
}

fn lost(e: &mysql::Error) -> bool {
    match e {
        mysql::Error::MySqlError(s) => LOST.contains(&s.code),
        mysql::Error::IoError(_) | mysql::Error::CodecError(_) | mysql::Error::DriverError(_) => {
            true
        }
        _ => false,
    }
}
