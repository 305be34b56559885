//! The stall watchdog: an iteration in which no operation completes for `stall_timeout`
//! fails, rather than waiting forever on a server that stopped answering (a `docker pause`,
//! a hung disk) and then recording the stalled phase as a measurement.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::servers::family::Family;
use crate::servers::Endpoint;

/// How long an iteration may go without a completed operation, unless the matrix says.
pub(crate) const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(60);

/// An iteration failed because nothing showed progress for this long: no operation
/// completed (rmatrix's own clients), or the server answered no probe (external tools).
#[derive(Debug, thiserror::Error)]
#[error(
    "{what} for {} s: the server stalled (stall_timeout; the iteration is not measured)",
    .timeout.as_secs_f64()
)]
pub(crate) struct Stalled {
    pub(crate) timeout: Duration,
    pub(crate) what: &'static str,
}

/// Resolves once `ops` has not moved for `timeout`; never while it keeps moving.
pub(crate) async fn watch(ops: &AtomicU64, timeout: Duration, what: &'static str) -> Stalled {
    let tick = (timeout / 10).clamp(Duration::from_millis(10), Duration::from_secs(1));
    let mut last = ops.load(Ordering::Relaxed);
    let mut since = Instant::now();
    loop {
        tokio::time::sleep(tick).await;
        let now = ops.load(Ordering::Relaxed);
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed() >= timeout {
            return Stalled { timeout, what };
        }
    }
}

/// For the external tools, which report progress only when they end: every `timeout / 4`
/// (at most a second) ask the server whether it still answers, over the family's kept
/// connection (`Family::liveness`), each ask bounded by the same interval, and count a tick
/// on `ops` when it answers. A paused or hung server answers nothing, so `ops` stands still
/// and [`watch`] fires. Runs until dropped.
pub(crate) async fn probe_server(
    endpoint: &Endpoint,
    family: &dyn Family,
    timeout: Duration,
    ops: &AtomicU64,
) {
    let every = (timeout / 4).clamp(Duration::from_millis(100), Duration::from_secs(1));
    let mut probe = family.liveness(endpoint);
    loop {
        match tokio::time::timeout(every, probe.ask()).await {
            Ok(Ok(())) => {
                ops.fetch_add(1, Ordering::Relaxed);
            }
            // No answer in time, or an error: start from a new connection next time.
            _ => probe = family.liveness(endpoint),
        }
        tokio::time::sleep(every).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn fires_only_when_nothing_moves() {
        let ops = Arc::new(AtomicU64::new(0));
        let busy = {
            let ops = ops.clone();
            tokio::spawn(async move {
                for _ in 0..30 {
                    ops.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            })
        };
        let started = Instant::now();
        let stalled = watch(&ops, Duration::from_millis(100), "no operation completed").await;
        busy.await.unwrap();
        // 300 ms of progress, then 100 ms of none.
        assert!(
            started.elapsed() >= Duration::from_millis(350),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            stalled.to_string(),
            "no operation completed for 0.1 s: the server stalled (stall_timeout; the iteration \
             is not measured)"
        );
    }
}
