//! One oltp iteration: tables ready -> clients connected and statements prepared ->
//! warmup (discarded) -> server counters -> measured phase -> server counters. The clients
//! are blocking connections on OS threads (see worker.rs); the control connection that reads
//! the counters stays async.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use anyhow::{Context, Result};

use super::my_session::MySession;
use super::phase::{measurement, no_fatal, open_all, run_phase, service, SAMPLE_PERCENTILE};
use super::prepare;
use super::schema;
use super::unique::{self, Ids};
use super::worker::Worker;
use crate::measure::cpu;
use crate::measure::measurement::{Loaded, Measurement};
use crate::servers::dataset::Layout;
use crate::servers::mysql::{self, MysqlClient};
use crate::servers::spec::ServerKind;
use crate::servers::Endpoint;
use crate::workloads::driver::range_rules;
use crate::workloads::oltp::spec::OltpSpec;
use crate::workloads::threads::{blocking, Cancel};
use crate::workloads::{Ctx, Driver, Facts, Iteration, Problem, SchemaRule};
use mysql_async::Conn;
use serde_json::json;

/// The highest extra percentile: the maximum.
const MAX_PERCENTILE: f64 = 100.0;

impl Driver for OltpSpec {
    fn families(&self) -> &'static [ServerKind] {
        &[ServerKind::Mysql, ServerKind::Postgres]
    }

    fn check(&self, _: &Facts) -> Result<(), Problem> {
        Problem::bounded(&self.sizes())?;
        self.fractions().map_err(|(at, msg)| Problem::at(at, msg))?;
        if let Some(i) = self
            .percentiles
            .iter()
            .position(|p| !(p.is_finite() && *p > 0.0 && *p <= MAX_PERCENTILE))
        {
            return Err(Problem::at(
                &format!("percentiles[{i}]"),
                format!(
                    "percentile {} is not between 0 and 100 (e.g. 99.9)",
                    self.percentiles[i]
                ),
            ));
        }
        use crate::input::untrusted::sql_identifier;
        sql_identifier("database", &self.db).map_err(|msg| Problem::at("db", msg))?;
        sql_identifier("storage engine", &self.mysql_storage_engine)
            .map_err(|msg| Problem::at("mysql_storage_engine", msg))
    }

    /// The sizes' ranges (which do not depend on the values), the fractions', the
    /// percentiles' and the names written into SQL.
    fn schema_rules() -> Vec<SchemaRule> {
        use crate::input::patterns::sql_identifier;
        let mut rules = range_rules(&OltpSpec::default().sizes());
        rules.extend(OltpSpec::fraction_rules());
        let percentile = json!({"exclusiveMinimum": 0, "maximum": MAX_PERCENTILE});
        rules.push(("percentiles", json!({"items": percentile})));
        rules.push(("db", sql_identifier()));
        rules.push(("mysql_storage_engine", sql_identifier()));
        rules
    }

    fn data_layout(&self, engine: Option<&str>) -> Option<Layout> {
        let engine = engine.unwrap_or(&self.mysql_storage_engine);
        Some(Layout {
            db: self.db.clone(),
            signature: schema::signature(self, engine),
            rows: u64::from(self.tables) * u64::from(schema::initial_rows(self)),
        })
    }

    async fn prepare(
        &self,
        kind: ServerKind,
        endpoint: &Endpoint,
        engine: Option<&str>,
        live: &AtomicU64,
    ) -> Result<()> {
        if kind == ServerKind::Postgres {
            super::pg::prepare::ensure(endpoint, self, live)
                .await
                .context("failed to prepare the sbtest tables")?;
            return Ok(());
        }
        let engine = engine.unwrap_or(&self.mysql_storage_engine);
        prepare::ensure(endpoint, self, engine, live)
            .await
            .context("failed to prepare the sbtest tables")?;
        Ok(())
    }

    async fn run(&self, ctx: &Ctx<'_>) -> Result<Measurement> {
        if ctx.kind == ServerKind::Postgres {
            // No storage engine there: `mysql_storage_engine` is sysbench's MySQL option.
            return super::pg::run::run_iteration(&ctx.iteration()?, self).await;
        }
        let engine = ctx.engine.unwrap_or(&self.mysql_storage_engine);
        run_iteration(&ctx.iteration()?, self, engine).await
    }
}

