//! Sending a plan on one connection: every operation timed, the server's counters read
//! around it on the same connection, and the table sizes it promises checked after it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder, Row, Statement};

use super::plan::{Op, Step};
use crate::measure::counters::Status;
use crate::measure::interval::Counts;
use crate::measure::latency::Latency;
use crate::measure::operation::Operation;
use crate::measure::seconds::Recorder;
use crate::servers::mysql;

/// MariaDB's and MySQL's duplicate-key error.
const ER_DUP_ENTRY: u16 = 1062;

/// A table size checked after an operation.
#[derive(Debug, Clone, PartialEq)]
pub struct RowCheck {
    pub(crate) group: &'static str,
    /// The operation after which it holds (empty: after setup).
    pub(crate) op: &'static str,
    pub(crate) table: &'static str,
    pub expected: u64,
    pub found: u64,
}

/// The suite's connection and what it has measured so far.
pub(crate) struct Session {
    conn: Conn,
    /// For the connect operations' own connections.
    opts: Opts,
    kept: Option<Statement>,
    live: Arc<AtomicU64>,
    rec: Option<Recorder>,
    pub(crate) latency: Latency,
    /// Statements and connections sent, setup included.
    pub(crate) statements: u64,
    /// What rmatrix's own queries added to the server's counters (status reads, waits for
    /// closed connections, row checks): taken off the suite's counters.
    pub(crate) bookkeeping: Status,
    pub(crate) operations: Vec<Operation>,
    pub(crate) checks: Vec<RowCheck>,
}

impl Session {
    /// `conn` is already in the suite's schema, whose name the connect operations use.
    pub(crate) fn new(conn: Conn, opts: Opts, live: Arc<AtomicU64>) -> Session {
        Session {
            conn,
            opts,
            kept: None,
            live,
            rec: None,
            latency: Latency::default(),
            statements: 0,
            bookkeeping: Status::new(),
            operations: Vec::new(),
            checks: Vec::new(),
        }
    }

    /// Connection options for the suite: no statement cache (each prepared statement is
    /// prepared and closed where the plan says), and the settings mysql_async would
    /// otherwise ask the server for on every connect (a SELECT the originals do not send).
    pub(crate) fn opts(base: Opts) -> Opts {
        OptsBuilder::from_opts(base)
            .stmt_cache_size(0)
            .max_allowed_packet(Some(64 << 20))
            .wait_timeout(Some(28_800))
            .into()
    }

    /// Record each statement's second from here on.
    pub(crate) fn record(&mut self, rec: Recorder) {
        self.rec = Some(rec);
    }

    /// Hand the per-second recorder back (dropping it flushes its last second).
    pub(crate) fn stop_recording(&mut self) {
        self.rec = None;
    }

    pub(crate) fn into_conn(self) -> Conn {
        self.conn
    }

    pub(crate) fn conn(&mut self) -> &mut Conn {
        &mut self.conn
    }

    /// SHOW GLOBAL STATUS on the suite's connection, counted as bookkeeping.
    pub(crate) async fn status(&mut self) -> Result<Status> {
        let s = mysql::status(&mut self.conn).await?;
        self.own(&["Questions", "Com_show_status"]);
        Ok(s)
    }

    fn own(&mut self, counters: &[&str]) {
        for c in counters {
            *self.bookkeeping.entry(c.to_string()).or_default() += 1;
        }
    }

