//! Running a tpcc cell on any SQL family: the database ready (`prepare`), one terminal per
//! connection with its home warehouse, the phases (`workloads::phases`) with the family's
//! counters read around the measured one, NOPM from the schema before and after it, and the
//! consistency conditions checked at the end.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use anyhow::{Context, Result};

use super::check;
use super::mix::Txn;
use super::prepare::{self, seeded};
use super::spec::{Think, TpccSpec};
use super::terminal::{ByType, Desk, Tally};
use super::txn::{Sent, Session, Terminal};
use crate::input::untrusted::sql_identifier;
use crate::measure::counters::Status;
use crate::measure::cpu;
use crate::measure::latency::Latency;
use crate::measure::measurement::{Measurement, PerMinute};
use crate::measure::operation::Operation;
use crate::servers::dataset::Layout;
use crate::servers::spec::ServerKind;
use crate::servers::sql::{FamilyFuture, SqlClient, SqlFamily, WithSql};
use crate::servers::Endpoint;
use crate::workloads::driver::range_rules;
use crate::workloads::phases::{on_threads, Begin, Load, Phases, Ran};
use crate::workloads::sql_family::sql_family;
use crate::workloads::threads::{blocking, Cancel};
use crate::workloads::{Ctx, Driver, Facts, Iteration, Problem, SchemaRule};

impl Driver for TpccSpec {
    /// Every SQL family.
    fn families(&self) -> &'static [ServerKind] {
        ServerKind::sql_families()
    }

    /// With the specification's keying and think times a terminal may send nothing for
    /// minutes (a New-Order's 18 s keying and a think time of up to 120 s, clause 5.2.5.4),
    /// so no completed transaction for `stall_timeout` is no stall: the watchdog asks the
    /// server whether it answers instead, as for the external tools.
    fn counts_live(&self) -> bool {
        self.think == Think::None
    }

    fn check(&self, _: &Facts) -> Result<(), Problem> {
        Problem::bounded(&self.sizes())?;
        if let Some(msg) = self.weights_problem() {
            return Err(Problem::at("weights", msg));
        }
        sql_identifier("database", &self.db).map_err(|msg| Problem::at("db", msg))?;
        sql_identifier("storage engine", &self.mysql_storage_engine)
            .map_err(|msg| Problem::at("mysql_storage_engine", msg))
    }

    fn schema_rules() -> Vec<SchemaRule> {
        use crate::input::patterns::sql_identifier;
        // The weights' ranges are the Weights type's (a nested option has no rule here).
        let sizes = TpccSpec::default().sizes();
        let top: Vec<_> = sizes
            .into_iter()
            .filter(|(at, ..)| !at.contains('.'))
            .collect();
        let mut rules = range_rules(&top);
        rules.push(("db", sql_identifier()));
        rules.push(("mysql_storage_engine", sql_identifier()));
        rules
    }

    fn data_layout(&self, engine: Option<&str>) -> Option<Layout> {
        let engine = engine.unwrap_or(&self.mysql_storage_engine);
        Some(Layout {
            db: self.db.clone(),
            signature: format!("tpcc 1; warehouses {}; engine {engine}", self.warehouses),
            rows: u64::from(self.warehouses) * super::load::ROWS_PER_WAREHOUSE,
            load_rows_per_s: Some(super::load::ASSUMED_LOAD_ROWS_PER_S),
        })
    }

    async fn prepare(
        &self,
        kind: ServerKind,
        endpoint: &Endpoint,
        engine: Option<&str>,
        live: &AtomicU64,
    ) -> Result<()> {
        let job = Job {
            spec: self,
            endpoint,
            engine,
            live,
            ask: Ask::Prepare,
        };
        sql_family(kind, "tpcc", job).await.map(drop)
    }

    async fn run(&self, ctx: &Ctx<'_>) -> Result<Measurement> {
        let it = ctx.iteration()?;
        let job = Job {
            spec: self,
            endpoint: it.endpoint,
            engine: ctx.engine,
            live: &ctx.live,
            ask: Ask::Run(&it),
        };
        // Bound first: as a tail expression the future would outlive `it` (edition 2021).
        let measured = sql_family(ctx.kind, "tpcc", job).await;
        measured
    }
}

/// What is asked of a server's family: the database ready, and then one iteration, or the
/// consistency conditions.
struct Job<'a> {
    spec: &'a TpccSpec,
    endpoint: &'a Endpoint,
    engine: Option<&'a str>,
    live: &'a AtomicU64,
    ask: Ask<'a>,
}

enum Ask<'a> {
    Prepare,
    Run(&'a Iteration<'a>),
    Check,
}

