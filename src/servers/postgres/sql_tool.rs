//! The PostgreSQL family's part in an external SQL tool's run (`servers::sql::SqlTool`): the
//! counters read from the control database, each read once every backend of what ran before
//! it (the load, the warm-up, the run) has gone and been counted.

use anyhow::Result;
use tokio_postgres::Client;

use super::counters::{measured, Control};
use super::Postgres;
use crate::measure::counters::Status;
use crate::servers::sql::SqlTool;
use crate::servers::Endpoint;

impl SqlTool for Postgres {
    const TOOL_DRIVER: Option<&'static str> = Some("pgsql");
    type Watch = Control;

    async fn watch(endpoint: &Endpoint) -> Result<Control> {
        Control::connect(endpoint).await
    }

    async fn before_run(control: &mut Control, _: &Endpoint, _: &str) -> Result<Status> {
        control.settled().await
    }

    async fn after_run(control: &mut Control) -> Result<Status> {
        control.settled().await
    }

    async fn unwatch(_: Control) {}

    fn run_measured(before: &Status, after: &Status, _: u64) -> Status {
        measured(before, after)
    }

    async fn mark(conn: &mut Client, marker: &str, text: &str) -> Result<()> {
        conn.batch_execute(&format!("CREATE TABLE {marker}(signature TEXT NOT NULL)"))
            .await?;
        conn.execute(&format!("INSERT INTO {marker} VALUES ($1)"), &[&text])
            .await?;
        Ok(())
    }
}
