//! Running a slap cell: one connection prepares the schema, `concurrency` blocking clients (an
//! OS thread each, client.rs) run their share of the statements, and the server's counters
//! are read around the measured phase.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::client::{Client, ClientResult, Shared};
use super::SlapSpec;
use crate::input::Length;
use crate::measure::measurement::Measurement;
use crate::measure::seconds::{Live, Seconds};
use crate::servers::mysql::{self, MysqlClient};
use crate::servers::spec::ServerKind;
use crate::servers::Endpoint;
use crate::workloads::driver::range_rules;
use crate::workloads::pace::{Pace, PaceStats, Pacer, Until};
use crate::workloads::slap::sql::{self, SlapSql, SCHEMA};
use crate::workloads::threads::{self, blocking, Cancel};
use crate::workloads::{Ctx, Driver, Facts, Iteration, Problem, SchemaRule};

impl Driver for SlapSpec {
    fn families(&self) -> &'static [ServerKind] {
        &[ServerKind::Mysql]
    }

    fn uses_engine(&self) -> bool {
        true
    }

    fn check(&self, _: &Facts) -> Result<(), Problem> {
        Problem::bounded(&self.sizes())
    }

    /// The sizes' ranges, which do not depend on the values.
    fn schema_rules() -> Vec<SchemaRule> {
        range_rules(&SlapSpec::default().sizes())
    }

    async fn run(&self, ctx: &Ctx<'_>) -> Result<Measurement> {
        run_iteration(&ctx.iteration()?, self, ctx.engine.unwrap_or("InnoDB")).await
    }
}

/// The percentile of the per-second lines (sysbench's `--percentile` default).
const SAMPLE_PERCENTILE: f64 = 95.0;

/// One iteration: prepare, optional warmup, measured phase.
pub(crate) async fn run_iteration(
    it: &Iteration<'_>,
    spec: &SlapSpec,
    engine: &str,
) -> Result<Measurement> {
    let Iteration {
        endpoint,
        concurrency,
        warmup,
        length,
        window,
        pace,
        phase,
        ..
    } = *it;
    let live = it.live.clone();
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
        window.warmup_open();
        let warmed = blocking(move || run_phase(clients, &load, w, pace, None)).await;
        window.warmup_close();
        let (back, done) = warmed?;
        warmup_samples = done
            .seconds
            .samples(done.elapsed, concurrency, SAMPLE_PERCENTILE);
        clients = back;
    }

    let before = mysql::status(&mut control).await?;
    window.open();
    let (clients, done) = blocking({
        let (load, pace, phase) = (load.clone(), pace.cloned(), phase.cloned());
        move || run_phase(clients, &load, length, pace, phase.as_deref())
    })
    .await?;
    window.close();
    let after = mysql::status(&mut control).await?;
    let server = mysql::measured(&before, &after, &[], window.server_reads());
    close(clients, control).await?;

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
    merge_clients(&mut m, done.results);
    Ok(m)
}

/// Drop the clients (on a blocking thread: each says goodbye to the server), then the
/// schema, and close the control connection.
async fn close(clients: Vec<Client>, mut control: Conn) -> Result<()> {
    blocking(move || {
        drop(clients);
        Ok(())
    })
    .await?;
    let _ = control
        .query_drop(format!("DROP SCHEMA IF EXISTS {SCHEMA}"))
        .await;
    let _ = control.disconnect().await;
    Ok(())
}

/// The clients' counts and latencies added into `m`; the first error kept.
fn merge_clients(m: &mut Measurement, results: Vec<ClientResult>) {
    for r in results {
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
/// its own thread; give the clients back.
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
    let mut pacer = None;
    let ran = threads::gated(
        "slap",
        clients,
        // What the threads read once the gate opens: the phase's seconds, deadline and pacer.
        |start| {
            pacer = pace.as_ref().map(|p| Pacer::start(p, length)).transpose()?;
            let seconds = Seconds::new(start);
            if let Some(l) = shown {
                l.set(&seconds);
            }
            Ok((
                seconds,
                length.as_duration().map(|d| start + d),
                pacer.as_ref().map(Pacer::tickets),
            ))
        },
        |i, mut client: Client, phase| {
            let r = match phase {
                Some((seconds, deadline, tickets)) => {
                    let until = match tickets {
                        Some(t) => Until::Paced(t.clone()),
                        None => Until::Closed {
                            share: length.share(i, n),
                            deadline: *deadline,
                        },
                    };
                    client.run(&shared, &until, Some(seconds.recorder()))
                }
                None => ClientResult::default(),
            };
            (client, r)
        },
        |_, _| (),
    );
    // The phase began (a state) unless a thread could not start or the pacer failed.
    let seconds = match (ran.error, ran.panicked, ran.state) {
        (None, 0, Some((seconds, _, _))) => seconds,
        (Some(e), _, _) => return Err(e.context(format!("failed to run {n} client threads"))),
        (None, k, _) => bail!("failed to run {n} client threads: {k} of them panicked"),
    };
    let (back, results) = ran.outputs.into_iter().unzip();
    Ok((
        back,
        Done {
            results,
            seconds,
            elapsed: ran.elapsed,
            open: pacer.map(Pacer::finish),
        },
    ))
}
