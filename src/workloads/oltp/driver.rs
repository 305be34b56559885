//! One oltp iteration, on any SQL family: tables ready -> clients connected and statements
//! prepared -> the phases (`workloads::phases`: warmup, discarded -> server counters ->
//! measured phase -> server counters), the family's reads being `Oltp`'s hooks. The clients
//! are blocking connections on OS threads (see worker.rs); the control connection that
//! reads the counters stays async. What differs between families (the dialect, the load,
//! when their counters are exact) is each family's `SqlFamily`, which `ServerKind::with_sql`
//! picks.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use anyhow::{Context, Result};

use super::collector::Collected;
use super::phase::{measurement, no_fatal, open_all, run_phase, service, Common};
use super::prepare::{self, Prepared};
use super::schema;
use super::unique::{Ids, TABLE};
use super::worker::Worker;
use crate::measure::counters::Status;
use crate::measure::cpu;
use crate::measure::measurement::{Loaded, Measurement};
use crate::servers::dataset::Layout;
use crate::servers::spec::ServerKind;
use crate::servers::sql::{FamilyFuture, SqlClient, SqlFamily, WithSql};
use crate::servers::Endpoint;
use crate::workloads::driver::range_rules;
use crate::workloads::oltp::spec::OltpSpec;
use crate::workloads::phases::{Begin, Load, Phases, Ran};
use crate::workloads::sql_family::sql_family;
use crate::workloads::threads::{blocking, Cancel};
use crate::workloads::{Ctx, Driver, Facts, Iteration, Problem, SchemaRule};
use serde_json::json;

/// The highest extra percentile: the maximum.
const MAX_PERCENTILE: f64 = 100.0;

impl Driver for OltpSpec {
    /// Every SQL family.
    fn families(&self) -> &'static [ServerKind] {
        ServerKind::sql_families()
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
            signature: schema::signature(self, Some(engine)),
            rows: u64::from(self.tables) * u64::from(schema::initial_rows(self)),
            load_rows_per_s: None,
        })
    }

    async fn prepare(
        &self,
        kind: ServerKind,
        endpoint: &Endpoint,
        engine: Option<&str>,
        live: &AtomicU64,
    ) -> Result<()> {
        prepare::ensure(kind, endpoint, self, engine, live)
            .await
            .context("failed to prepare the sbtest tables")?;
        Ok(())
    }

    async fn run(&self, ctx: &Ctx<'_>) -> Result<Measurement> {
        let it = ctx.iteration()?;
        // Bound first: as a tail expression the future would outlive `it` (edition 2021).
        let measured = run_iteration(ctx.kind, &it, self, ctx.engine).await;
        measured
    }
}

/// One iteration on a server of `kind`, in `engine` (else `spec`'s) where the family has
/// storage engines.
pub fn run_iteration<'a>(
    kind: ServerKind,
    it: &'a Iteration<'a>,
    spec: &'a OltpSpec,
    engine: Option<&'a str>,
) -> FamilyFuture<'a, Result<Measurement>> {
    sql_family(kind, "oltp", Run { it, spec, engine })
}

/// An iteration, once the family is known.
struct Run<'a> {
    it: &'a Iteration<'a>,
    spec: &'a OltpSpec,
    engine: Option<&'a str>,
}

impl<'a> WithSql for Run<'a> {
    type Output = FamilyFuture<'a, Result<Measurement>>;

    fn with<F: SqlFamily>(self) -> Self::Output {
        let engine = F::engine(self.engine, &self.spec.mysql_storage_engine);
        Box::pin(iteration::<F>(self.it, self.spec, engine))
    }
}

/// One iteration on family `F`: the phases (`phases::Phases`) with the counters read in
/// the order the family needs (`SqlFamily`, `Oltp`), so that they count the measured
/// phase's statements and nothing else.
async fn iteration<F: SqlFamily>(
    it: &Iteration<'_>,
    spec: &OltpSpec,
    engine: Option<&str>,
) -> Result<Measurement> {
    let (endpoint, live) = (it.endpoint, it.live.clone());
    let loaded = prepare_tables::<F>(endpoint, spec, engine, &live).await?;
    let seq = schema::takes_unique_ids(spec).then_some(TABLE);
    let settled = F::settle(endpoint, &spec.db, seq).await?;
    let spec = Arc::new(spec.clone());
    let threads = it.concurrency.max(1);
    let mut workers = blocking({
        let (endpoint, spec) = (endpoint.clone(), spec.clone());
        move || open_all::<F::Client>(&endpoint, &spec, threads)
    })
    .await?;
    let clients = client_ids(&mut workers);
    let (control, resumed) = F::control(settled, endpoint, &spec.db, &clients, seq).await?;
    let ids = resumed.map_or_else(Ids::fresh, |(offset, next)| Ids::at(offset, next));

    // Dropped midway (the stall watchdog gave up on the iteration), this stops the client
    // threads at their next event: they would go on loading the server under the next one.
    let cancel = Cancel::default();
    let mut load = Oltp::<F> {
        control,
        endpoint,
        db: &spec.db,
        seq,
        ids,
        live,
        cancelled: cancel.flag(),
    };
    let done = Phases::of(it).run(&mut load, workers).await?;
    let ((before, cpu0), (after, cpu1)) = (done.before, done.after);
    let server = F::measured(&before, &after?, it.window.server_reads());
    let mut workers = done.clients;
    let clients = client_ids(&mut workers);
    drop_clients(workers).await?;
    F::close_control(load.control, &clients).await;

    // As in sysbench, an error that is neither ignorable nor a lost connection ends the run:
    // the numbers of the clients left would not be the cell's.
    let ran = done.measured;
    no_fatal(&ran.tally)?;
    let samples = ran.samples(threads);
    Ok(Measurement {
        samples,
        warmup_samples: (done.warmup.as_ref()).map_or_else(Vec::new, |w| w.samples(threads)),
        open: ran.open,
        service: service(&ran.tally),
        loaded,
        ..measurement(&spec, &ran.tally, ran.elapsed, server, cpu0.zip(cpu1))
    })
}