    /// Run one operation (timed and counted unless it is setup), then check its tables.
    pub(crate) async fn run(&mut self, op: &Op) -> Result<()> {
        let what = || match op.is_setup() {
            true => format!("{} (setup)", op.group.name()),
            false => format!("{} {}", op.group.name(), op.name),
        };
        if op.is_setup() {
            for s in &op.steps {
                self.step(s).await.with_context(what)?;
            }
        } else {
            let before = self.status().await?;
            let started = Instant::now();
            let mut ids = None;
            for s in &op.steps {
                if let Some(id) = self.step(s).await.with_context(what)? {
                    ids = Some(ids.map_or((id, id), |(first, _)| (first, id)));
                }
            }
            let seconds = started.elapsed().as_secs_f64();
            // A closed connection's COM_QUIT counts in Questions once the server has
            // processed it: wait for that, so that it lands in this operation.
            let polls = match ids {
                Some((first, last)) => self.wait_closed(first, last).await,
                None => 0,
            };
            let after = self.status().await?;
            let mut server = mysql::measured(&before, &after, &[], 0);
            for k in ["Questions", "Com_select"] {
                if let Some(v) = server.get_mut(k) {
                    *v = v.saturating_sub(polls);
                }
            }
            server.retain(|k, v| {
                k == "Questions" || (*v != 0 && (k == "Connections" || k.starts_with("Com_")))
            });
            self.operations.push(Operation {
                group: op.group.name().to_string(),
                name: op.name.to_string(),
                loops: op.loops,
                statements: op.steps.len() as u64,
                seconds,
                server,
                latency: None,
                errors: None,
            });
        }
        for &(table, expected) in &op.rows_after {
            let found: Option<u64> = self
                .conn
                .query_first(format!("SELECT COUNT(*) FROM {table}"))
                .await?;
            self.own(&["Questions", "Com_select"]);
            let found = found.unwrap_or(0);
            self.checks.push(RowCheck {
                group: op.group.name(),
                op: op.name,
                table,
                expected,
                found,
            });
            if found != expected {
                bail!("{}: {table} holds {found} rows, not {expected}", what());
            }
        }
        Ok(())
    }

    /// Send one step; a connect step returns its connection's id.
    async fn step(&mut self, step: &Step) -> Result<Option<u32>> {
        let t0 = Instant::now();
        let mut id = None;
        let res: Result<()> = async {
            match step {
                Step::Sql(t) => self.conn.query_drop(t).await?,
                Step::Rows(t, n) => {
                    let rows: Vec<Row> = self.conn.query(t).await?;
                    if rows.len() as u64 != *n {
                        bail!("{} rows, not {n}, from: {}", rows.len(), short(t));
                    }
                }
                Step::Duplicate(t) => match self.conn.query_drop(t).await {
                    Err(mysql_async::Error::Server(e)) if e.code == ER_DUP_ENTRY => {}
                    Err(e) => return Err(e.into()),
                    Ok(()) => bail!("no duplicate-key error from: {}", short(t)),
                },
                Step::Connect(t) => {
                    let mut c = Conn::new(self.opts.clone()).await?;
                    id = Some(c.id());
                    if let Some(t) = t {
                        c.query_drop(t).await?;
                    }
                    c.disconnect().await?;
                }
                Step::Prepared(t) => {
                    let st = self.conn.prep(t).await?;
                    self.conn.exec_drop(&st, ()).await?;
                    self.conn.close(st).await?;
                }
                Step::Prepare(t) => self.kept = Some(self.conn.prep(t).await?),
                Step::Execute(v) => {
                    let st = self.kept.clone().context("no statement prepared")?;
                    self.conn.exec_drop(&st, (*v,)).await?;
                }
                Step::Unprepare => {
                    if let Some(st) = self.kept.take() {
                        self.conn.close(st).await?;
                    }
                }
            }
            Ok(())
        }
        .await;
        let end = Instant::now();
        res.with_context(|| format!("failed: {}", step.text().map(short).unwrap_or_default()))?;
        let us = end.duration_since(t0).as_micros() as u64;
        self.latency.record_us(us);
        if let Some(rec) = self.rec.as_mut() {
            rec.event(
                end,
                us,
                if step.reads() {
                    &Counts::READ
                } else {
                    &Counts::WRITE
                },
            );
        }
        self.statements += 1;
        self.live.fetch_add(1, Ordering::Relaxed);
        Ok(id)
    }

    /// Wait (up to 10 s) until no connection with an id in first..=last is left; returns
    /// how many queries that took (each counts in Questions and Com_select).
    async fn wait_closed(&mut self, first: u32, last: u32) -> u64 {
        let q = format!(
            "SELECT COUNT(*) FROM information_schema.processlist WHERE id BETWEEN {first} AND {last}"
        );
        let give_up = Instant::now() + Duration::from_secs(10);
        let mut polls = 0;
        loop {
            let left = self.conn.query_first::<u64, _>(q.as_str()).await;
            polls += 1;
            self.own(&["Questions", "Com_select"]);
            match left {
                Ok(Some(0)) | Err(_) => return polls,
                _ if Instant::now() >= give_up => return polls,
                _ => tokio::time::sleep(Duration::from_millis(5)).await,
            }
        }
    }
}

/// A statement shortened for a message.
fn short(t: &str) -> String {
    match t.char_indices().nth(120) {
        Some((i, _)) => format!("{}...", &t[..i]),
        None => t.to_string(),
    }
}
