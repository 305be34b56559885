//! Running a slap cell: one connection prepares the schema, `concurrency` blocking clients (an
//! OS thread each, client.rs) run their share of the statements through the phases
//! (`workloads::phases`), and the server's counters are read around the measured one.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::client::{Client, ClientResult, Shared};
use super::SlapSpec;
use crate::measure::counters::Status;
use crate::measure::measurement::Measurement;
use crate::servers::mysql::{self, MysqlClient};
use crate::servers::spec::ServerKind;
use crate::servers::Endpoint;
use crate::workloads::driver::range_rules;
use crate::workloads::phases::{self, Begin, Load, Phases, Ran};
use crate::workloads::slap::sql::{self, SlapSql, SCHEMA};
use crate::workloads::threads::{blocking, Cancel};
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

/// One iteration: prepare, then the phases (`phases::Phases`) with the server's counters
/// read around the measured one.
pub(crate) async fn run_iteration(
    it: &Iteration<'_>,
    spec: &SlapSpec,
    engine: &str,
) -> Result<Measurement> {
    let live = it.live.clone();
    let mut rng = SmallRng::from_os_rng();
    let sql = sql::generate(spec, engine, &mut rng).map_err(anyhow::Error::msg)?;
    let mut control = it.endpoint.connect(None).await?;
    let keys = prepare(&mut control, &sql, engine, &live).await?;
    let cancel = Cancel::default();
    let common = Arc::new(Common {
        sql,
        keys,
        commit: spec.commit,
        live,
        cancelled: cancel.flag(),
    });
    let clients = blocking({
        let (endpoint, n, no_autocommit) = (it.endpoint.clone(), it.concurrency, spec.commit > 0);
        move || open_all(&endpoint, n, no_autocommit)
    })
    .await?;
    let mut load = Slap { common, control };
    let done = Phases::of(it).run(&mut load, clients).await?;
    let server = mysql::measured(&done.before, &done.after, &[], it.window.server_reads());
    close(done.clients, load.control).await?;

    let mut m = Measurement {
        seconds: done.measured.elapsed,
        server,
        samples: done.measured.samples(it.concurrency),
        warmup_samples: (done.warmup.as_ref()).map_or_else(Vec::new, |w| w.samples(it.concurrency)),
        open: done.measured.open,
        ..Measurement::default()
    };
    merge_clients(&mut m, done.measured.tally);
    Ok(m)
}

/// The clients' phases, and the server's counters read around the measured one on the
/// control connection.
struct Slap {
    common: Arc<Common>,
    control: Conn,
}

impl Load for Slap {
    type Clients = Vec<Client>;
    type Tally = Vec<ClientResult>;
    type Before = Status;
    type After = Status;

    async fn phase(
        &mut self,
        clients: Vec<Client>,
        begin: Begin,
    ) -> Result<(Vec<Client>, Ran<Vec<ClientResult>>)> {
        let common = self.common.clone();
        blocking(move || run_phase(clients, &common, &begin)).await
    }

    async fn before(&mut self, clients: Vec<Client>) -> Result<(Vec<Client>, Status)> {
        Ok((clients, mysql::status(&mut self.control).await?))
    }

    async fn after(
        &mut self,
        _: &mut Result<(Vec<Client>, Ran<Vec<ClientResult>>)>,
    ) -> Result<Status> {
        mysql::status(&mut self.control).await
    }
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
struct Common {
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

/// Run every client to the end of its share (or the deadline, or the pacer's end), each on
/// its own thread; give the clients back.
fn run_phase(
    clients: Vec<Client>,
    common: &Common,
    begin: &Begin,
) -> Result<(Vec<Client>, Ran<Vec<ClientResult>>)> {
    let n = clients.len();
    let shared = Shared {
        sql: &common.sql,
        keys: &common.keys,
        commit: common.commit,
        live: &common.live,
        cancelled: &common.cancelled,
    };
    let ran = phases::on_threads("slap", clients, begin, |i, mut client: Client, started| {
        let r = client.run(&shared, &started.until(i), Some(started.seconds.recorder()));
        (client, r)
    });
    match ran {
        Err(e) => Err(e.context(format!("failed to run {n} client threads"))),
        Ok((_, k)) if k > 0 => bail!("failed to run {n} client threads: {k} of them panicked"),
        Ok((ran, _)) => Ok(ran.unzip()),
    }
}
