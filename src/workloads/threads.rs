//! What the drivers with blocking clients (oltp, slap) share: running their thread work off
//! the async runtime, a phase of one thread per client behind a start gate, and stopping it
//! when the iteration is given up.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Instant;

use anyhow::{anyhow, Result};

/// Run blocking client work off the async runtime.
pub(crate) async fn blocking<T: Send + 'static>(
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
pub(crate) struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }
}

impl Drop for Cancel {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// What a gated phase gave back.
pub(crate) struct Ran<O, P, D> {
    /// What each thread returned, in start order (a thread that panicked is missing).
    pub(crate) outputs: Vec<O>,
    /// The phase's state from `begin`, back from the threads (None: it never began).
    pub(crate) state: Option<P>,
    /// What `during` returned.
    pub(crate) during: D,
    /// Seconds from the gate's opening to the last thread's end.
    pub(crate) elapsed: f64,
    /// Threads that panicked.
    pub(crate) panicked: usize,
    /// A thread could not be started, or `begin` failed; the threads then ran nothing.
    pub(crate) error: Option<anyhow::Error>,
}

/// Run `work` for every item, each on its own OS thread named `{name}-{index}`. The threads
/// wait at a gate until all of them exist; then `begin` (on this thread) makes the phase's
/// state from the start instant, so starting 512 threads is not measured, and opens the gate.
/// `during` runs on this thread while they work (it gets None, and the threads too, when the
/// phase never began).
pub(crate) fn gated<I, O, P, D>(
    name: &str,
    items: Vec<I>,
    begin: impl FnOnce(Instant) -> Result<P>,
    work: impl Fn(usize, I, Option<&P>) -> O + Sync,
    during: impl FnOnce(Instant, Option<&P>) -> D,
) -> Ran<O, P, D>
where
    I: Send,
    O: Send,
    P: Send + Sync,
{
    let n = items.len();
    let state = OnceLock::new();
    let gate = RwLock::new(());
    let (outputs, panicked, during, start, error) = std::thread::scope(|s| {
        let closed = gate.write().unwrap_or_else(|e| e.into_inner());
        let mut spawned = Vec::with_capacity(n);
        let mut error = None;
        for (i, item) in items.into_iter().enumerate() {
            let (state, gate, work) = (&state, &gate, &work);
            let started = std::thread::Builder::new()
                .name(format!("{name}-{i}"))
                .spawn_scoped(s, move || {
                    drop(gate.read());
                    work(i, item, state.get())
                });
            match started {
                Ok(h) => spawned.push(h),
                Err(e) => {
                    error = Some(anyhow!(
                        "failed to start client thread {} of {n}: {e}",
                        i + 1
                    ));
                    break;
                }
            }
        }
        // The items not started are dropped here, before `during` waits on the others.
        let start = Instant::now();
        if error.is_none() {
            match begin(start) {
                Ok(p) => {
                    let _ = state.set(p);
                }
                Err(e) => error = Some(e),
            }
        }
        drop(closed);
        let during = during(start, state.get());
        let mut outputs = Vec::with_capacity(spawned.len());
        let mut panicked = 0;
        for h in spawned {
            match h.join() {
                Ok(o) => outputs.push(o),
                Err(_) => panicked += 1,
            }
        }
        (outputs, panicked, during, start, error)
    });
    Ran {
        outputs,
        state: state.into_inner(),
        during,
        elapsed: start.elapsed().as_secs_f64(),
        panicked,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn threads_wait_for_the_phase_and_come_back_in_order() {
        let begun = AtomicBool::new(false);
        let ran = gated(
            "t",
            vec![10, 20, 30],
            |_| {
                // Every thread exists by now; none may have worked yet.
                std::thread::sleep(std::time::Duration::from_millis(20));
                begun.store(true, Ordering::SeqCst);
                Ok(5)
            },
            |i, item, phase| {
                assert!(
                    begun.load(Ordering::SeqCst),
                    "thread {i} ran before the gate opened"
                );
                item + i + phase.copied().unwrap_or(0)
            },
            |_, phase| phase.copied(),
        );
        assert!(ran.error.is_none());
        assert_eq!(ran.outputs, vec![15, 26, 37]);
        assert_eq!((ran.state, ran.during, ran.panicked), (Some(5), Some(5), 0));
    }

    #[test]
    fn a_failed_begin_runs_nothing_and_says_why() {
        let worked = AtomicUsize::new(0);
        let ran = gated(
            "t",
            vec![1, 2],
            |_| -> Result<u32> { Err(anyhow!("no pacer")) },
            |_, item, phase| {
                if phase.is_some() {
                    worked.fetch_add(1, Ordering::SeqCst);
                }
                item
            },
            |_, phase| phase.is_none(),
        );
        assert_eq!(ran.error.unwrap().to_string(), "no pacer");
        assert_eq!(
            (ran.outputs, ran.state, ran.during),
            (vec![1, 2], None, true)
        );
        assert_eq!(worked.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_panicked_thread_is_counted_not_returned() {
        let ran = gated(
            "t",
            vec![1, 2, 3],
            |_| Ok(()),
            |_, item, _| {
                assert!(item != 2, "a client thread failed on purpose");
                item
            },
            |_, _| (),
        );
        assert_eq!((ran.outputs, ran.panicked), (vec![1, 3], 1));
    }
}