pub async fn run_iteration(
    it: &Iteration<'_>,
    spec: &OltpSpec,
    engine: &str,
) -> Result<Measurement> {
    let Iteration {
        endpoint,
        concurrency,
        warmup,
        length,
        window,
        pace,
        ..
    } = *it;
    let (live, phase) = (it.live.clone(), it.phase.cloned());
    let loaded = prepare_tables(endpoint, spec, engine, &live).await?;
    let spec = Arc::new(spec.clone());
    let threads = concurrency.max(1);
    let mut workers = blocking({
        let (endpoint, spec) = (endpoint.clone(), spec.clone());
        move || open_all::<MySession>(&endpoint, &spec, threads)
    })
    .await?;
    let mut control = endpoint.connect(Some(&spec.db)).await?;
    mysql::quits::settle(&mut control, &connection_ids(&mut workers)).await;
    let ids = match schema::takes_unique_ids(&spec) {
        true => unique::resume(&mut control).await?,
        false => Ids::fresh(),
    };

    // Dropped midway (the stall watchdog gave up on the iteration), this stops the client
    // threads at their next event: they would go on loading the server under the next one.
    let cancel = Cancel::default();
    let pace = pace.cloned();
    let mut warmup_samples = Vec::new();
    if let Some(w) = warmup {
        let (live, stop, pace, phase_ids) =
            (live.clone(), cancel.flag(), pace.clone(), ids.clone());
        window.warmup_open();
        let ran = blocking(move || run_phase(workers, phase_ids, w, pace, live, stop, None)).await;
        window.warmup_close();
        keep_ids(&mut control, &spec, &ids).await?;
        let (back, got, seconds, _) = ran?;
        warmup_samples = got.samples(seconds, threads, SAMPLE_PERCENTILE);
        workers = back;
    }

    let before = mysql::status(&mut control).await?;
    let cpu0 = cpu::process_seconds();
    let stop = cancel.flag();
    window.open();
    let phase_ids = ids.clone();
    let ran =
        blocking(move || run_phase(workers, phase_ids, length, pace, live, stop, phase)).await;
    window.close();
    let cpu1 = cpu::process_seconds();
    let after = mysql::status(&mut control).await;
    // Kept after the counters were read: the UPDATE is not the measured phase's work.
    keep_ids(&mut control, &spec, &ids).await?;
    let (workers, got, seconds, open) = ran?;
    let after = after?;
    // Counters that moved, and always the ones compared (and rollbacks, which the
    // deadlock accounting reads).
    let server = mysql::measured(&before, &after, &["Com_rollback"], window.server_reads());
    close_clients(workers, control).await?;

    // As in sysbench, an error that is neither ignorable nor a lost connection ends the run:
    // the numbers of the clients left would not be the cell's.
    no_fatal(&got)?;
    let service = service(&got);
    Ok(Measurement {
        samples: got.samples(seconds, threads, SAMPLE_PERCENTILE),
        warmup_samples,
        open,
        service,
        loaded,
        ..measurement(&spec, &got, seconds, server, cpu0.zip(cpu1))
    })
}

/// The sbtest tables ready; what loading them took, when they were loaded.
async fn prepare_tables(
    endpoint: &Endpoint,
    spec: &OltpSpec,
    engine: &str,
    live: &AtomicU64,
) -> Result<Option<Loaded>> {
    let started = std::time::Instant::now();
    let loaded = prepare::ensure(endpoint, spec, engine, live)
        .await
        .context("failed to prepare the sbtest tables")?;
    Ok((loaded == prepare::Prepared::Loaded).then(|| Loaded {
        rows: u64::from(spec.tables) * u64::from(schema::initial_rows(spec)),
        seconds: started.elapsed().as_secs_f64(),
    }))
}

/// The server's ids of the clients' connections.
fn connection_ids(workers: &mut [Worker<MySession>]) -> Vec<u32> {
    (workers.iter_mut())
        .filter_map(|w| w.session().map(|s| s.connection_id()))
        .collect()
}

/// Drop the clients and wait until the server has let them go, then close the control
/// connection. Dropping a client sends COM_QUIT without waiting, and the server counts a
/// COM_QUIT in Questions: its late quits would land in the next iteration's counters.
async fn close_clients(mut workers: Vec<Worker<MySession>>, mut control: Conn) -> Result<()> {
    let ids = connection_ids(&mut workers);
    blocking(move || {
        drop(workers);
        Ok(())
    })
    .await?;
    mysql::wait_disconnected(&mut control, &ids).await;
    mysql::quits::close(control).await;
    Ok(())
}

/// After every phase, even one that failed: the indexes its workers took are used.
async fn keep_ids(control: &mut mysql_async::Conn, spec: &OltpSpec, ids: &Ids) -> Result<()> {
    match schema::takes_unique_ids(spec) {
        true => unique::keep(control, ids).await,
        false => Ok(()),
    }
}