/// The database of `spec` loaded on a server of `kind`, unless it is there already.
pub async fn prepare_database(
    kind: ServerKind,
    endpoint: &Endpoint,
    spec: &TpccSpec,
) -> Result<()> {
    let live = AtomicU64::new(0);
    let job = Job {
        spec,
        endpoint,
        engine: None,
        live: &live,
        ask: Ask::Prepare,
    };
    sql_family(kind, "tpcc", job).await.map(drop)
}

/// The consistency conditions 1-4 on the database of `spec` on a server of `kind`.
pub async fn check_database(kind: ServerKind, endpoint: &Endpoint, spec: &TpccSpec) -> Result<()> {
    let live = AtomicU64::new(0);
    let job = Job {
        spec,
        endpoint,
        engine: None,
        live: &live,
        ask: Ask::Check,
    };
    sql_family(kind, "tpcc", job).await.map(drop)
}

impl<'a> WithSql for Job<'a> {
    type Output = FamilyFuture<'a, Result<Measurement>>;

    fn with<F: SqlFamily>(self) -> Self::Output {
        Box::pin(async move {
            let engine = F::engine(self.engine, &self.spec.mysql_storage_engine);
            let (c, _) = prepare::ensure::<F>(self.endpoint, self.spec, engine, self.live)
                .await
                .context("failed to prepare the TPC-C database")?;
            match self.ask {
                Ask::Prepare => Ok(Measurement::default()),
                Ask::Run(it) => iteration::<F>(it, self.spec, c).await,
                Ask::Check => {
                    let (endpoint, spec) = (self.endpoint.clone(), self.spec.clone());
                    blocking(move || consistency::<F::Client>(&endpoint, &spec)).await?;
                    Ok(Measurement::default())
                }
            }
        })
    }
}

/// One iteration on family `F`, its database loaded with constants `c`.
async fn iteration<F: SqlFamily>(
    it: &Iteration<'_>,
    spec: &TpccSpec,
    c: super::rand::Constants,
) -> Result<Measurement> {
    let endpoint = it.endpoint;
    let settled = F::settle(endpoint, &spec.db, None).await?;
    let terminals = it.concurrency.max(1);
    let run_c = c.for_run(&mut seeded(spec.rand_seed, u64::MAX - 1));
    let mut desks = blocking({
        let (endpoint, spec) = (endpoint.clone(), spec.clone());
        move || open_all::<F::Client>(&endpoint, &spec, terminals, run_c)
    })
    .await?;
    let ids = client_ids(&mut desks);
    let (control, _) = F::control(settled, endpoint, &spec.db, &ids, None).await?;
    let cancel = Cancel::default();
    let mut load = Tpcc::<F> {
        control,
        endpoint: endpoint.clone(),
        db: spec.db.clone(),
        live: it.live.clone(),
        cancelled: cancel.flag(),
    };
    let done = Phases::of(it).run(&mut load, desks).await?;
    let ((before, taken0, cpu0), (after, taken1, cpu1)) = (done.before, done.after);
    let server = F::measured(&before, &after?, it.window.server_reads());
    let per_minute = PerMinute {
        nopm: Some((taken1 - taken0) as f64),
        tpmc: 0.0,
        tpm: F::transactions(&server).map(|n| n as f64),
    };
    let mut desks = done.clients;
    let ids = client_ids(&mut desks);
    let checked = blocking({
        let (endpoint, spec) = (endpoint.clone(), spec.clone());
        move || {
            drop(desks);
            consistency::<F::Client>(&endpoint, &spec)
        }
    })
    .await;
    F::close_control(load.control, &ids).await;
    let ran = done.measured;
    if let Some(e) = ran.tally.iter().find_map(|t| t.fatal.clone()) {
        anyhow::bail!("a terminal stopped on an error: {e}");
    }
    checked?;
    let mut m = measurement(&ran, terminals, server, per_minute);
    m.client_cpu_s = cpu1.zip(cpu0).map(|(a, b)| a - b);
    Ok(m)
}

