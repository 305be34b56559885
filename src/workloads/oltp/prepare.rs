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
const CHUNK: u32 = 1000;
const MARKER: &str = "rmatrix_oltp_prepared";

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
        conn.disconnect().await?;
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
                c.disconnect().await?;
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
    conn.disconnect().await?;
    Ok(Prepared::Loaded)
}

fn pop<T>(q: &Mutex<VecDeque<T>>) -> Option<T> {
    q.lock().ok().and_then(|mut q| q.pop_front())
}

/// Every (table, first id, last id) chunk, shared by `prepare_threads` loaders.
async fn load(endpoint: &Endpoint, spec: &OltpSpec, ops: &AtomicU64) -> Result<()> {
    let rows = schema::initial_rows(spec);
    let mut chunks = VecDeque::new();
    for n in 1..=spec.tables {
        let mut first = 1;
        while first <= rows {
            let last = (first + CHUNK - 1).min(rows);
            chunks.push_back((n, first, last));
            first = last + 1;
        }
    }
    if chunks.is_empty() {
        return Ok(());
    }
    let threads = spec.prepare_threads.clamp(1, chunks.len() as u32);
    let queue = Arc::new(Mutex::new(chunks));
    let dist = KeyDist::new(spec);
    let jobs = (0..threads).map(|i| {
        let queue = queue.clone();
        let db = spec.db.clone();
        async move {
            let mut c = endpoint.connect(Some(&db)).await?;
            let mut rng = seeded(spec.rand_seed, i as u64 + 1_000);
            while let Some((n, first, last)) = pop(&queue) {
                let q = schema::insert_rows(n, first, last, spec.table_size, &dist, &mut rng);
                c.query_drop(q)
                    .await
                    .with_context(|| format!("failed to load sbtest{n} rows {first}..{last}"))?;
                ops.fetch_add(1, Ordering::Relaxed);
            }
            c.disconnect().await?;
            anyhow::Ok(())
        }
    });
    futures_util::future::try_join_all(jobs).await?;
    Ok(())
}

/// A worker's generator: from `seed` when one is given (repeatable runs), else from the OS.
pub(crate) fn seeded(seed: u64, stream: u64) -> SmallRng {
    if seed == 0 {
        SmallRng::from_os_rng()
    } else {
        SmallRng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ stream)
    }
}
