//! Running a slap cell: one connection prepares the schema, `concurrency` clients run their
//! share of the statements, and the server's counters are read around the measured phase.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::SlapSpec;
use crate::input::Length;
use crate::measure::cgroup::Window;
use crate::measure::counters;
use crate::measure::interval::Counts;
use crate::measure::latency::Latency;
use crate::measure::measurement::Measurement;
use crate::measure::seconds::{Live, Recorder, Seconds};
use crate::servers::mysql::{self, MysqlClient};
use crate::servers::spec::ServerKind;
use crate::servers::Endpoint;
use crate::workloads::pace::{Pace, PaceStats, Pacer, Until};
use crate::workloads::slap::sql::{self, SlapSql, Statement, SCHEMA};
use crate::workloads::{Ctx, Driver};

impl Driver for SlapSpec {
    fn family(&self) -> ServerKind {
        ServerKind::Mysql
    }

    fn uses_engine(&self) -> bool {
        true
    }

    async fn run(&self, ctx: &Ctx<'_>) -> Result<Measurement> {
        run_iteration(
            &ctx.server.endpoint,
            self,
            ctx.engine.unwrap_or("InnoDB"),
            ctx.concurrency,
            ctx.warmup,
            ctx.length,
            ctx.live.clone(),
            &ctx.window,
            ctx.pace.as_ref(),
            &ctx.phase,
        )
        .await
    }
}

/// The percentile of the per-second lines (sysbench's `--percentile` default).
const SAMPLE_PERCENTILE: f64 = 95.0;

/// One iteration: prepare, optional warmup, measured phase.
#[allow(clippy::too_many_arguments)] // the parts of `Ctx` it uses, so tests can call it without a `Deployed`
pub async fn run_iteration(
    endpoint: &Endpoint,
    spec: &SlapSpec,
    engine: &str,
    concurrency: u32,
    warmup: Option<Length>,
    length: Length,
    live: Arc<AtomicU64>,
    window: &Window,
    pace: Option<&Pace>,
    phase: &Live,
) -> Result<Measurement> {
    let mut rng = SmallRng::from_os_rng();
    let sql = sql::generate(spec, engine, &mut rng).map_err(anyhow::Error::msg)?;
    let mut control = endpoint.connect(None).await?;
    let keys = prepare(&mut control, &sql, engine, &live).await?;
    let sql = Arc::new(sql);
    let keys = Arc::new(keys);

    let mut conns = open_clients(endpoint, concurrency, spec.commit > 0).await?;
    let mut warmup_samples = Vec::new();
    if let Some(w) = warmup {
        let started = Instant::now();
        let per_second = Seconds::new(started);
        let load = Load {
            length: w,
            pace,
            per_second: Some(&per_second),
        };
        let (back, _, _) =
            run_clients(conns, &sql, &keys, spec.commit, &load, live.clone()).await?;
        let seconds = started.elapsed().as_secs_f64();
        warmup_samples = per_second.samples(seconds, concurrency, SAMPLE_PERCENTILE);
        conns = back;
    }

    let before = mysql::status(&mut control).await?;
    window.open();
    let started = Instant::now();
    let per_second = Seconds::new(started);
    phase.set(&per_second);
    let load = Load {
        length,
        pace,
        per_second: Some(&per_second),
    };
    let (conns, results, open) = run_clients(conns, &sql, &keys, spec.commit, &load, live).await?;
    let seconds = started.elapsed().as_secs_f64();
    window.close();
    let after = mysql::status(&mut control).await?;
    let mut server = counters::delta(&before, &after);
    // The second SHOW GLOBAL STATUS counts itself in Questions.
    if let Some(q) = server.get_mut("Questions") {
        *q = q.saturating_sub(1);
    }
    for c in conns {
        let _ = c.disconnect().await;
    }
    let _ = control
        .query_drop(format!("DROP SCHEMA IF EXISTS {SCHEMA}"))
        .await;
    let _ = control.disconnect().await;

    let mut m = Measurement {
        seconds,
        server,
        samples: per_second.samples(seconds, concurrency, SAMPLE_PERCENTILE),
        warmup_samples,
        open,
        ..Measurement::default()
    };
    for r in results {
        let r = r?;
        m.queries += r.queries;
        m.errors += r.errors;
        m.commits += r.commits;
        m.latency.merge(&r.latency);
        if let Some(service) = &r.service {
            m.service.merge(service);
        }
        if m.first_error.is_none() {
            m.first_error = r.first_error;
        }
    }
    Ok(m)
}

