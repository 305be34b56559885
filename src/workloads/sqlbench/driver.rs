//! One iteration: a fresh schema, the chosen groups' operations in order on one
//! connection, each timed and counted, and the schema dropped at the end.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, OptsBuilder};

use super::groups;
use super::session::{RowCheck, Session};
use super::{Group, SqlbenchSpec, Transport};
use crate::measure::cgroup::Window;
use crate::measure::measurement::Measurement;
use crate::measure::seconds::Seconds;
use crate::servers::family::short_socket_path;
use crate::servers::mysql::{self, MysqlClient};
use crate::servers::spec::ServerKind;
use crate::servers::Deployed;
use crate::workloads::{Ctx, Driver, Facts, Problem};

/// The schema the suite creates and drops.
pub(crate) const SCHEMA: &str = "rmatrix_sqlbench";

impl Driver for SqlbenchSpec {
    fn families(&self) -> &'static [ServerKind] {
        &[ServerKind::Mysql]
    }

    fn uses_engine(&self) -> bool {
        true
    }

    fn runs_for_length(&self) -> bool {
        false
    }

    /// Its operations' counters are snapshots around each one (operations.csv).
    fn reads_server_seconds(&self) -> bool {
        false
    }

    fn transport(&self) -> &'static str {
        match self.transport {
            Transport::Unix => "unix socket",
            Transport::Tcp => "tcp",
        }
    }

    fn check(&self, facts: &Facts) -> Result<(), Problem> {
        if facts.pace.is_some() {
            return Err(Problem::at(
                "",
                "sql-bench's suite runs its operations one after another on one connection: \
                 it has no open-loop mode; remove `load.rate` or exclude this workload",
            ));
        }
        self.validate()?;
        one_connection(facts)?;
        self.socket_reachable(facts)
    }

    fn schema_rules() -> Vec<crate::workloads::SchemaRule> {
        SqlbenchSpec::validate_rules()
    }

    async fn run(&self, ctx: &Ctx<'_>) -> Result<Measurement> {
        let engine = ctx.engine.unwrap_or("InnoDB");
        let suite = run_suite(ctx.server, self, engine, ctx.live.clone(), &ctx.window);
        Ok(suite.await?.measurement)
    }
}

impl SqlbenchSpec {
    /// `transport: unix` (the default) needs the socket of a container rmatrix starts on the
    /// host network: an external server's or a bridged one's is not shared with this host.
    fn socket_reachable(&self, facts: &Facts) -> Result<(), Problem> {
        if self.transport != Transport::Unix {
            return Ok(());
        }
        let why = match (facts.external.first(), facts.bridge) {
            (Some(server), _) => format!(
                "server `{}` is external and shares no socket with this host",
                crate::escape::terminal(server)
            ),
            (None, true) => {
                "on `network: bridge` no server shares its socket with this host".into()
            }
            (None, false) => return Ok(()),
        };
        Err(Problem::at(
            "transport",
            format!(
                "sql-bench connects through the server's unix socket (`transport: unix`, the \
                 default, as its host localhost does), but {why}: give `transport: tcp` \
                 (sql-bench's --tcpip, which caps test-connect's loops at 1000)"
            ),
        ))
    }
}

/// The suite runs whole, once per iteration, on one connection: other concurrency levels
/// would only repeat concurrency 1 under another name, and it has no warm-up or levels to
/// sweep. (`length` is the matrix's, required for every matrix; the suite does not read it.)
fn one_connection(facts: &Facts) -> Result<(), Problem> {
    let others: Vec<String> = (facts.concurrency.iter())
        .filter(|&&c| c != 1)
        .map(u32::to_string)
        .collect();
    if !others.is_empty() {
        return Err(Problem::in_matrix(
            "concurrency",
            format!(
                "sql-bench's suite runs on one connection: its cells at concurrency {} would \
                 repeat concurrency 1; give `concurrency: [1]`, or exclude those levels for \
                 this workload",
                others.join(", ")
            ),
        ));
    }
    if facts.until {
        return Err(Problem::in_matrix(
            "load.until",
            "sql-bench's suite has no load levels to sweep: remove `load.until`, or put the \
             workload in a matrix of its own",
        ));
    }
    if facts.warmup.is_some() {
        return Err(Problem::in_matrix(
            "warmup",
            "sql-bench's suite runs whole once per iteration, without a warm-up: remove \
             `warmup`, or put the workload in a matrix of its own",
        ));
    }
    Ok(())
}

/// What one run of the suite produced.
pub struct Suite {
    pub measurement: Measurement,
    /// Every table size checked (all matched, or the run failed).
    pub checks: Vec<RowCheck>,
    /// Groups left out: transactions on an engine without them, as sql-bench does.
    pub skipped: Vec<Group>,
    /// The suite connection's host as the server's process list shows it: `localhost`
    /// through the unix socket, `<address>:<port>` over TCP.
    pub client_host: String,
}

