//! sysbench against a PostgreSQL server: its pgsql driver (`--db-driver=pgsql`, the password
//! in the same 0600 config file as for MySQL, never on the command line), the database
//! created first, `prepare` once per option set (the same marker table), and the server's
//! counters read from the control database around the measured run, after every backend
//! of the run before it has gone and been counted.

use std::time::Instant;

use anyhow::Result;

use super::process::{finish, load, signature, sysbench, warm_up, Db, Run, MARKER};
use crate::input::Length;
use crate::measure::cgroup::Window;
use crate::measure::cpu;
use crate::measure::measurement::Measurement;
use crate::servers::postgres::client::{connect, ensure_database};
use crate::servers::postgres::counters::{self, Control};
use crate::servers::Endpoint;
use crate::workloads::sysbench::report::parse;
use crate::workloads::sysbench::SysbenchSpec;

pub async fn run_iteration(
    endpoint: &Endpoint,
    spec: &SysbenchSpec,
    threads: u32,
    warmup: Option<Length>,
    length: Length,
    window: &Window,
    rate: Option<u32>,
) -> Result<Measurement> {
    if spec.prepare {
        ensure_prepared(endpoint, spec).await?;
    }
    let run = Run { threads, rate };
    let control = Control::connect(endpoint).await?;
    let warmup_samples = warm_up(Db::Pgsql, endpoint, spec, run, warmup, window).await?;
    // The prepare's and warm-up's backends have gone and sent their last statistics.
    let before = control.settled().await?;
    let cpu0 = cpu::children_seconds();
    let started = Instant::now();
    window.open();
    let text = sysbench(Db::Pgsql, endpoint, spec, "run", run, Some(length)).await?;
    window.close();
    let wall = started.elapsed().as_secs_f64();
    let cpu1 = cpu::children_seconds();
    // sysbench has exited: its backends' last statistics arrive as they exit.
    let after = control.settled().await?;
    let report = parse(&text)?;
    let server = counters::measured(&before, &after);
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
async fn ensure_prepared(endpoint: &Endpoint, spec: &SysbenchSpec) -> Result<()> {
    ensure_database(endpoint, &spec.db).await?;
    let conn = connect(endpoint, &spec.db).await?;
    let sig = signature(spec);
    // No marker table yet is an error: nothing prepared.
    let have: Option<String> = conn
        .query_opt(&format!("SELECT signature FROM {MARKER}"), &[])
        .await
        .ok()
        .flatten()
        .map(|r| r.get(0));
    if have.as_deref() == Some(sig.as_str()) {
        return Ok(());
    }
    conn.batch_execute(&format!("DROP TABLE IF EXISTS {MARKER}"))
        .await?;
    load(Db::Pgsql, endpoint, spec).await?;
    conn.batch_execute(&format!("CREATE TABLE {MARKER}(signature TEXT NOT NULL)"))
        .await?;
    conn.execute(&format!("INSERT INTO {MARKER} VALUES ($1)"), &[&sig])
        .await?;
    Ok(())
}
