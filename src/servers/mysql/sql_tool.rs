//! The MySQL family's part in an external SQL tool's run (`servers::sql::SqlTool`): the
//! counters read on a connection of their own, opened after the tool's warm-up.

use anyhow::Result;
use mysql_async::prelude::Queryable;
use mysql_async::Conn;

use super::{measured, status, Mysql, MysqlClient};
use crate::measure::counters::Status;
use crate::servers::sql::SqlTool;
use crate::servers::Endpoint;

impl SqlTool for Mysql {
    const TOOL_DRIVER: Option<&'static str> = Some("mysql");
    /// Connected by `before_run`.
    type Watch = Option<Conn>;

    async fn watch(_: &Endpoint) -> Result<Option<Conn>> {
        Ok(None)
    }

    async fn before_run(watch: &mut Option<Conn>, endpoint: &Endpoint, db: &str) -> Result<Status> {
        let control = watch.insert(endpoint.connect(Some(db)).await?);
        status(control).await
    }

    async fn after_run(watch: &mut Option<Conn>) -> Result<Status> {
        match watch {
            Some(control) => status(control).await,
            None => anyhow::bail!("the server's counters were not read before the run"),
        }
    }

    async fn unwatch(watch: Option<Conn>) {
        if let Some(control) = watch {
            let _ = control.disconnect().await;
        }
    }

    /// Counters that moved, and always the ones compared.
    fn run_measured(before: &Status, after: &Status, reads: u64) -> Status {
        measured(before, after, &[], reads)
    }

    async fn mark(conn: &mut Conn, marker: &str, text: &str) -> Result<()> {
        conn.query_drop(format!("CREATE TABLE {marker}(signature TEXT NOT NULL)"))
            .await?;
        conn.exec_drop(format!("INSERT INTO {marker} VALUES (?)"), (text,))
            .await?;
        Ok(())
    }
}
