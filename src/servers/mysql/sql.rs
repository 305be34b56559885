//! The MySQL family's part in a benchmark iteration (`servers::sql::SqlFamily`): its
//! counters read on a control connection. SHOW GLOBAL STATUS counts a client's statements
//! as they run, but a closed client's COM_QUIT counts in Questions when the server gets to
//! it, so every closed connection is waited for.

use anyhow::{Context, Result};
use mysql_async::prelude::Queryable;
use mysql_async::Conn;

use super::sql_client::MyClient;
use super::{measured, quits, status, wait_disconnected, Mysql, MysqlClient};
use crate::measure::counters::Status;
use crate::servers::sql::{Kept, SqlFamily, WithSql};
use crate::servers::Endpoint;

/// The control connection once the clients are connected.
pub(crate) struct MyControl(Conn);

impl SqlFamily for Mysql {
    type Client = MyClient;
    type Settled = ();
    type Control = MyControl;
    type Flushed = ();
    const COUNTED_AT_EXIT: bool = false;

    async fn settle(_: &Endpoint, _: &str, _: Option<&str>) -> Result<()> {
        Ok(())
    }

    /// Connected after the clients, it waits for the connections closed before them (the
    /// load's, the last iteration's) to leave; the id sequence is read on it.
    async fn control(
        _: (),
        endpoint: &Endpoint,
        db: &str,
        clients: &[u32],
        seq: Option<&str>,
    ) -> Result<(MyControl, Option<Kept>)> {
        let mut control = endpoint.connect(Some(db)).await?;
        quits::settle(&mut control, clients).await;
        let ids = match seq {
            Some(seq) => Some(resume(&mut control, seq).await?),
            None => None,
        };
        Ok((MyControl(control), ids))
    }

    /// After every phase, even one that failed: the indexes its clients took are used.
    async fn warmed_up(control: &mut MyControl, seq: Option<&str>, next: u32) -> Result<()> {
        match seq {
            Some(seq) => keep(&mut control.0, seq, next).await,
            None => Ok(()),
        }
    }

    fn flush(_: Vec<&mut MyClient>) -> Result<()> {
        Ok(())
    }

    async fn before(control: &mut MyControl, _: ()) -> Result<Status> {
        status(&mut control.0).await
    }

    async fn after(control: &mut MyControl) -> Result<Status> {
        status(&mut control.0).await
    }

    async fn keep(
        control: &mut MyControl,
        _: &Endpoint,
        _: &str,
        seq: &str,
        next: u32,
    ) -> Result<()> {
        keep(&mut control.0, seq, next).await
    }

    /// Counters that moved, and always the ones compared (and rollbacks, which the
    /// deadlock accounting reads).
    fn measured(before: &Status, after: &Status, reads: u64) -> Status {
        measured(before, after, &["Com_rollback"], reads)
    }

    fn transactions(measured: &Status) -> Option<u64> {
        Some(measured.get("Com_commit")? + measured.get("Com_rollback")?)
    }

    /// Dropping a client sends COM_QUIT without waiting, and the server counts a COM_QUIT
    /// in Questions: its late quits would land in the next iteration's counters.
    async fn close_control(control: MyControl, clients: &[u32]) {
        let mut control = control.0;
        wait_disconnected(&mut control, clients).await;
        quits::close(control).await;
    }
}

/// The sequence where the last phase on these tables left it.
async fn resume(conn: &mut Conn, seq: &str) -> Result<Kept> {
    let row: Option<Kept> = conn
        .query_first(format!("SELECT id_offset, next_index FROM {seq}"))
        .await
        .with_context(|| {
            format!("failed to read oltp_insert's id sequence ({seq}): drop the schema to reload")
        })?;
    row.with_context(|| format!("{seq} is empty: drop the schema to reload"))
}

async fn keep(conn: &mut Conn, seq: &str, next: u32) -> Result<()> {
    conn.exec_drop(format!("UPDATE {seq} SET next_index = ?"), (next,))
        .await
        .context("failed to keep oltp_insert's id sequence")
}

/// The family for `ServerKind::with_sql`.
pub(crate) fn with_sql<W: WithSql>(what: W) -> Option<W::Output> {
    Some(what.with::<Mysql>())
}
