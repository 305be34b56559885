//! Loading the sbtest tables: once per deployment and table layout (a marker table remembers
//! what was loaded), in parallel over several connections with multi-row INSERTs, and the
//! secondary index built after the load, as sysbench does.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use mysql_async::prelude::Queryable;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::servers::mysql::MysqlClient;
use crate::servers::Endpoint;
use crate::workloads::oltp::rand::KeyDist;
use crate::workloads::oltp::schema;
use crate::workloads::oltp::spec::OltpSpec;

/// Rows per INSERT: about 190 KB of SQL, well under the default max_allowed_packet.
pub(crate) const CHUNK: u32 = 1000;
pub(crate) const MARKER: &str = "rmatrix_oltp_prepared";

/// What `ensure` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prepared {
    /// The tables were already there with this layout.
    Kept,
    Loaded,
}

/// Make sure `spec.db` holds the tables `spec` needs; load them when it does not.
/// Each loaded chunk and built index counts in `ops` (the stall watchdog's progress).
pub async fn ensure(
    endpoint: &Endpoint,
    spec: &OltpSpec,
    engine: &str,
    ops: &AtomicU64,
) -> Result<Prepared> {
    let db = &spec.db;
    let sig = schema::signature(spec, engine);
    let mut conn = endpoint.connect(None).await?;
    conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{db}`"))
        .await
        .with_context(|| format!("failed to create schema {db}"))?;
    conn.query_drop(format!("USE `{db}`")).await?;
    let have: Option<String> = conn
        .query_first(format!(
            "SELECT signature FROM {MARKER} WHERE EXISTS (SELECT 1 FROM information_schema.tables \
             WHERE table_schema = DATABASE() AND table_name = 'sbtest{}')",
            spec.tables
        ))
        .await
        .unwrap_or(None);
    if have.as_deref() == Some(sig.as_str()) {
        // Closed here, not dropped: a dropped connection is cleaned up in the background
        // and its statements could land inside the measured window.
        crate::servers::mysql::quits::close(conn).await;
        return Ok(Prepared::Kept);
    }
    conn.query_drop(format!("DROP TABLE IF EXISTS {MARKER}"))
        .await?;
    for n in 1..=spec.tables {
        conn.query_drop(format!("DROP TABLE IF EXISTS sbtest{n}"))
            .await?;
        let ddl = schema::create_table(spec, n, engine);
        conn.query_drop(&ddl)
            .await
            .with_context(|| format!("failed: {ddl}"))?;
    }
    load(endpoint, spec, ops).await?;
    if spec.create_secondary {
        let tables: VecDeque<u32> = (1..=spec.tables).collect();
        let queue = Arc::new(Mutex::new(tables));
        let jobs = (0..spec.prepare_threads.clamp(1, spec.tables.max(1))).map(|_| {
            let queue = queue.clone();
            async move {
                let mut c = endpoint.connect(Some(db)).await?;
                while let Some(n) = pop(&queue) {
                    c.query_drop(schema::create_index(n))
                        .await
                        .with_context(|| format!("failed to index sbtest{n}"))?;
                    ops.fetch_add(1, Ordering::Relaxed);
                }
                crate::servers::mysql::quits::close(c).await;
                anyhow::Ok(())
            }
        });
        futures_util::future::try_join_all(jobs).await?;
    }
    conn.query_drop(format!(
        "CREATE TABLE {MARKER}(signature VARCHAR(512) NOT NULL)"
    ))
    .await?;
    conn.exec_drop(format!("INSERT INTO {MARKER} VALUES (?)"), (sig,))
        .await?;
    if schema::takes_unique_ids(spec) {
        super::unique::start(&mut conn).await?;
    }
    crate::servers::mysql::quits::close(conn).await;
    Ok(Prepared::Loaded)
}

pub(crate) fn pop<T>(q: &Mutex<VecDeque<T>>) -> Option<T> {
    q.lock().ok().and_then(|mut q| q.pop_front())
}

/// The rows to load as runs of ids, shared by `prepare_threads` loaders: a whole table per
/// run when there are at least as many tables as loaders (each loader then appends to a
/// table of its own, as sysbench's prepare does), else each table cut into as many
/// contiguous ranges as it takes to keep every loader busy. Loaders inserting into the same
/// end of one index wait on each other's page latches.
async fn load(endpoint: &Endpoint, spec: &OltpSpec, ops: &AtomicU64) -> Result<()> {
    let rows = schema::initial_rows(spec);
    let runs = runs(spec.tables, rows, spec.prepare_threads.max(1));
    if runs.is_empty() {
        return Ok(());
    }
    let threads = spec.prepare_threads.clamp(1, runs.len() as u32);
    let queue = Arc::new(Mutex::new(VecDeque::from(runs)));
    let dist = KeyDist::new(spec);
    let jobs = (0..threads).map(|i| {
        let queue = queue.clone();
        let db = spec.db.clone();
        async move {
            let mut c = endpoint.connect(Some(&db)).await?;
            let mut rng = seeded(spec.rand_seed, i as u64 + 1_000);
            while let Some((n, from, to)) = pop(&queue) {
                let mut first = from;
                while first <= to {
                    let last = (first + CHUNK - 1).min(to);
                    let q = schema::insert_rows(n, first, last, spec.table_size, &dist, &mut rng);
                    c.query_drop(q).await.with_context(|| {
                        format!("failed to load sbtest{n} rows {first}..{last}")
                    })?;
                    ops.fetch_add(1, Ordering::Relaxed);
                    first = last + 1;
                }
            }
            crate::servers::mysql::quits::close(c).await;
            anyhow::Ok(())
        }
    });
    futures_util::future::try_join_all(jobs).await?;
    Ok(())
}

/// (table, first id, last id) runs of `tables` tables of `rows` rows for `loaders` loaders.
pub(crate) fn runs(tables: u32, rows: u32, loaders: u32) -> Vec<(u32, u32, u32)> {
    if rows == 0 {
        return Vec::new();
    }
    let per_table = loaders
        .div_ceil(tables.max(1))
        .clamp(1, rows.div_ceil(CHUNK));
    let mut out = Vec::new();
    for n in 1..=tables {
        let size = rows.div_ceil(per_table);
        let mut first = 1;
        while first <= rows {
            let last = (first + size - 1).min(rows);
            out.push((n, first, last));
            first = last + 1;
        }
    }
    out
}

/// A worker's generator: from `seed` when one is given (repeatable runs), else from the OS.
pub(crate) fn seeded(seed: u64, stream: u64) -> SmallRng {
    if seed == 0 {
        SmallRng::from_os_rng()
    } else {
        SmallRng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ stream)
    }
}

#[cfg(test)]
mod tests {
    use super::runs;

    #[test]
    fn loaders_take_whole_tables_when_there_are_enough_else_ranges() {
        assert_eq!(
            runs(4, 10, 4),
            vec![(1, 1, 10), (2, 1, 10), (3, 1, 10), (4, 1, 10)]
        );
        assert_eq!(runs(8, 10, 4).len(), 8);
        assert_eq!(
            runs(1, 10_000, 4),
            vec![
                (1, 1, 2500),
                (1, 2501, 5000),
                (1, 5001, 7500),
                (1, 7501, 10_000)
            ]
        );
        // No range smaller than a chunk, and every id once.
        assert_eq!(runs(1, 1500, 4), vec![(1, 1, 750), (1, 751, 1500)]);
        assert_eq!(runs(2, 3, 8), vec![(1, 1, 3), (2, 1, 3)]);
        assert!(runs(3, 0, 4).is_empty());
    }
}
