//! Running a slap cell: one connection prepares the schema, `concurrency` blocking clients (an
//! OS thread each, client.rs) run their share of the statements, and the server's counters
//! are read around the measured phase.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::client::{Client, ClientResult, Shared};
use super::SlapSpec;
use crate::input::Length;
use crate::measure::cgroup::Window;
use crate::measure::counters;
use crate::measure::measurement::Measurement;
use crate::measure::seconds::{Live, Seconds};
use crate::servers::mysql::{self, MysqlClient};
use crate::servers::spec::ServerKind;
use crate::servers::Endpoint;
use crate::workloads::pace::{Pace, PaceStats, Pacer, Tickets, Until};
use crate::workloads::slap::sql::{self, SlapSql, SCHEMA};
use crate::workloads::threads::{blocking, Cancel};
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
    phase: &Arc<Live>,
) -> Result<Measurement> {
    let mut rng = SmallRng::from_os_rng();
    let sql = sql::generate(spec, engine, &mut rng).map_err(anyhow::Error::msg)?;
    let mut control = endpoint.connect(None).await?;
    let keys = prepare(&mut control, &sql, engine, &live).await?;
    let cancel = Cancel::default();
    let load = Arc::new(Load {
        sql,
        keys,
        commit: spec.commit,
        live,
        cancelled: cancel.flag(),
    });

    let mut clients = blocking({
        let (endpoint, no_autocommit) = (endpoint.clone(), spec.commit > 0);
        move || open_all(&endpoint, concurrency, no_autocommit)
    })
    .await?;
    let mut warmup_samples = Vec::new();
    if let Some(w) = warmup {
        let (load, pace) = (load.clone(), pace.cloned());
        let (back, done) = blocking(move || run_phase(clients, &load, w, pace, None)).await?;
        warmup_samples = done
            .seconds
            .samples(done.elapsed, concurrency, SAMPLE_PERCENTILE);
        clients = back;
    }

    let before = mysql::status(&mut control).await?;
    window.open();
    let (clients, done) = blocking({
        let (load, pace, phase) = (load.clone(), pace.cloned(), phase.clone());
        move || run_phase(clients, &load, length, pace, Some(&phase))
    })
    .await?;
    window.close();
    let after = mysql::status(&mut control).await?;
    let mut server = counters::delta(&before, &after);
    // The second SHOW GLOBAL STATUS counts itself in Questions.
    if let Some(q) = server.get_mut("Questions") {
        *q = q.saturating_sub(1);
    }
    blocking(move || {
        drop(clients);
        Ok(())
    })
    .await?;
    let _ = control
        .query_drop(format!("DROP SCHEMA IF EXISTS {SCHEMA}"))
        .await;
    let _ = control.disconnect().await;

    let mut m = Measurement {
        seconds: done.elapsed,
        server,
        samples: done
            .seconds
            .samples(done.elapsed, concurrency, SAMPLE_PERCENTILE),
        warmup_samples,
        open: done.open,
        ..Measurement::default()
    };
    for r in done.results {
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

/// What the clients of every phase share.
struct Load {
    sql: SlapSql,
    keys: Vec<String>,
    commit: u32,
    live: Arc<AtomicU64>,
    cancelled: Arc<AtomicBool>,
}

/// Connect `n` clients in parallel.
fn open_all(endpoint: &Endpoint, n: u32, no_autocommit: bool) -> Result<Vec<Client>> {
    std::thread::scope(|s| {
        let opening: Vec<_> = (0..n)
            .map(|_| s.spawn(|| Client::open(endpoint, no_autocommit)))
            .collect();
        let mut clients = Vec::with_capacity(n as usize);
        for h in opening {
            let opened = h
                .join()
                .map_err(|_| anyhow::anyhow!("a client thread panicked while connecting"))?;
            clients.push(opened.context("failed to open the client connections")?);
        }
        Ok(clients)
    })
}

/// What one phase gave: each client's totals, its seconds, its wall time, what the pacer saw.
struct Done {
    results: Vec<ClientResult>,
    seconds: Arc<Seconds>,
    elapsed: f64,
    open: Option<PaceStats>,
}

/// Run every client to the end of its share (or the deadline, or the pacer's end), each on
/// its own thread; give the clients back. The clock starts once every thread exists, so
/// starting 512 threads is not measured.
fn run_phase(
    clients: Vec<Client>,
    load: &Load,
    length: Length,
    pace: Option<Pace>,
    shown: Option<&Live>,
) -> Result<(Vec<Client>, Done)> {
    let n = clients.len();
    let shared = Shared {
        sql: &load.sql,
        keys: &load.keys,
        commit: load.commit,
        live: &load.live,
        cancelled: &load.cancelled,
    };
    // What the threads read once the gate opens: the phase's seconds, deadline and pacer.
    let started: OnceLock<(Arc<Seconds>, Option<Instant>, Option<Tickets>)> = OnceLock::new();
    let gate = RwLock::new(());
    std::thread::scope(|s| {
        let closed = gate.write().unwrap_or_else(|e| e.into_inner());
        let mut spawned = Vec::with_capacity(n);
        let mut spawn_error = None;
        for (i, mut client) in clients.into_iter().enumerate() {
            let (started, gate, shared) = (&started, &gate, &shared);
            let thread = std::thread::Builder::new()
                .name(format!("slap-{i}"))
                .spawn_scoped(s, move || {
                    drop(gate.read());
                    let r = match started.get() {
                        Some((seconds, deadline, tickets)) => {
                            let until = match tickets {
                                Some(t) => Until::Paced(t.clone()),
                                None => Until::Closed {
                                    share: length.share(i, n),
                                    deadline: *deadline,
                                },
                            };
                            client.run(shared, &until, Some(seconds.recorder()))
                        }
                        None => ClientResult::default(),
                    };
                    (client, r)
                });
            match thread {
                Ok(h) => spawned.push(h),
                Err(e) => {
                    spawn_error = Some(anyhow::Error::from(e));
                    break;
                }
            }
        }
        let start = Instant::now();
        let seconds = Seconds::new(start);
        let mut pacer = None;
        if spawn_error.is_none() {
            match pace.as_ref().map(|p| Pacer::start(p, length)).transpose() {
                Ok(p) => pacer = p,
                Err(e) => spawn_error = Some(e.into()),
            }
        }
        if spawn_error.is_none() {
            let deadline = length.as_duration().map(|d| start + d);
            let _ = started.set((
                seconds.clone(),
                deadline,
                pacer.as_ref().map(Pacer::tickets),
            ));
            if let Some(l) = shown {
                l.set(&seconds);
            }
        }
        drop(closed);
        let mut back = Vec::with_capacity(n);
        let mut results = Vec::with_capacity(n);
        for h in spawned {
            match h.join() {
                Ok((client, r)) => {
                    back.push(client);
                    results.push(r);
                }
                Err(_) => {
                    spawn_error.get_or_insert(anyhow::anyhow!("a client thread panicked"));
                }
            }
        }
        let elapsed = start.elapsed().as_secs_f64();
        let open = pacer.map(Pacer::finish);
        match spawn_error {
            Some(e) => Err(e.context(format!("failed to run {n} client threads"))),
            None => Ok((
                back,
                Done {
                    results,
                    seconds,
                    elapsed,
                    open,
                },
            )),
        }
    })
}
