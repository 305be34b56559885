//! What the drivers with blocking clients (oltp, slap) share: running their thread work off
//! the async runtime, a phase of one thread per client behind a start gate, and stopping it
//! when the iteration is given up.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Instant;

use anyhow::{anyhow, Result};

tokio::task_local! {
    /// The CPUs of the client this task drives (a duet side's, `repeat.duet`).
    static CLIENT_CPUS: Arc<[u32]>;
}

/// Run `f`, a cell's measurement, with its client kept on `cpus` (None: anywhere): the
/// threads it starts (`blocking`, the Redis load thread) and the tools it runs
/// (`child::command`) run there.
pub(crate) async fn on_cpus<F: std::future::Future>(cpus: Option<Arc<[u32]>>, f: F) -> F::Output {
    match cpus {
        Some(cpus) => CLIENT_CPUS.scope(cpus, f).await,
        None => f.await,
    }
}

/// The CPUs this task's client is kept on, if any (`on_cpus`).
pub(crate) fn client_cpus() -> Option<Arc<[u32]>> {
    CLIENT_CPUS.try_with(Arc::clone).ok()
}

/// Run blocking client work off the async runtime, on the client's CPUs (`on_cpus`); the
/// threads it starts stay there too.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let cpus = client_cpus();
    tokio::task::spawn_blocking(move || {
        // The pool's thread goes back to other work on the CPUs it had.
        let _pinned = cpus.map(|c| Pinned::to(&c));
        f()
    })
    .await
    .map_err(|e| anyhow!("a client thread failed: {e}"))?
}

/// The set of `cpus` (each below 1024, `untrusted::cpus_of`).
pub(crate) fn cpu_set(cpus: &[u32]) -> libc::cpu_set_t {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET stays within it for CPUs < 1024.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|c| **c < 1024) {
            libc::CPU_SET(c as usize, &mut set);
        }
        set
    }
}

/// Keep this thread (and the threads it starts) on `cpus`; a CPU this host lacks leaves the
/// thread where it was.
pub(crate) fn pin(cpus: &[u32]) {
    set_affinity(&cpu_set(cpus));
}

fn set_affinity(set: &libc::cpu_set_t) {
    // SAFETY: sched_setaffinity only reads the set.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
}

/// This thread pinned to some CPUs until dropped, then back on the CPUs it had.
struct Pinned(libc::cpu_set_t);

impl Pinned {
    fn to(cpus: &[u32]) -> Pinned {
        // SAFETY: sched_getaffinity writes at most the set's size into it.
        let old = unsafe {
            let mut old: libc::cpu_set_t = std::mem::zeroed();
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut old);
            old
        };
        pin(cpus);
        Pinned(old)
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        set_affinity(&self.0);
    }
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
pub(crate) struct Ran<O, P> {
    /// What each thread returned, in start order (a thread that panicked is missing).
    pub(crate) outputs: Vec<O>,
    /// The phase's state from `begin`, back from the threads (None: it never began).
    pub(crate) state: Option<P>,
    /// Seconds from the gate's opening to the last thread's end.
    pub(crate) elapsed: f64,
    /// Threads that panicked.
    pub(crate) panicked: usize,
    /// A thread could not be started, or `begin` failed; the threads then ran nothing.
    pub(crate) error: Option<anyhow::Error>,
}

/// Run `work` for every item, each on its own OS thread named `{name}-{index}`. The threads
/// wait at a gate until all of them exist; then `begin` (on this thread) makes the phase's
/// state from the start instant, so starting 512 threads is not measured, and opens the gate
/// (the threads get None when the phase never began).
pub(crate) fn gated<I, O, P>(
    name: &str,
    items: Vec<I>,
    begin: impl FnOnce(Instant) -> Result<P>,
    work: impl Fn(usize, I, Option<&P>) -> O + Sync,
) -> Ran<O, P>
where
    I: Send,
    O: Send,
    P: Send + Sync,
{
    let n = items.len();
    let state = OnceLock::new();
    let gate = RwLock::new(());
    let (outputs, panicked, start, error) = std::thread::scope(|s| {
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
        // The items not started are dropped here, before the others are waited for.
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
        let mut outputs = Vec::with_capacity(spawned.len());
        let mut panicked = 0;
        for h in spawned {
            match h.join() {
                Ok(o) => outputs.push(o),
                Err(_) => panicked += 1,
            }
        }
        (outputs, panicked, start, error)
    });
    Ran {
        outputs,
        state: state.into_inner(),
        elapsed: start.elapsed().as_secs_f64(),
        panicked,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn allowed(status: &str) -> String {
        let line = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"));
        line.unwrap_or("").trim().to_string()
    }

    /// A duet side's client work runs on its CPUs: the blocking threads, the threads they
    /// start and the tools; the pool's thread gets its CPUs back.
    #[tokio::test]
    async fn a_client_kept_on_cpus_runs_its_threads_and_tools_there() {
        let cpu0: Arc<[u32]> = Arc::from(vec![0]);
        let (inside, started, tool) = on_cpus(Some(cpu0), async {
            let inside = blocking(|| {
                let me = std::fs::read_to_string("/proc/thread-self/status")?;
                let started = std::thread::spawn(|| {
                    std::fs::read_to_string("/proc/thread-self/status").unwrap_or_default()
                });
                Ok((allowed(&me), allowed(&started.join().unwrap_or_default())))
            })
            .await
            .expect("blocking");
            let out = crate::workloads::child::command("cat")
                .arg("/proc/self/status")
                .output()
                .await
                .expect("cat");
            (
                inside.0,
                inside.1,
                allowed(&String::from_utf8_lossy(&out.stdout)),
            )
        })
        .await;
        assert_eq!(
            (inside.as_str(), started.as_str(), tool.as_str()),
            ("0", "0", "0")
        );
        let outside = blocking(|| Ok(std::fs::read_to_string("/proc/thread-self/status")?))
            .await
            .expect("blocking");
        assert_eq!(
            allowed(&outside),
            allowed(&std::fs::read_to_string("/proc/self/status").unwrap())
        );
    }

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
        );
        assert!(ran.error.is_none());
        assert_eq!(ran.outputs, vec![15, 26, 37]);
        assert_eq!((ran.state, ran.panicked), (Some(5), 0));
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
        );
        assert_eq!(ran.error.unwrap().to_string(), "no pacer");
        assert_eq!((ran.outputs, ran.state), (vec![1, 2], None));
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
        );
        assert_eq!((ran.outputs, ran.panicked), (vec![1, 3], 1));
    }
}