/// Fresh schema and table, pre-populated; returns the key list when statements need keys.
/// Each pre-populating statement counts in `ops` (the stall watchdog's progress).
async fn prepare(
    conn: &mut Conn,
    sql: &SlapSql,
    engine: &str,
    ops: &AtomicU64,
) -> Result<Vec<String>> {
    let engines: Vec<(String, String)> = conn
        .query_map("SHOW ENGINES", |row: mysql_async::Row| {
            (
                row.get::<String, _>(0).unwrap_or_default(),
                row.get::<String, _>(1).unwrap_or_default(),
            )
        })
        .await?;
    let available: Vec<&str> = engines
        .iter()
        .filter(|(_, s)| s == "YES" || s == "DEFAULT")
        .map(|(e, _)| e.as_str())
        .collect();
    if !available.iter().any(|e| e.eq_ignore_ascii_case(engine)) {
        bail!(
            "storage engine `{engine}` is not available on this server; available: {}",
            available.join(", ")
        );
    }
    conn.query_drop(format!("DROP SCHEMA IF EXISTS {SCHEMA}"))
        .await?;
    conn.query_drop(format!("CREATE SCHEMA {SCHEMA}")).await?;
    conn.query_drop(format!("USE {SCHEMA}")).await?;
    conn.query_drop(&sql.create_table)
        .await
        .with_context(|| format!("failed: {}", sql.create_table))?;
    for stmt in &sql.preload {
        conn.query_drop(stmt)
            .await
            .context("failed to pre-populate t1")?;
        ops.fetch_add(1, Ordering::Relaxed);
    }
    match &sql.key_query {
        Some(q) => {
            let keys: Vec<String> = conn.query(q).await?;
            if keys.is_empty() {
                bail!("key load needs rows: preload_rows is 0");
            }
            Ok(keys)
        }
        None => Ok(Vec::new()),
    }
}

async fn open_clients(endpoint: &Endpoint, n: u32, no_autocommit: bool) -> Result<Vec<Conn>> {
    let futures = (0..n).map(|_| async {
        let mut c = endpoint.connect(Some(SCHEMA)).await?;
        if no_autocommit {
            c.query_drop("SET AUTOCOMMIT=0").await?;
        }
        anyhow::Ok(c)
    });
    futures_util::future::try_join_all(futures).await
}

struct ClientResult {
    queries: u64,
    errors: u64,
    commits: u64,
    first_error: Option<String>,
    latency: Latency,
    /// Open loop: from each statement's send to its reply.
    /// Open loop only (a touched histogram is 190 KB per client).
    service: Option<Latency>,
}

/// One phase's load: how long, open or closed loop, and where its seconds go (the measured
/// phase's).
struct Load<'a> {
    length: Length,
    pace: Option<&'a Pace>,
    per_second: Option<&'a Arc<Seconds>>,
}

