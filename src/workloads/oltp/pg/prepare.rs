//! Loading the sbtest tables on PostgreSQL: the database created when missing, once per
//! table layout (the same marker table as on MySQL), the rows streamed with COPY FROM STDIN
//! over `prepare_threads` connections (whole tables, or ranges of one, as on MySQL), then
//! each table's keys built, in parallel over the tables.

use std::collections::VecDeque;
use std::io::Cursor;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use anyhow::{Context, Result};
use futures_util::SinkExt;

use super::schema;
use crate::servers::postgres::client::{connect, ensure_database};
use crate::servers::Endpoint;
use crate::workloads::oltp::prepare::{pop, runs, seeded, Prepared, CHUNK, MARKER};
use crate::workloads::oltp::rand::KeyDist;
use crate::workloads::oltp::schema::{initial_rows, takes_unique_ids};
use crate::workloads::oltp::spec::OltpSpec;

/// Make sure `spec.db` holds the tables `spec` needs; load them when it does not. Each
/// loaded chunk and built key counts in `ops`. Every connection is gone when it returns
/// (the caller still waits for their backends' exit: `Control::settled`).
pub async fn ensure(endpoint: &Endpoint, spec: &OltpSpec, ops: &AtomicU64) -> Result<Prepared> {
    ensure_database(endpoint, &spec.db).await?;
    let sig = schema::signature(spec);
    let conn = connect(endpoint, &spec.db).await?;
    let last = format!("sbtest{}", spec.tables);
    // No marker table yet is an error: nothing loaded.
    let have: Option<String> = conn
        .query_opt(
            &format!("SELECT signature FROM {MARKER} WHERE to_regclass($1) IS NOT NULL"),
            &[&last],
        )
        .await
        .ok()
        .flatten()
        .map(|r| r.get(0));
    if have.as_deref() == Some(sig.as_str()) {
        return Ok(Prepared::Kept);
    }
    let mut ddl = format!("DROP TABLE IF EXISTS {MARKER};");
    for n in 1..=spec.tables {
        ddl.push_str(&format!(
            "DROP TABLE IF EXISTS sbtest{n}; {};",
            schema::create_table(spec, n)
        ));
    }
    conn.batch_execute(&ddl)
        .await
        .context("failed to create the sbtest tables")?;
    load(endpoint, spec, ops).await?;
    keys(endpoint, spec, ops).await?;
    conn.batch_execute(&format!(
        "CREATE TABLE {MARKER}(signature VARCHAR(512) NOT NULL)"
    ))
    .await?;
    conn.execute(&format!("INSERT INTO {MARKER} VALUES ($1)"), &[&sig])
        .await?;
    if takes_unique_ids(spec) {
        super::unique::start(&conn).await?;
    }
    Ok(Prepared::Loaded)
}

/// The rows, one COPY per run of ids (`prepare::runs`), `CHUNK` rows per message.
async fn load(endpoint: &Endpoint, spec: &OltpSpec, ops: &AtomicU64) -> Result<()> {
    let runs = runs(spec.tables, initial_rows(spec), spec.prepare_threads.max(1));
    if runs.is_empty() {
        return Ok(());
    }
    let threads = spec.prepare_threads.clamp(1, runs.len() as u32);
    let queue = Mutex::new(VecDeque::from(runs));
    let dist = KeyDist::new(spec);
    let jobs = (0..threads).map(|i| {
        let (queue, dist) = (&queue, &dist);
        async move {
            let c = connect(endpoint, &spec.db).await?;
            let mut rng = seeded(spec.rand_seed, i as u64 + 1_000);
            let mut text = String::new();
            while let Some((n, from, to)) = pop(queue) {
                let copy = format!("COPY sbtest{n} (id, k, c, pad) FROM STDIN");
                let sink = c.copy_in::<_, Cursor<Vec<u8>>>(&copy).await?;
                futures_util::pin_mut!(sink);
                let mut first = from;
                while first <= to {
                    let last = (first + CHUNK - 1).min(to);
                    schema::copy_rows(first, last, spec.table_size, dist, &mut rng, &mut text);
                    sink.send(Cursor::new(text.as_bytes().to_vec()))
                        .await
                        .with_context(|| {
                            format!("failed to load sbtest{n} rows {first}..{last}")
                        })?;
                    ops.fetch_add(1, Ordering::Relaxed);
                    first = last + 1;
                }
                sink.finish()
                    .await
                    .with_context(|| format!("failed to load sbtest{n} rows {from}..{to}"))?;
            }
            anyhow::Ok(())
        }
    });
    futures_util::future::try_join_all(jobs).await?;
    Ok(())
}

/// Each table's key, secondary index and sequence, tables shared by `prepare_threads`
/// connections.
async fn keys(endpoint: &Endpoint, spec: &OltpSpec, ops: &AtomicU64) -> Result<()> {
    let queue = Mutex::new((1..=spec.tables).collect::<VecDeque<u32>>());
    let jobs = (0..spec.prepare_threads.clamp(1, spec.tables.max(1))).map(|_| {
        let queue = &queue;
        async move {
            let c = connect(endpoint, &spec.db).await?;
            while let Some(n) = pop(queue) {
                for q in schema::after_load(spec, n) {
                    c.batch_execute(&q)
                        .await
                        .with_context(|| format!("failed: {q}"))?;
                }
                ops.fetch_add(1, Ordering::Relaxed);
            }
            anyhow::Ok(())
        }
    });
    futures_util::future::try_join_all(jobs).await?;
    Ok(())
}
