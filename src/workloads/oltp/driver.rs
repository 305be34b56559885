//! One oltp iteration, on any SQL family: tables ready -> clients connected and statements
//! prepared -> warmup (discarded) -> server counters -> measured phase -> server counters.
//! The clients are blocking connections on OS threads (see worker.rs); the control
//! connection that reads the counters stays async. What differs between families (the
//! dialect, the load, when their counters are exact) is each family's `SqlFamily`, which
//! `ServerKind::with_sql` picks.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use anyhow::{Context, Result};

use super::family::sql_family;
use super::phase::{measurement, no_fatal, open_all, run_phase, service, SAMPLE_PERCENTILE};
use super::prepare::{self, Prepared};
use super::schema;
use super::unique::{Ids, TABLE};
use super::worker::Worker;
use crate::measure::cpu;
use crate::measure::measurement::{Loaded, Measurement};
use crate::servers::dataset::Layout;
use crate::servers::spec::ServerKind;
use crate::servers::sql::{FamilyFuture, SqlClient, SqlFamily, WithSql};
use crate::servers::Endpoint;
use crate::workloads::driver::range_rules;
use crate::workloads::oltp::spec::OltpSpec;
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
    sql_family(kind, Run { it, spec, engine })
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

/// One iteration on family `F`: the phases in the order the family's counters need
/// (`SqlFamily`), so that they count the measured phase's statements and nothing else.
async fn iteration<F: SqlFamily>(
    it: &Iteration<'_>,
    spec: &OltpSpec,
    engine: Option<&str>,
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
    let loaded = prepare_tables::<F>(endpoint, spec, engine, &live).await?;
    let seq = schema::takes_unique_ids(spec).then_some(TABLE);
    let settled = F::settle(endpoint, &spec.db, seq).await?;
    let spec = Arc::new(spec.clone());
    let threads = concurrency.max(1);
    let mut workers = blocking({
        let (endpoint, spec) = (endpoint.clone(), spec.clone());
        move || open_all::<F::Client>(&endpoint, &spec, threads)
    })
    .await?;
    let clients = client_ids(&mut workers);
    let (mut control, resumed) = F::control(settled, endpoint, &spec.db, &clients, seq).await?;
    let ids = resumed.map_or_else(Ids::fresh, |(offset, next)| Ids::at(offset, next));

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
        F::warmed_up(&mut control, seq, ids.taken()).await?;
        let (back, got, seconds, _) = ran?;
        warmup_samples = got.samples(seconds, threads, SAMPLE_PERCENTILE);
        workers = back;
    }

    // The connects, prepares and warm-up counted before the opening read.
    let (workers, flushed) = blocking(move || flush::<F>(workers)).await?;
    let before = F::before(&mut control, flushed).await?;
    let cpu0 = cpu::process_seconds();
    let stop = cancel.flag();
    window.open();
    let phase_ids = ids.clone();
    let ran =
        blocking(move || run_phase(workers, phase_ids, length, pace, live, stop, phase)).await;
    window.close();
    let cpu1 = cpu::process_seconds();
    let ran = match (F::COUNTED_AT_EXIT, ran) {
        // Closed first where a client is counted at its exit: each sends what it has left.
        (true, Ok((workers, got, seconds, open))) => drop_clients(workers)
            .await
            .map(|()| (Vec::new(), got, seconds, open)),
        (_, ran) => ran,
    };
    let after = F::after(&mut control).await;
    // Kept after the counters were read: the UPDATE is not the measured phase's work.
    if let Some(seq) = seq {
        F::keep(&mut control, endpoint, &spec.db, seq, ids.taken()).await?;
    }
    let (mut workers, got, seconds, open) = ran?;
    let server = F::measured(&before, &after?, window.server_reads());
    let clients = client_ids(&mut workers);
    drop_clients(workers).await?;
    F::close_control(control, &clients).await;

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
