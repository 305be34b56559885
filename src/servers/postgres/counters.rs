//! The server's counters: `pg_stat_database` summed over the benchmark databases (every
//! database but the family's control database and the templates), `pg_stat_wal`
//! (PostgreSQL 14+), `pg_stat_bgwriter` and `pg_stat_checkpointer` (17+), each numeric
//! column as `<view>.<column>`. Read from the control database, so that reading them
//! counts in no benchmark database's row.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::client::{connect, connect_blocking, CONTROL_DB};
use crate::measure::counters::{self, Status};
use crate::measure::server_seconds::{CounterSource, Kind, Rules};
use crate::servers::Endpoint;

/// Recorded in results.csv whether they moved or not (`result_columns`).
pub(crate) const RECORDED: [&str; 3] = ["db.xact_commit", "db.xact_rollback", "wal.wal_sync"];

/// One row per view, as JSON: the columns differ between versions, the numbers are taken
/// by name.
fn views(version_num: u32) -> String {
    let mut q = format!(
        "SELECT 'db', row_to_json(d)::text FROM pg_stat_database d \
         WHERE datname IS NOT NULL AND datname NOT IN ('{CONTROL_DB}', 'template0', 'template1') \
         UNION ALL SELECT 'bgwriter', row_to_json(b)::text FROM pg_stat_bgwriter b"
    );
    if version_num >= 140000 {
        q.push_str(" UNION ALL SELECT 'wal', row_to_json(w)::text FROM pg_stat_wal w");
    }
    if version_num >= 170000 {
        q.push_str(
            " UNION ALL SELECT 'checkpointer', row_to_json(c)::text FROM pg_stat_checkpointer c",
        );
    }
    q
}

/// Columns that are identities or levels, not counts.
const NOT_COUNTS: &[&str] = &["datid", "numbackends"];

/// The integer columns of the views' rows, summed per `<view>.<column>`.
fn parse(rows: &[(String, String)]) -> Result<Status> {
    let mut status = Status::new();
    for (view, json) in rows {
        let row: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(json).with_context(|| format!("pg_stat row of {view}"))?;
        for (column, value) in row {
            let Some(n) = value.as_u64() else { continue };
            if NOT_COUNTS.contains(&column.as_str()) {
                continue;
            }
            *status.entry(format!("{view}.{column}")).or_default() += n;
        }
    }
    Ok(status)
}

/// The control connection a driver reads the counters on, around its measured phase.
pub(crate) struct Control {
    client: tokio_postgres::Client,
    query: String,
    /// PostgreSQL before 15 sends its statistics through a collector process whose file
    /// a reader sees up to 500 ms late; 15+ keeps them in shared memory.
    collector: bool,
}

impl Control {
    pub(crate) async fn connect(endpoint: &Endpoint) -> Result<Control> {
        let client = connect(endpoint, CONTROL_DB).await?;
        let row = client.query_one("SHOW server_version_num", &[]).await?;
        let version_num: u32 = row.get::<_, String>(0).trim().parse().unwrap_or(0);
        Ok(Control {
            client,
            query: views(version_num),
            collector: version_num < 150000,
        })
    }