/// Run the suite once against `server`, creating tables with `engine` (a checked SQL
/// identifier). The Measurement covers the whole suite (setup included); its operations
/// hold one line per timed operation.
pub async fn run_suite(
    server: &Deployed,
    spec: &SqlbenchSpec,
    engine: &str,
    live: Arc<AtomicU64>,
    window: &Window,
) -> Result<Suite> {
    let (base, _socket_dir) = connection(server, spec.transport)?;
    let mut conn = Conn::new(base.clone())
        .await
        .with_context(|| format!("failed to connect to {:?}", server.endpoint))?;
    let client_host: Option<String> = conn
        .query_first("SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()")
        .await?;
    let transactional = engine_support(&mut conn, engine).await?;
    conn.query_drop(format!("DROP SCHEMA IF EXISTS {SCHEMA}"))
        .await?;
    conn.query_drop(format!("CREATE SCHEMA {SCHEMA}")).await?;
    conn.query_drop(format!("USE {SCHEMA}")).await?;
    let opts = Session::opts(OptsBuilder::from_opts(base).db_name(Some(SCHEMA)).into());
    let mut session = Session::new(conn, opts, live);
    let result = run_groups(&mut session, spec, engine, transactional, window)
        .await
        .map(|suite| Suite {
            client_host: client_host.unwrap_or_default(),
            ..suite
        });
    let mut conn = session.into_conn();
    let _ = conn
        .query_drop(format!("DROP SCHEMA IF EXISTS {SCHEMA}"))
        .await;
    let _ = conn.disconnect().await;
    result
}

async fn run_groups(
    session: &mut Session,
    spec: &SqlbenchSpec,
    engine: &str,
    transactional: bool,
    window: &Window,
) -> Result<Suite> {
    let before = session.status().await?;
    session.bookkeeping.clear();
    window.open();
    let started = Instant::now();
    let per_second = Seconds::new(started);
    session.record(per_second.recorder());
    let mut skipped = Vec::new();
    for &group in &spec.groups {
        if group == Group::Transactions && !transactional {
            skipped.push(group);
            continue;
        }
        // One group's statements at a time: a full-size group holds a few million.
        for op in groups::plan(group, spec, engine) {
            session.run(&op).await?;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    window.close();
    session.stop_recording();
    let after = mysql::status(session.conn()).await?;
    let mut server = mysql::measured(&before, &after, &[], 0);
    for (k, n) in &session.bookkeeping {
        if let Some(v) = server.get_mut(k) {
            *v = v.saturating_sub(*n);
        }
    }
    let measurement = Measurement {
        queries: session.statements,
        seconds,
        latency: std::mem::take(&mut session.latency),
        server,
        samples: per_second.samples(seconds, 1, SAMPLE_PERCENTILE),
        operations: std::mem::take(&mut session.operations),
        ..Measurement::default()
    };
    Ok(Suite {
        measurement,
        checks: std::mem::take(&mut session.checks),
        skipped,
        client_host: String::new(),
    })
}

/// Where the suite's connections go: the server's unix socket (sql-bench's default host
/// `localhost`), or TCP (`--tcpip`); with the handle that keeps a long socket path's
/// directory open while the suite runs.
fn connection(server: &Deployed, transport: Transport) -> Result<(Opts, Option<std::fs::File>)> {
    let endpoint = &server.endpoint;
    match (transport, &server.socket) {
        (Transport::Tcp, _) => Ok((endpoint.opts(None), None)),
        (Transport::Unix, Some(socket)) => {
            let (path, dir) = short_socket_path(socket)?;
            Ok((endpoint.socket_opts(&path, None), dir))
        }
        (Transport::Unix, None) => bail!(
            "this server shares no unix socket with this host (an external server, a bridge \
             network, or an engine on another host): give the sqlbench workload `transport: \
             tcp`"
        ),
    }
}

/// The percentile of the per-second lines (sysbench's `--percentile` default).
const SAMPLE_PERCENTILE: f64 = 95.0;

/// Whether `engine` is available, and whether it has transactions.
async fn engine_support(conn: &mut mysql_async::Conn, engine: &str) -> Result<bool> {
    let engines: Vec<(String, String, Option<String>)> = conn
        .query("SELECT ENGINE, SUPPORT, TRANSACTIONS FROM information_schema.ENGINES")
        .await?;
    let available: Vec<&(String, String, Option<String>)> = engines
        .iter()
        .filter(|(_, s, _)| s == "YES" || s == "DEFAULT")
        .collect();
    match available
        .iter()
        .find(|(e, _, _)| e.eq_ignore_ascii_case(engine))
    {
        Some((_, _, t)) => Ok(t.as_deref() == Some("YES")),
        None => bail!(
            "storage engine `{engine}` is not available on this server; available: {}",
            available
                .iter()
                .map(|(e, _, _)| e.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
