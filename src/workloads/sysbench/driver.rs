//! The `sysbench` kind's checks, and its iteration (`iteration`) run on the cell's server.

use anyhow::Result;

use super::iteration::run_iteration;
use super::process::Db;
use crate::measure::measurement::Measurement;
use crate::servers::spec::ServerKind;
use crate::workloads::arrival::{Shape, Spacing};
use crate::workloads::sysbench::script;
use crate::workloads::sysbench::spec::SYSBENCH;
use crate::workloads::sysbench::SysbenchSpec;
use crate::workloads::{Ctx, Driver, Facts, Problem};

impl Driver for SysbenchSpec {
    fn tool(&self) -> Option<crate::workloads::tools::Tool> {
        Some(super::spec::SYSBENCH)
    }

    /// Every SQL family sysbench has a driver for.
    fn families(&self) -> &'static [ServerKind] {
        Db::families()
    }

    /// An SQL family sysbench has no driver for.
    fn refuses(&self, kind: ServerKind) -> Option<String> {
        let sql = ServerKind::sql_families().contains(&kind);
        let drivers: Vec<&str> = Db::all().map(Db::name).collect();
        (sql && Db::of(kind).is_none()).then(|| {
            format!(
                "sysbench has no database driver for {} servers (its drivers here: {})",
                kind.name(),
                drivers.join(", ")
            )
        })
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
        run_iteration(ctx.kind, &ctx.iteration()?, self).await
    }
}
