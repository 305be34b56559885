//! oltp_insert's `rand.unique()` sequence without auto_inc, kept beside the tables as on
//! MySQL (`oltp/unique.rs`): one row of offset and next index, in the tables' database.

use anyhow::{Context, Result};
use tokio_postgres::Client;

use crate::workloads::oltp::unique::{Ids, TABLE};

/// A new sequence for tables just loaded.
pub(crate) async fn start(conn: &Client) -> Result<()> {
    conn.batch_execute(&format!(
        "DROP TABLE IF EXISTS {TABLE}; \
         CREATE TABLE {TABLE}(id_offset BIGINT NOT NULL, next_index BIGINT NOT NULL)"
    ))
    .await?;
    let offset = i64::from(Ids::fresh().offset());
    conn.execute(&format!("INSERT INTO {TABLE} VALUES ($1, 0)"), &[&offset])
        .await
        .context("failed to start oltp_insert's id sequence")?;
    Ok(())
}

/// The sequence where the last phase on these tables left it.
pub(crate) async fn resume(conn: &Client) -> Result<Ids> {
    let row = conn
        .query_opt(&format!("SELECT id_offset, next_index FROM {TABLE}"), &[])
        .await
        .with_context(|| {
            format!(
                "failed to read oltp_insert's id sequence ({TABLE}): drop the database to reload"
            )
        })?
        .with_context(|| format!("{TABLE} is empty: drop the database to reload"))?;
    let (offset, next): (i64, i64) = (row.get(0), row.get(1));
    Ok(Ids::at(
        u32::try_from(offset).context("id_offset out of range")?,
        u32::try_from(next).context("next_index out of range")?,
    ))
}

/// Keep where the phases left the sequence, for the next iteration or cell.
pub(crate) async fn keep(conn: &Client, ids: &Ids) -> Result<()> {
    conn.execute(
        &format!("UPDATE {TABLE} SET next_index = $1"),
        &[&i64::from(ids.taken())],
    )
    .await
    .context("failed to keep oltp_insert's id sequence")?;
    Ok(())
}