/// An iteration's phases on family `F`, with its control connection.
struct Oltp<'a, F: SqlFamily> {
    control: F::Control,
    endpoint: &'a Endpoint,
    db: &'a str,
    /// oltp_insert without auto_inc: the table of the `rand.unique()` sequence.
    seq: Option<&'static str>,
    ids: Ids,
    live: Arc<AtomicU64>,
    cancelled: Arc<AtomicBool>,
}

impl<F: SqlFamily> Load for Oltp<'_, F> {
    type Clients = Clients<F>;
    type Tally = Collected;
    /// The counters, and this process's CPU seconds, at the opening edge.
    type Before = (Status, Option<f64>);
    /// The counters (read after the phase's error, if any, is known), CPU seconds.
    type After = (Result<Status>, Option<f64>);

    async fn phase(
        &mut self,
        workers: Clients<F>,
        begin: Begin,
    ) -> Result<(Clients<F>, Ran<Collected>)> {
        let common = Common {
            ids: self.ids.clone(),
            live: self.live.clone(),
            cancelled: self.cancelled.clone(),
        };
        blocking(move || run_phase(workers, &begin, common)).await
    }

    async fn warmed_up(&mut self) -> Result<()> {
        F::warmed_up(&mut self.control, self.seq, self.ids.taken()).await
    }

    /// The connects, prepares and warm-up counted before the opening read.
    async fn before(&mut self, workers: Clients<F>) -> Result<(Clients<F>, Self::Before)> {
        let (workers, flushed) = blocking(move || flush::<F>(workers)).await?;
        let before = F::before(&mut self.control, flushed).await?;
        Ok((workers, (before, cpu::process_seconds())))
    }

    async fn after(
        &mut self,
        measured: &mut Result<(Clients<F>, Ran<Collected>)>,
    ) -> Result<Self::After> {
        let cpu = cpu::process_seconds();
        // Closed first where a client is counted at its exit: each sends what it has left.
        if let (true, Ok((workers, _))) = (F::COUNTED_AT_EXIT, &mut *measured) {
            if let Err(e) = drop_clients(std::mem::take(workers)).await {
                *measured = Err(e);
            }
        }
        let after = F::after(&mut self.control).await;
        // Kept after the counters were read: the UPDATE is not the measured phase's work.
        if let Some(seq) = self.seq {
            F::keep(
                &mut self.control,
                self.endpoint,
                self.db,
                seq,
                self.ids.taken(),
            )
            .await?;
        }
        Ok((after, cpu))
    }
}

/// The sbtest tables ready; what loading them took, when they were loaded.
async fn prepare_tables<F: SqlFamily>(
    endpoint: &Endpoint,
    spec: &OltpSpec,
    engine: Option<&str>,
    live: &AtomicU64,
) -> Result<Option<Loaded>> {
    let started = std::time::Instant::now();
    let loaded = prepare::ensure_on::<F>(endpoint, spec, engine, live)
        .await
        .context("failed to prepare the sbtest tables")?;
    Ok((loaded == Prepared::Loaded).then(|| Loaded {
        rows: u64::from(spec.tables) * u64::from(schema::initial_rows(spec)),
        seconds: started.elapsed().as_secs_f64(),
    }))
}

/// The server's ids of the clients' connections, where the family has them.
fn client_ids<C: SqlClient>(workers: &mut [Worker<C>]) -> Vec<u32> {
    (workers.iter_mut())
        .filter_map(|w| w.client().and_then(|c| c.id()))
        .collect()
}

/// An iteration's clients on family `F`.
type Clients<F> = Vec<Worker<<F as SqlFamily>::Client>>;

/// The clients' statistics sent (`SqlFamily::flush`), on a client thread.
fn flush<F: SqlFamily>(mut workers: Clients<F>) -> Result<(Clients<F>, F::Flushed)> {
    let clients = workers.iter_mut().filter_map(Worker::client).collect();
    let flushed = F::flush(clients)?;
    Ok((workers, flushed))
}

/// Close the clients' connections, on a client thread.
async fn drop_clients<C: SqlClient + 'static>(workers: Vec<Worker<C>>) -> Result<()> {
    blocking(move || {
        drop(workers);
        Ok(())
    })
    .await
}
