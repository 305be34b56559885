//! What the drivers with blocking clients (oltp, slap) share: running their thread work off
//! the async runtime, and stopping it when the iteration is given up.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{anyhow, Result};

/// Run blocking client work off the async runtime.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| anyhow!("a client thread failed: {e}"))?
}

/// Sets its flag when dropped: a driver future dropped midway (the stall watchdog gave up on
/// the iteration) stops its client threads at their next operation, or they would go on
/// loading the server under the next iteration.
#[derive(Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }
}

impl Drop for Cancel {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
