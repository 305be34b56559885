//! The stall watchdog: an iteration in which no operation completes for `stall_timeout`
//! fails, rather than waiting forever on a server that stopped answering (a `docker pause`,
//! a hung disk) and then recording the stalled phase as a measurement.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long an iteration may go without a completed operation, unless the matrix says.
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(60);

/// An iteration failed because no operation completed for this long.
#[derive(Debug, thiserror::Error)]
#[error(
    "no operation completed for {} s: the server stalled (stall_timeout; the iteration is not \
     measured)",
    .0.as_secs_f64()
)]
pub struct Stalled(pub std::time::Duration);

/// Resolves once `ops` has not moved for `timeout`; never while it keeps moving.
pub async fn watch(ops: &AtomicU64, timeout: Duration) -> Stalled {
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
            return Stalled(timeout);
        }
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
        let stalled = watch(&ops, Duration::from_millis(100)).await;
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
