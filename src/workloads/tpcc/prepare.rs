//! The TPC-C database on any SQL family: made once per deployment and size (a marker table
//! remembers what was loaded, so a kept data set is loaded once), the tables created in the
//! family's words, the items and then the warehouses loaded over `load_threads`
//! connections (a warehouse per connection at a time), and the secondary indexes made last.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, Context, Result};
use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::load::{self, Sink};
use super::rand::Constants;
use super::schema::{self, INDEXES, TABLES};
use super::spec::TpccSpec;
use crate::servers::sql::{SqlClient, SqlFamily};
use crate::servers::Endpoint;

pub(crate) const MARKER: &str = "rmatrix_tpcc_loaded";

/// What the database holds, as the marker keeps it: the size, the engine, and the load's
/// C constant for C_LAST (the run's must keep its distance from it, 2.1.6.1).
pub(crate) fn signature(spec: &TpccSpec, engine: Option<&str>, c: &Constants) -> String {
    format!(
        "tpcc 1; warehouses {}; engine {}; c_last {}; c_id {}; ol_i_id {}",
        spec.warehouses,
        engine.unwrap_or("-"),
        c.c_last,
        c.c_id,
        c.ol_i_id
    )
}

/// The load's constants read back from a marker, when it describes this size and engine.
pub(crate) fn kept(marker: &str, spec: &TpccSpec, engine: Option<&str>) -> Option<Constants> {
    let field = |name: &str| -> Option<u32> {
        let at = marker.find(&format!("; {name} "))? + name.len() + 3;
        marker[at..].split(';').next()?.trim().parse().ok()
    };
    let c = Constants {
        c_last: field("c_last")?,
        c_id: field("c_id")?,
        ol_i_id: field("ol_i_id")?,
    };
    (signature(spec, engine, &c) == marker).then_some(c)
}

/// Make sure `spec.db` holds a TPC-C database of `spec.warehouses`; load it when it does not.
/// The load's constants come back, for the run's. Each loaded warehouse counts in `ops`.
pub(crate) async fn ensure<F: SqlFamily>(
    endpoint: &Endpoint,
    spec: &TpccSpec,
    engine: Option<&str>,
    ops: &AtomicU64,
) -> Result<(Constants, bool)> {
    let mut conn = F::open_db(endpoint, &spec.db).await?;
    let found = F::marker(&mut conn, MARKER, "stock").await;
    if let Some(c) = found.as_deref().and_then(|m| kept(m, spec, engine)) {
        F::close(conn).await;
        return Ok((c, false));
    }
    let mut rng = seeded(spec.rand_seed, u64::MAX);
    let c = Constants::draw(&mut rng);
    F::execute(&mut conn, &format!("DROP TABLE IF EXISTS {MARKER}")).await?;
    let options = F::table_options(engine);
    for (name, text) in TABLES {
        F::execute(&mut conn, &format!("DROP TABLE IF EXISTS {name}")).await?;
        let ddl = schema::create(text, F::DATETIME, &options);
        F::execute(&mut conn, &ddl)
            .await
            .with_context(|| format!("failed: {ddl}"))?;
    }
    load_counted::<F::Client>(endpoint, spec, c, ops)
        .await
        .context("failed to load the TPC-C tables")?;
    for ddl in INDEXES {
        F::execute(&mut conn, ddl)
            .await
            .with_context(|| format!("failed: {ddl}"))?;
    }
    F::remember(&mut conn, MARKER, &signature(spec, engine, &c)).await?;
    F::close(conn).await;
    Ok((c, true))
}

/// A seeded generator for stream `stream` (0: from the clock).
pub(crate) fn seeded(seed: u64, stream: u64) -> SmallRng {
    match seed {
        0 => SmallRng::from_os_rng(),
        s => SmallRng::seed_from_u64(s ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
    }
}

/// The load on threads of its own, each statement it sends counted in `ops` once a second
/// (the stall watchdog's progress: a large load takes minutes).
async fn load_counted<C: SqlClient>(
    endpoint: &Endpoint,
    spec: &TpccSpec,
    c: Constants,
    ops: &AtomicU64,
) -> Result<()> {
    let sent = Arc::new(AtomicU64::new(0));
    let job = crate::workloads::threads::blocking({
        let (endpoint, spec, sent) = (endpoint.clone(), spec.clone(), sent.clone());
        move || load_all::<C>(&endpoint, &spec, c, &sent)
    });
    tokio::pin!(job);
    let mut told = 0;
    loop {
        tokio::select! {
            done = &mut job => return done,
            _ = tokio::time::sleep(std::time::Duration::from_secs(1)) => {
                let now = sent.load(Ordering::Relaxed);
                ops.fetch_add(now - told, Ordering::Relaxed);
                told = now;
            }
        }
    }
}

/// A client connection as a place to send the load's statements, each counted.
struct Loader<'a, C> {
    client: C,
    sent: &'a AtomicU64,
}

impl<C: SqlClient> Sink for Loader<'_, C> {
    fn send(&mut self, sql: &str) -> Result<()> {
        self.client.text(sql).map_err(|(_, e)| anyhow!(e))?;
        self.sent.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// The items, then every warehouse, over `spec.load_threads` connections.
fn load_all<C: SqlClient>(
    endpoint: &Endpoint,
    spec: &TpccSpec,
    c: Constants,
    sent: &AtomicU64,
) -> Result<()> {
    let queue = Mutex::new((1..=spec.warehouses).collect::<VecDeque<u32>>());
    let threads = spec.load_threads.clamp(1, spec.warehouses.max(1));
    std::thread::scope(|s| {
        let loaders: Vec<_> = (0..threads)
            .map(|t| {
                let queue = &queue;
                s.spawn(move || -> Result<()> {
                    let client = C::open(endpoint, &spec.db, 0)?;
                    let mut sink = Loader { client, sent };
                    let mut rng = seeded(spec.rand_seed, u64::from(t));
                    if t == 0 {
                        load::items(&mut rng, &mut sink)?;
                    }
                    while let Some(w) = queue.lock().ok().and_then(|mut q| q.pop_front()) {
                        load::warehouse(w, &c, &mut rng, &mut sink)
                            .with_context(|| format!("warehouse {w}"))?;
                    }
                    Ok(())
                })
            })
            .collect();
        for l in loaders {
            l.join()
                .map_err(|_| anyhow!("a loader thread panicked"))??;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_gives_the_loads_constants_back() {
        let spec = TpccSpec {
            warehouses: 3,
            ..TpccSpec::default()
        };
        let c = Constants {
            c_last: 157,
            c_id: 259,
            ol_i_id: 7911,
        };
        let m = signature(&spec, Some("InnoDB"), &c);
        assert_eq!(kept(&m, &spec, Some("InnoDB")), Some(c));
        assert_eq!(kept(&m, &spec, Some("MyISAM")), None);
        let bigger = TpccSpec {
            warehouses: 4,
            ..TpccSpec::default()
        };
        assert_eq!(kept(&m, &bigger, Some("InnoDB")), None);
        assert_eq!(kept("sbtest", &spec, None), None);
    }
}
