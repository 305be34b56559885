//! One sysbench iteration, on any SQL family sysbench has a driver for: `prepare` once per
//! deployment and option set (the marker table says which), an optional warmup run
//! (discarded), then the measured run, whose report is parsed into the same columns as the
//! native driver. What differs between families (the driver's name, creating the database,
//! when the server's counters are exact) is each family's `SqlTool`, which
//! `ServerKind::with_sql` picks. sysbench's CPU time comes from the kernel's accounting of
//! reaped children.

use std::time::Instant;

use anyhow::Result;

use super::process::{finish, load, signature, sysbench, warm_up, Db, Run, MARKER};
use super::report::parse;
use super::SysbenchSpec;
use crate::measure::cpu;
use crate::measure::measurement::Measurement;
use crate::servers::spec::ServerKind;
use crate::servers::sql::{FamilyFuture, SqlFamily, WithSql};
use crate::servers::Endpoint;
use crate::workloads::Iteration;

/// One iteration against `kind`'s server; `it.pace` only sets sysbench's constant rate.
pub fn run_iteration<'a>(
    kind: ServerKind,
    it: &'a Iteration<'a>,
    spec: &'a SysbenchSpec,
) -> FamilyFuture<'a, Result<Measurement>> {
    match kind.with_sql(Iterate { it, spec }) {
        Some(future) => future,
        None => {
            Box::pin(
                async move { anyhow::bail!("sysbench does not speak to {} servers", kind.name()) },
            )
        }
    }
}

/// An iteration, once the family is known.
struct Iterate<'a> {
    it: &'a Iteration<'a>,
    spec: &'a SysbenchSpec,
}

impl<'a> WithSql for Iterate<'a> {
    type Output = FamilyFuture<'a, Result<Measurement>>;
    fn with<F: SqlFamily>(self) -> Self::Output {
        Box::pin(iterate::<F>(self.it, self.spec))
    }
}

async fn iterate<F: SqlFamily>(it: &Iteration<'_>, spec: &SysbenchSpec) -> Result<Measurement> {
    let Some(db) = F::TOOL_DRIVER.map(Db) else {
        anyhow::bail!("sysbench has no driver for this server's family");
    };
    let (endpoint, window) = (it.endpoint, it.window);
    if spec.prepare {
        ensure_prepared::<F>(db, endpoint, spec).await?;
    }
    let rate = it.pace.map(|p| p.rate());
    let run = Run {
        threads: it.concurrency,
        rate,
    };
    let mut watch = F::watch(endpoint).await?;
    let warmup_samples = warm_up(db, endpoint, spec, run, it.warmup, window).await?;
    let before = F::before_run(&mut watch, endpoint, &spec.db).await?;
    let cpu0 = cpu::children_seconds();
    let started = Instant::now();
    window.open();
    let text = sysbench(db, endpoint, spec, "run", run, Some(it.length)).await?;
    window.close();
    let wall = started.elapsed().as_secs_f64();
    let cpu1 = cpu::children_seconds();
    let after = F::after_run(&mut watch).await?;
    F::unwatch(watch).await;
    let report = parse(&text)?;
    let server = F::run_measured(&before, &after, window.server_reads());
    Ok(finish(
        report,
        server,
        cpu0.zip(cpu1).map(|(a, b)| b - a),
        wall,
        rate,
        warmup_samples,
    ))
}

/// Run `cleanup` + `prepare` unless the database already holds this test and option set.
async fn ensure_prepared<F: SqlFamily>(
    db: Db,
    endpoint: &Endpoint,
    spec: &SysbenchSpec,
) -> Result<()> {
    let mut conn = F::open_db(endpoint, &spec.db).await?;
    let sig = signature(spec);
    // Written once the prepare has ended (the tables are the script's): none, nothing prepared.
    let have = F::marker(&mut conn, MARKER, MARKER).await;
    if have.as_deref() != Some(sig.as_str()) {
        F::execute(&mut conn, &format!("DROP TABLE IF EXISTS {MARKER}")).await?;
        load(db, endpoint, spec).await?;
        F::mark(&mut conn, MARKER, &sig).await?;
    }
    F::close(conn).await;
    Ok(())
}