/// The measurement of a measured phase: every transaction's latency, each type's counts,
/// latency and retries as an operation (operations.csv), and the rates per minute from the
/// counts in `counted` (New-Orders taken from the schema, the server's transactions).
fn measurement(
    ran: &Ran<Vec<Tally>>,
    terminals: u32,
    server: Status,
    counted: PerMinute,
) -> Measurement {
    let mut sent = Sent::default();
    let mut latency = Latency::default();
    let mut service = Latency::default();
    let (mut retries, mut committed) = (0, 0);
    let mut by_type: [ByType; 5] = Default::default();
    for t in &ran.tally {
        sent = sent.plus(&t.sent);
        latency.merge(&t.latency);
        if let Some(s) = &t.service {
            service.merge(s);
        }
        for (all, b) in by_type.iter_mut().zip(&t.by_type) {
            retries += b.retries;
            committed += b.committed;
            all.add(b);
        }
    }
    let operations = (Txn::ALL.iter().zip(&by_type))
        .map(|(txn, b)| Operation {
            group: "tpcc".into(),
            name: txn.name().into(),
            loops: b.committed + b.rolled_back,
            statements: b.sent.total(),
            seconds: ran.elapsed,
            server: Status::default(),
            latency: b.latency.summary(),
            errors: Some(b.retries),
        })
        .collect();
    let minutes = ran.elapsed / 60.0;
    let new_orders = &by_type[Txn::NewOrder.index()];
    let per_minute = (minutes > 0.0).then(|| PerMinute {
        nopm: counted.nopm.map(|n| n / minutes),
        tpmc: (new_orders.committed + new_orders.rolled_back) as f64 / minutes,
        tpm: counted.tpm.map(|n| n / minutes),
    });
    Measurement {
        queries: sent.total(),
        reads: Some(sent.select),
        writes: Some(sent.update + sent.insert + sent.delete),
        others: Some(sent.begin + sent.commit + sent.rollback),
        errors: retries,
        commits: committed,
        seconds: ran.elapsed,
        latency,
        service,
        server,
        operations,
        samples: ran.samples(terminals),
        open: ran.open.clone(),
        first_error: ran.tally.iter().find_map(|t| t.first_error.clone()),
        per_minute,
        ..Measurement::default()
    }
}

/// Connect `n` terminals in parallel, each preparing its statements; terminal `i` works on
/// warehouse `i % warehouses + 1`, and asks Stock-Level of the district after its
/// warehouse's previous terminals' (10 terminals a warehouse, 2.4.1.1).
fn open_all<C: SqlClient>(
    endpoint: &Endpoint,
    spec: &TpccSpec,
    n: u32,
    c: super::rand::Constants,
) -> Result<Vec<Desk<C>>> {
    std::thread::scope(|s| {
        let opening: Vec<_> = (0..n)
            .map(|i| {
                s.spawn(move || -> Result<Desk<C>> {
                    let client = C::open(endpoint, &spec.db, super::statements::Stmt::ALL.len())?;
                    let terminal = Terminal {
                        w: i % spec.warehouses + 1,
                        stock_district: i / spec.warehouses % super::load::DISTRICTS + 1,
                        warehouses: spec.warehouses,
                        c,
                    };
                    let rng = seeded(spec.rand_seed, u64::from(i));
                    Ok(Desk::new(Session::new(client)?, terminal, spec, rng))
                })
            })
            .collect();
        let mut desks = Vec::with_capacity(n as usize);
        for h in opening {
            let desk = h
                .join()
                .map_err(|_| anyhow::anyhow!("a terminal panicked while connecting"))?;
            desks.push(desk.context("failed to open the terminals' connections")?);
        }
        Ok(desks)
    })
}

/// The server's ids of the terminals' connections, where the family has them.
fn client_ids<C: SqlClient>(desks: &mut [Desk<C>]) -> Vec<u32> {
    desks
        .iter_mut()
        .filter_map(|d| d.session.client().id())
        .collect()
}

/// The consistency conditions on a connection of its own, once the terminals are gone.
fn consistency<C: SqlClient>(endpoint: &Endpoint, spec: &TpccSpec) -> Result<()> {
    if !spec.check {
        return Ok(());
    }
    let mut client = C::open(endpoint, &spec.db, check::CONDITIONS.len())?;
    let mut counts = Vec::new();
    for (number, _, sql) in check::CONDITIONS {
        let stmt = client.prepare(sql)?;
        let rows = client
            .rows(&stmt, Vec::new())
            .map_err(|(_, e)| anyhow::anyhow!(e))?;
        let n = match rows.first().and_then(|r| r.first()) {
            Some(crate::servers::sql::Cell::Int(n)) => *n,
            other => anyhow::bail!("consistency condition {number}: the server answered {other:?}"),
        };
        counts.push((number, n));
    }
    match check::broken(&counts) {
        Some(msg) => anyhow::bail!("the database is not consistent after the run: {msg}"),
        None => Ok(()),
    }
}

/// The committed New-Orders so far, from the schema.
fn orders_taken<C: SqlClient>(client: &mut C) -> Result<i64> {
    let stmt = client.prepare(check::ORDERS_TAKEN)?;
    let rows = client
        .rows(&stmt, Vec::new())
        .map_err(|(_, e)| anyhow::anyhow!(e))?;
    match rows.first().and_then(|r| r.first()) {
        Some(cell) => super::txn::cents(cell)
            .map(|c| c / 100)
            .map_err(|(_, e)| anyhow::anyhow!(e)),
        None => anyhow::bail!("no districts: is it a TPC-C database?"),
    }
}