    /// The counters now.
    pub(crate) async fn snapshot(&self) -> Result<Status> {
        let rows = self.client.query(self.query.as_str(), &[]).await?;
        let rows: Vec<(String, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
        parse(&rows)
    }

    /// The counters once the phase's clients have gone and their last statistics are
    /// counted: a backend reports at its exit, so this waits (up to 10 s) until no client
    /// backend is connected to a benchmark database, then reads until two reads agree.
    pub(crate) async fn settled(&self) -> Result<Status> {
        let give_up = Instant::now() + Duration::from_secs(10);
        let connected =
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' \
             AND datname NOT IN ('postgres', 'template0', 'template1')";
        while Instant::now() < give_up {
            let n: i64 = self.client.query_one(connected, &[]).await?.get(0);
            if n == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let gap = Duration::from_millis(if self.collector { 600 } else { 100 });
        let mut last = self.snapshot().await?;
        while Instant::now() < give_up {
            tokio::time::sleep(gap).await;
            let now = self.snapshot().await?;
            if now == last {
                break;
            }
            last = now;
        }
        Ok(last)
    }
}

/// The counters of a measured phase: what moved, and the recorded ones.
pub(crate) fn measured(before: &Status, after: &Status) -> Status {
    let mut server = counters::delta(before, after);
    server.retain(|k, v| *v != 0 || RECORDED.contains(&k.as_str()));
    server
}

/// The per-second reader (`measure::server_seconds`) on a blocking connection of its own,
/// owned by a thread of its own: the `postgres` crate runs a runtime of its own inside each
/// call (and in its drop), which panics on a thread that drives tokio, and the sampler
/// reads (and drops its source) from the driver's async task.
pub(crate) struct Reader {
    ask: std::sync::mpsc::Sender<std::sync::mpsc::Sender<Result<Status>>>,
}

/// A read that takes longer is given up (the server is stalled; the phase goes on).
const READ_TIMEOUT: Duration = Duration::from_secs(5);

impl Reader {
    pub(crate) fn connect(endpoint: &Endpoint) -> Result<Reader> {
        use std::sync::mpsc::{channel, Sender};
        let endpoint = endpoint.clone();
        let (ready, opened) = channel::<Result<()>>();
        let (ask, asks) = channel::<Sender<Result<Status>>>();
        std::thread::Builder::new()
            .name("pg-counters".into())
            .spawn(move || {
                let open = || -> Result<(postgres::Client, String)> {
                    let mut client = connect_blocking(&endpoint, CONTROL_DB, READ_TIMEOUT)?;
                    let row = client.query_one("SHOW server_version_num", &[])?;
                    let version_num: u32 = row.get::<_, String>(0).trim().parse().unwrap_or(0);
                    Ok((client, views(version_num)))
                };
                let (mut client, query) = match open() {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = ready.send(Err(e));
                        return;
                    }
                };
                let _ = ready.send(Ok(()));
                for reply in asks {
                    let rows = client.query(query.as_str(), &[]).map(|rows| {
                        rows.iter()
                            .map(|r| (r.get(0), r.get(1)))
                            .collect::<Vec<(String, String)>>()
                    });
                    let _ = reply.send(rows.map_err(Into::into).and_then(|r| parse(&r)));
                }
            })
            .context("failed to start the counter thread")?;
        opened
            .recv()
            .map_err(|_| anyhow::anyhow!("the counter thread ended"))??;
        Ok(Reader { ask })
    }
}

impl CounterSource for Reader {
    fn read(&mut self) -> Result<Status> {
        let (reply, answer) = std::sync::mpsc::channel();
        let gone = || anyhow::anyhow!("the counter thread ended");
        self.ask.send(reply).map_err(|_| gone())?;
        answer.recv().map_err(|_| gone())?
    }

    fn rules(&self) -> Rules {
        // A read runs in the control database: no benchmark database's counter moves.
        Rules {
            own_cost: &[],
            kind,
        }
    }
}

/// The counters a "why" question reads first: transactions, tuples, blocks, WAL, writes.
fn kind(name: &str) -> Option<Kind> {
    const COUNTS: &[&str] = &[
        "db.xact_commit",
        "db.xact_rollback",
        "db.blks_read",
        "db.blks_hit",
        "db.tup_returned",
        "db.tup_fetched",
        "db.tup_inserted",
        "db.tup_updated",
        "db.tup_deleted",
        "db.conflicts",
        "db.deadlocks",
        "db.temp_bytes",
        "wal.wal_records",
        "wal.wal_fpi",
        "wal.wal_bytes",
        "wal.wal_write",
        "wal.wal_sync",
        "wal.wal_buffers_full",
        "bgwriter.buffers_clean",
        "bgwriter.buffers_alloc",
        "bgwriter.buffers_backend",
        "bgwriter.buffers_checkpoint",
        "bgwriter.checkpoints_timed",
        "bgwriter.checkpoints_req",
        "checkpointer.num_timed",
        "checkpointer.num_requested",
        "checkpointer.buffers_written",
    ];
    COUNTS.contains(&name).then_some(Kind::Count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_the_databases_and_keeps_integers() {
        let rows = vec![
            ("db".to_string(), r#"{"datid": 5, "datname": "a", "numbackends": 3, "xact_commit": 10, "blk_read_time": 1.5, "stats_reset": null}"#.to_string()),
            ("db".to_string(), r#"{"datid": 6, "datname": "b", "xact_commit": 7}"#.to_string()),
            ("wal".to_string(), r#"{"wal_records": 40, "wal_bytes": 4096, "stats_reset": "2026-12-02"}"#.to_string()),
        ];
        let s = parse(&rows).unwrap();
        assert_eq!(
            s.into_iter().collect::<Vec<_>>(),
            [
                ("db.xact_commit".to_string(), 17),
                ("wal.wal_bytes".to_string(), 4096),
                ("wal.wal_records".to_string(), 40)
            ]
        );
        assert!(
            views(130000).contains("pg_stat_bgwriter") && !views(130000).contains("pg_stat_wal")
        );
        assert!(views(170000).contains("pg_stat_checkpointer"));
    }

    #[test]
    fn a_phase_keeps_what_moved_and_the_recorded() {
        let before: Status = [
            ("db.xact_commit".to_string(), 5),
            ("db.blks_hit".to_string(), 9),
        ]
        .into();
        let after: Status = [
            ("db.xact_commit".to_string(), 5),
            ("db.blks_hit".to_string(), 19),
        ]
        .into();
        let m = measured(&before, &after);
        assert_eq!(m.get("db.xact_commit"), Some(&0));
        assert_eq!(m.get("db.blks_hit"), Some(&10));
    }
}
