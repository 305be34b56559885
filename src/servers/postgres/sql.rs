//! The PostgreSQL family's part in a benchmark iteration (`servers::sql::SqlFamily`): its
//! counters. A backend sends its statistics at most once a second while it lives and at its
//! exit, so the counters are read after each client flushed them (before the measured
//! phase) and after every client has gone (after it).

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use tokio_postgres::Client;

use super::client::connect;
use super::counters::{measured, Control};
use super::sql_client::PgClient;
use super::Postgres;
use crate::measure::counters::Status;
use crate::servers::sql::{Kept, SqlFamily, WithSql};
use crate::servers::Endpoint;

/// PostgreSQL 15 keeps its statistics in shared memory and has `pg_stat_force_next_flush()`;
/// before it a collector process receives them, at most every 500 ms from each backend.
const SHARED_STATS: u32 = 150_000;

impl SqlFamily for Postgres {
    type Client = PgClient;
    /// The control connection, and the id sequence read before it connected.
    type Settled = (Control, Option<Kept>);
    type Control = Control;
    /// `server_version_num`.
    type Flushed = u32;
    const COUNTED_AT_EXIT: bool = true;

    /// The id sequence read first, on a connection of its own, then whatever ran before
    /// (the load, the last iteration, that read) has left and been counted.
    async fn settle(endpoint: &Endpoint, db: &str, seq: Option<&str>) -> Result<Self::Settled> {
        let ids = match seq {
            Some(seq) => Some(resume(&connect(endpoint, db).await?, seq).await?),
            None => None,
        };
        let control = Control::connect(endpoint).await?;
        control.settled().await?;
        Ok((control, ids))
    }

    async fn control(
        (control, ids): Self::Settled,
        _: &Endpoint,
        _: &str,
        _: &[u32],
        _: Option<&str>,
    ) -> Result<(Control, Option<Kept>)> {
        Ok((control, ids))
    }

    /// Kept once, after the measured phase: the warm-up's ids are in it too (one sequence
    /// over both phases).
    async fn warmed_up(_: &mut Control, _: Option<&str>, _: u32) -> Result<()> {
        Ok(())
    }

    /// Make every client send its pending statistics now (its connect, prepares and
    /// warm-up): `pg_stat_force_next_flush()` from PostgreSQL 15, else a statement more than
    /// 500 ms after its last report.
    fn flush(mut clients: Vec<&mut PgClient>) -> Result<u32> {
        let version_num = clients.first().map_or(0, |c| c.version_num);
        let query = match version_num >= SHARED_STATS {
            true => "SELECT pg_stat_force_next_flush()",
            false => {
                std::thread::sleep(Duration::from_millis(600));
                "SELECT 1"
            }
        };
        for c in clients.iter_mut() {
            c.client()
                .batch_execute(query)
                .context("failed to flush a client's statistics")?;
        }
        Ok(version_num)
    }

    /// The counters once the clients' flushed statistics are in: at once from shared
    /// memory, else when two reads of the collector's file agree.
    async fn before(control: &mut Control, version_num: u32) -> Result<Status> {
        let mut last = control.snapshot().await?;
        if version_num >= SHARED_STATS {
            return Ok(last);
        }
        let give_up = Instant::now() + Duration::from_secs(10);
        while Instant::now() < give_up {
            tokio::time::sleep(Duration::from_millis(600)).await;
            let now = control.snapshot().await?;
            if now == last {
                break;
            }
            last = now;
        }
        Ok(last)
    }

    /// Once every client has gone (`COUNTED_AT_EXIT`) and been counted.
    async fn after(control: &mut Control) -> Result<Status> {
        control.settled().await
    }

    /// On a connection of its own, after the counters were read.
    async fn keep(
        _: &mut Control,
        endpoint: &Endpoint,
        db: &str,
        seq: &str,
        next: u32,
    ) -> Result<()> {
        keep(&connect(endpoint, db).await?, seq, next).await
    }

    fn measured(before: &Status, after: &Status, _: u64) -> Status {
        measured(before, after)
    }

    fn transactions(measured: &Status) -> Option<u64> {
        Some(measured.get("db.xact_commit")? + measured.get("db.xact_rollback")?)
    }

    /// The clients have gone already (`after`).
    async fn close_control(_: Control, _: &[u32]) {}
}

/// The sequence where the last phase on these tables left it.
async fn resume(conn: &Client, seq: &str) -> Result<Kept> {
    let row = conn
        .query_opt(&format!("SELECT id_offset, next_index FROM {seq}"), &[])
        .await
        .with_context(|| {
            format!("failed to read oltp_insert's id sequence ({seq}): drop the database to reload")
        })?
        .with_context(|| format!("{seq} is empty: drop the database to reload"))?;
    let (offset, next): (i64, i64) = (row.get(0), row.get(1));
    Ok((
        u32::try_from(offset).context("id_offset out of range")?,
        u32::try_from(next).context("next_index out of range")?,
    ))
}

async fn keep(conn: &Client, seq: &str, next: u32) -> Result<()> {
    conn.execute(
        &format!("UPDATE {seq} SET next_index = $1"),
        &[&i64::from(next)],
    )
    .await
    .context("failed to keep oltp_insert's id sequence")?;
    Ok(())
}

/// The family for `ServerKind::with_sql`.
pub(crate) fn with_sql<W: WithSql>(what: W) -> Option<W::Output> {
    Some(what.with::<Postgres>())
}
