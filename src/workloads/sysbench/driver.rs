//! Running sysbench itself against the cell's server: `prepare` once per deployment and
//! option set, an optional warmup run (discarded), then the measured run, whose report is
//! parsed into the same columns as the native driver. sysbench's CPU time comes from the
//! kernel's accounting of reaped children.

use std::time::Instant;

use anyhow::Result;
use mysql_async::prelude::Queryable;

use crate::input::Length;
use crate::measure::cgroup::Window;
use crate::measure::cpu;
use crate::measure::measurement::Measurement;
use crate::servers::mysql::{self, MysqlClient};
use crate::servers::spec::ServerKind;
use crate::servers::Endpoint;
use crate::workloads::arrival::{Shape, Spacing};
use crate::workloads::sysbench::process::{
    finish, load, signature, sysbench, warm_up, Db, Run, MARKER,
};
use crate::workloads::sysbench::report::parse;
use crate::workloads::sysbench::script;
use crate::workloads::sysbench::spec::SYSBENCH;
use crate::workloads::sysbench::SysbenchSpec;
use crate::workloads::{Ctx, Driver, Facts, Problem};

impl Driver for SysbenchSpec {
    fn tool(&self) -> Option<crate::workloads::tools::Tool> {
        Some(super::spec::SYSBENCH)
    }

    fn families(&self) -> &'static [ServerKind] {
        &[ServerKind::Mysql, ServerKind::Postgres]
    }

    fn counts_live(&self) -> bool {
        false
    }

    fn client_in_process(&self) -> bool {
        false
    }

    fn check(&self, facts: &Facts) -> Result<(), Problem> {
        SYSBENCH.refuse_binary(&self.binary)?;
        script::resolve(&self.test, script::scripts_dir().as_deref())
            .map_err(|msg| Problem::at("test", msg))?;
        if let Some(p) = &facts.pace {
            if self.options.contains_key("rate") || self.options.contains_key("tx-rate") {
                return Err(Problem::at_key(
                    "options.rate",
                    "the rate comes from `load.rate`: remove it from the options",
                ));
            }
            if !matches!(p.shape, Shape::Constant(_)) || p.spacing != Spacing::Poisson {
                return Err(Problem::at(
                    "",
                    "sysbench's `--rate` is a constant rate of Poisson arrivals: it cannot \
                     follow `load.shape` steps or a wave, or `arrivals: even`; use an `oltp` \
                     workload for those",
                ));
            }
        }
        for (key, value) in &self.options {
            super::options::sysbench_option(key, value)
                .map_err(|msg| Problem::at_key(&format!("options.{key}"), msg))?;
        }
        super::options::rand_type_known(&self.options, || SYSBENCH.version())
            .map_err(|(key, msg)| Problem::at(&format!("options.{key}"), msg))?;
        crate::input::untrusted::sql_identifier("database", &self.db)
            .map_err(|msg| Problem::at("db", msg))
    }

    /// The database's name, and `binary` refused.
    fn schema_rules() -> Vec<crate::workloads::SchemaRule> {
        let db = ("db", crate::input::patterns::sql_identifier());
        vec![db, SYSBENCH.binary_rule()]
    }

    async fn run(&self, ctx: &Ctx<'_>) -> Result<Measurement> {
        let (endpoint, length) = (&ctx.server.endpoint, ctx.length()?);
        let (threads, warmup, rate) = (ctx.concurrency, ctx.warmup, ctx.cell_rate());
        match ctx.kind {
            ServerKind::Postgres => {
                let window = &ctx.window;
                super::pg::run_iteration(endpoint, self, threads, warmup, length, window, rate)
                    .await
            }
            _ => run_iteration(endpoint, self, threads, warmup, length, &ctx.window, rate).await,
        }
    }
}

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
    let warmup_samples = warm_up(Db::Mysql, endpoint, spec, run, warmup, window).await?;
    let mut control = endpoint.connect(Some(&spec.db)).await?;
    let before = mysql::status(&mut control).await?;
    let cpu0 = cpu::children_seconds();
    let started = Instant::now();
    window.open();
    let text = sysbench(Db::Mysql, endpoint, spec, "run", run, Some(length)).await?;
    window.close();
    let wall = started.elapsed().as_secs_f64();
    let cpu1 = cpu::children_seconds();
    let after = mysql::status(&mut control).await?;
    let _ = control.disconnect().await;
    let report = parse(&text)?;
    let server = mysql::measured(&before, &after, &[], window.server_reads());
    Ok(finish(
        report,
        server,
        cpu0.zip(cpu1).map(|(a, b)| b - a),
        wall,
        rate,
        warmup_samples,
    ))
}

/// Run `cleanup` + `prepare` unless the schema already holds this test and option set.
async fn ensure_prepared(endpoint: &Endpoint, spec: &SysbenchSpec) -> Result<()> {
    let mut conn = endpoint.connect(None).await?;
    conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{}`", spec.db))
        .await?;
    conn.query_drop(format!("USE `{}`", spec.db)).await?;
    let sig = signature(spec);
    let have: Option<String> = conn
        .query_first(format!("SELECT signature FROM {MARKER}"))
        .await
        .unwrap_or(None);
    if have.as_deref() == Some(sig.as_str()) {
        // Closed, not dropped: a dropped connection is cleaned up in the background.
        conn.disconnect().await?;
        return Ok(());
    }
    conn.query_drop(format!("DROP TABLE IF EXISTS {MARKER}"))
        .await?;
    load(Db::Mysql, endpoint, spec).await?;
    conn.query_drop(format!("CREATE TABLE {MARKER}(signature TEXT NOT NULL)"))
        .await?;
    conn.exec_drop(format!("INSERT INTO {MARKER} VALUES (?)"), (sig,))
        .await?;
    let _ = conn.disconnect().await;
    Ok(())
}