/// An iteration's phases on family `F`: its control connection (the counters), and where
/// the schema's order ids are read around the measured phase.
struct Tpcc<F: SqlFamily> {
    control: F::Control,
    endpoint: Endpoint,
    db: String,
    live: Arc<AtomicU64>,
    cancelled: Arc<AtomicBool>,
}

impl<F: SqlFamily> Load for Tpcc<F> {
    type Clients = Vec<Desk<F::Client>>;
    type Tally = Vec<Tally>;
    /// At each edge: the counters, New-Orders taken, the client's CPU seconds.
    type Before = (Status, i64, Option<f64>);
    type After = (Result<Status>, i64, Option<f64>);

    async fn phase(
        &mut self,
        desks: Self::Clients,
        begin: Begin,
    ) -> Result<(Self::Clients, Ran<Self::Tally>)> {
        let (live, cancelled) = (self.live.clone(), self.cancelled.clone());
        blocking(move || {
            let (ran, panicked) = on_threads("tpcc", desks, &begin, |i, mut desk, started| {
                let tally = desk.run(i, started, &live, &cancelled);
                (desk, tally)
            })?;
            if panicked > 0 {
                anyhow::bail!("{panicked} terminal thread(s) panicked");
            }
            Ok(ran.unzip())
        })
        .await
    }

    async fn before(&mut self, desks: Self::Clients) -> Result<(Self::Clients, Self::Before)> {
        let (desks, flushed, taken) = blocking(move || {
            let mut desks = desks;
            let taken = orders_taken(desks[0].session.client())?;
            let clients = desks.iter_mut().map(|d| d.session.client()).collect();
            let flushed = F::flush(clients)?;
            Ok((desks, flushed, taken))
        })
        .await?;
        let before = F::before(&mut self.control, flushed).await?;
        Ok((desks, (before, taken, cpu::process_seconds())))
    }

    /// The terminals closed first where a client is counted at its exit; the New-Orders
    /// taken read on a connection of its own once the counters are.
    async fn after(
        &mut self,
        measured: &mut Result<(Self::Clients, Ran<Self::Tally>)>,
    ) -> Result<Self::After> {
        let cpu = cpu::process_seconds();
        if let (true, Ok((desks, _))) = (F::COUNTED_AT_EXIT, &mut *measured) {
            let desks = std::mem::take(desks);
            let closed = blocking(move || {
                drop(desks);
                Ok(())
            });
            if let Err(e) = closed.await {
                *measured = Err(e);
            }
        }
        let after = F::after(&mut self.control).await;
        let (endpoint, db) = (self.endpoint.clone(), self.db.clone());
        let taken =
            blocking(move || orders_taken(&mut F::Client::open(&endpoint, &db, 1)?)).await?;
        Ok((after, taken, cpu))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::measure::seconds::Seconds;

    /// Two terminals' tallies for 30 s: New-Order's 90 committed and 2 rolled back on one, 8
    /// committed on the other, Payment's 100 with 3 retries.
    fn ran() -> Ran<Vec<Tally>> {
        let mut a = Tally::default();
        let mut b = Tally::default();
        let new_order = Txn::NewOrder.index();
        a.by_type[new_order].committed = 90;
        a.by_type[new_order].rolled_back = 2;
        b.by_type[new_order].committed = 8;
        b.by_type[Txn::Payment.index()].committed = 100;
        b.by_type[Txn::Payment.index()].retries = 3;
        for us in [1_000, 2_000, 40_000] {
            a.by_type[new_order].latency.record_us(us);
        }
        Ran {
            tally: vec![a, b],
            seconds: Seconds::new(Instant::now()),
            elapsed: 30.0,
            open: None,
        }
    }

    #[test]
    fn rates_per_minute_and_each_types_latency_and_retries() {
        let counted = PerMinute {
            nopm: Some(98.0),
            tpmc: 0.0,
            tpm: Some(203.0),
        };
        let m = measurement(&ran(), 2, Status::default(), counted);
        let p = m.per_minute.unwrap();
        assert_eq!((p.nopm, p.tpmc, p.tpm), (Some(196.0), 200.0, Some(406.0)));
        assert_eq!((m.commits, m.errors), (198, 3));
        let new_order = &m.operations[Txn::NewOrder.index()];
        assert_eq!(
            (new_order.name.as_str(), new_order.loops),
            ("new_order", 100)
        );
        assert_eq!(new_order.errors, Some(0));
        let l = new_order.latency.unwrap();
        assert!((l.max_ms - 40.0).abs() < 0.1, "{l:?}");
        let payment = &m.operations[Txn::Payment.index()];
        assert_eq!((payment.loops, payment.errors), (100, Some(3)));
        assert!(payment.latency.is_none());
    }
}
