//! Loading the sbtest tables on any SQL family: once per deployment and table layout (a
//! marker table remembers what was loaded), the rows over `prepare_threads` connections in
//! the family's bulk form (`SqlFamily::load`), then what each table gets once loaded (its
//! keys: `SqlFamily::after_load`), in parallel over the tables, as sysbench does.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use anyhow::{Context, Result};
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::servers::spec::ServerKind;
use crate::servers::sql::{FamilyFuture, SqlFamily, Tables, WithSql};
use crate::servers::Endpoint;
use crate::workloads::oltp::rand::KeyDist;
use crate::workloads::oltp::schema;
use crate::workloads::oltp::spec::OltpSpec;
use crate::workloads::oltp::unique::{Ids, TABLE};
use crate::workloads::sql_family::sql_family;

/// Rows per INSERT (or COPY message): about 190 KB of SQL, well under the default
/// max_allowed_packet.
pub(crate) const CHUNK: u32 = 1000;
pub(crate) const MARKER: &str = "rmatrix_oltp_prepared";

/// What `ensure` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prepared {
    /// The tables were already there with this layout.
    Kept,
    Loaded,
}

/// Make sure `spec.db` on a server of `kind` holds the tables `spec` needs (in `engine`,
/// else `spec`'s, where the family has storage engines); load them when it does not. Each
/// loaded chunk and each table's keys count in `ops` (the stall watchdog's progress).
pub fn ensure<'a>(
    kind: ServerKind,
    endpoint: &'a Endpoint,
    spec: &'a OltpSpec,
    engine: Option<&'a str>,
    ops: &'a AtomicU64,
) -> FamilyFuture<'a, Result<Prepared>> {
    let ensure = Ensure {
        endpoint,
        spec,
        engine,
        ops,
    };
    sql_family(kind, "oltp", ensure)
}

/// `ensure`, once the family is known.
struct Ensure<'a> {
    endpoint: &'a Endpoint,
    spec: &'a OltpSpec,
    engine: Option<&'a str>,
    ops: &'a AtomicU64,
}

impl<'a> WithSql for Ensure<'a> {
    type Output = FamilyFuture<'a, Result<Prepared>>;

    fn with<F: SqlFamily>(self) -> Self::Output {
        let engine = F::engine(self.engine, &self.spec.mysql_storage_engine);
        Box::pin(ensure_on::<F>(self.endpoint, self.spec, engine, self.ops))
    }
}

/// `ensure` on family `F`, in `engine` where it has engines. Every connection is closed
/// when it returns.
pub(crate) async fn ensure_on<F: SqlFamily>(
    endpoint: &Endpoint,
    spec: &OltpSpec,
    engine: Option<&str>,
    ops: &AtomicU64,
) -> Result<Prepared> {
    let tables = schema::tables(spec, engine);
    let sig = schema::signature(spec, engine);
    let mut conn = F::open_db(endpoint, &spec.db).await?;
    let last = format!("sbtest{}", spec.tables);
    if F::marker(&mut conn, MARKER, &last).await.as_deref() == Some(sig.as_str()) {
        F::close(conn).await;
        return Ok(Prepared::Kept);
    }
    F::create_tables(&mut conn, &tables, MARKER).await?;
    load::<F>(endpoint, spec, ops).await?;
    keys::<F>(endpoint, &tables, spec.prepare_threads, ops).await?;
    F::remember(&mut conn, MARKER, &sig).await?;
    if schema::takes_unique_ids(spec) {
        F::start_ids(&mut conn, TABLE, Ids::fresh().offset()).await?;
    }
    F::close(conn).await;
    Ok(Prepared::Loaded)
}

/// What each table gets once loaded, tables shared by `loaders` connections; none are
/// opened when there is nothing to do.
async fn keys<F: SqlFamily>(
    endpoint: &Endpoint,
    tables: &Tables<'_>,
    loaders: u32,
    ops: &AtomicU64,
) -> Result<()> {
    if (1..=tables.count).all(|n| F::after_load(tables, n).is_empty()) {
        return Ok(());
    }
    let queue = Mutex::new((1..=tables.count).collect::<VecDeque<u32>>());
    let jobs = (0..loaders.clamp(1, tables.count.max(1))).map(|_| {
        let queue = &queue;
        async move {
            let mut c = F::connect(endpoint, tables.db).await?;
            while let Some(n) = pop(queue) {
                for q in F::after_load(tables, n) {
                    F::execute(&mut c, &q)
                        .await
                        .with_context(|| format!("failed: {q}"))?;
                }
                ops.fetch_add(1, Ordering::Relaxed);
            }
            F::close(c).await;
            anyhow::Ok(())
        }
    });
    futures_util::future::try_join_all(jobs).await?;
    Ok(())
}

pub(crate) fn pop<T>(q: &Mutex<VecDeque<T>>) -> Option<T> {
    q.lock().ok().and_then(|mut q| q.pop_front())
}

/// The rows to load as runs of ids, shared by `prepare_threads` loaders: a whole table per
/// run when there are at least as many tables as loaders (each loader then appends to a
/// table of its own, as sysbench's prepare does), else each table cut into as many
/// contiguous ranges as it takes to keep every loader busy. Loaders inserting into the same
/// end of one index wait on each other's page latches.
async fn load<F: SqlFamily>(endpoint: &Endpoint, spec: &OltpSpec, ops: &AtomicU64) -> Result<()> {
    let rows = schema::initial_rows(spec);
    let runs = runs(spec.tables, rows, spec.prepare_threads.max(1));
    if runs.is_empty() {
        return Ok(());
    }
    let threads = spec.prepare_threads.clamp(1, runs.len() as u32);
    let queue = Mutex::new(VecDeque::from(runs));
    let dist = KeyDist::new(spec);
    let jobs = (0..threads).map(|i| {
        let (queue, dist) = (&queue, &dist);
        async move {
            let mut c = F::connect(endpoint, &spec.db).await?;
            let mut rng = seeded(spec.rand_seed, i as u64 + 1_000);
            let mut rows = |first, last| schema::rows(first, last, spec.table_size, dist, &mut rng);
            let sent = || {
                ops.fetch_add(1, Ordering::Relaxed);
            };
            while let Some((n, from, to)) = pop(queue) {
                F::load(&mut c, n, &chunks(from, to), &mut rows, &sent).await?;
            }
            F::close(c).await;
            anyhow::Ok(())
        }
    });
    futures_util::future::try_join_all(jobs).await?;
    Ok(())
}

/// Ids `from..=to` as `CHUNK`-row chunks.
fn chunks(from: u32, to: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut first = from;
    while first <= to {
        let last = (first + CHUNK - 1).min(to);
        out.push((first, last));
        first = last + 1;
    }
    out
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
    use super::{chunks, runs};

    #[test]
    fn chunks_cover_a_run_once() {
        assert_eq!(chunks(1, 2500), vec![(1, 1000), (1001, 2000), (2001, 2500)]);
        assert_eq!(chunks(7, 7), vec![(7, 7)]);
    }

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