/// Run every client to the end of its share (or the deadline, or the pacer's end); give the
/// connections back, with what the pacer saw in open loop.
async fn run_clients(
    conns: Vec<Conn>,
    sql: &Arc<SlapSql>,
    keys: &Arc<Vec<String>>,
    commit: u32,
    load: &Load<'_>,
    live: Arc<AtomicU64>,
) -> Result<(Vec<Conn>, Vec<Result<ClientResult>>, Option<PaceStats>)> {
    let n = conns.len() as u64;
    let length = load.length;
    let deadline = length.as_duration().map(|d| Instant::now() + d);
    let pacer = load.pace.map(|p| Pacer::start(p, length)).transpose()?;
    let handles: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(i, conn)| {
            let share = length.share(i, n as usize);
            let (sql, keys, live) = (sql.clone(), keys.clone(), live.clone());
            let rec = load.per_second.map(|s| s.recorder());
            let until = match &pacer {
                Some(p) => Until::Paced(p.tickets()),
                None => Until::Closed { share, deadline },
            };
            tokio::spawn(client(conn, sql, keys, commit, until, live, rec))
        })
        .collect();
    // Dropped before the clients end (the stall watchdog gave up on the iteration): stop
    // them, or they would go on loading the server under the next iteration.
    let _abort = AbortOnDrop(handles.iter().map(|h| h.abort_handle()).collect());
    let mut back = Vec::new();
    let mut results = Vec::new();
    for h in handles {
        match h.await {
            Ok((conn, r)) => {
                back.extend(conn);
                results.push(Ok(r));
            }
            Err(e) => results.push(Err(anyhow::anyhow!("client task failed: {e}"))),
        }
    }
    Ok((back, results, pacer.map(Pacer::finish)))
}

/// Aborts the client tasks when dropped (after they ended, aborting does nothing).
struct AbortOnDrop(Vec<tokio::task::AbortHandle>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for h in &self.0 {
            h.abort();
        }
    }
}

#[allow(clippy::too_many_arguments)] // the client's whole state; called from one place
async fn client(
    mut conn: Conn,
    sql: Arc<SlapSql>,
    keys: Arc<Vec<String>>,
    commit: u32,
    until: Until,
    live: Arc<AtomicU64>,
    mut rec: Option<Recorder>,
) -> (Option<Conn>, ClientResult) {
    let mut rng = SmallRng::from_os_rng();
    let mut r = ClientResult {
        queries: 0,
        errors: 0,
        commits: 0,
        first_error: None,
        latency: Latency::default(),
        service: None,
    };
    let mut done: u64 = 0;
    let mut since_commit = 0u32;
    let mut text_buf = String::with_capacity(256);
    let list = &sql.queries;
    // Each statement's class in the per-second lines: a SELECT reads, the rest write.
    let class: Vec<Counts> = list
        .iter()
        .map(|s| match s {
            Statement::Fixed(t) | Statement::WithKey(t) => t.starts_with("SELECT"),
        })
        .map(|select| match select {
            true => Counts::READ,
            false => Counts::WRITE,
        })
        .collect();
    loop {
        // The latency's origin: the intended start in open loop, the send in closed loop.
        let intended = match &until {
            Until::Closed { share, deadline } => {
                if share.is_some_and(|s| done >= s) || deadline.is_some_and(|d| Instant::now() >= d)
                {
                    break;
                }
                None
            }
            Until::Paced(t) => match t.next().await {
                Some(at) => Some(at),
                None => break,
            },
        };
        let i = (done % list.len() as u64) as usize;
        let stmt: &Statement = &list[i];
        let text = stmt.render_into(&keys, &mut rng, &mut text_buf);
        let t0 = Instant::now();
        let res = conn.query_drop(text).await;
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
                live.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                r.errors += 1;
                if let Some(rec) = rec.as_mut() {
                    rec.counts(end, &Counts::ERROR);
                }
                r.first_error.get_or_insert_with(|| e.to_string());
                if matches!(e, mysql_async::Error::Io(_) | mysql_async::Error::Driver(_)) {
                    // The connection is gone: this client stops, the others go on.
                    return (None, r);
                }
            }
        }
        if commit > 0 {
            since_commit += 1;
            if since_commit == commit {
                since_commit = 0;
                if conn.query_drop("COMMIT").await.is_ok() {
                    r.commits += 1;
                }
            }
        }
    }
    if commit > 0 && since_commit > 0 && conn.query_drop("COMMIT").await.is_ok() {
        r.commits += 1;
    }
    (Some(conn), r)
}
