//! Open-loop load: a pacer thread releases arrivals at their intended start times
//! (`arrival::Schedule`), and whichever client connection is free takes the oldest one. A
//! client measures latency from the arrival's intended start, not from when it got round to
//! sending, so a server that falls behind shows up as growing latency and a backlog, never
//! as fewer requests (coordinated omission).
//!
//! Async clients wait on a `Notify`, blocking ones (oltp's threads) on a `Condvar`; both
//! take from the same queue.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::arrival::{Schedule, Shape, Spacing};
use crate::input::Length;
pub(crate) use crate::measure::measurement::PaceStats;

/// A cell's open-loop load: the target rate over time and how arrivals are spaced.
#[derive(Debug, Clone, PartialEq)]
pub struct Pace {
    pub(crate) shape: Shape,
    pub(crate) spacing: Spacing,
    /// Makes a Poisson schedule repeatable.
    pub(crate) seed: u64,
}

impl Pace {
    /// The target rate, for a tool that takes only a number: the shape's highest.
    pub(crate) fn rate(&self) -> u32 {
        self.shape.max_rate().round() as u32
    }
}

/// When a client stops, and when each of its operations starts.
pub(crate) enum Until {
    /// Closed loop: after its share of a count, or at the deadline.
    Closed {
        share: Option<u64>,
        deadline: Option<Instant>,
    },
    /// Open loop: each operation is an arrival; the pacer says when the phase is over.
    Paced(Tickets),
}

/// A request started this much after its intended start is late (the backlog made it wait).
pub(crate) const LATE: Duration = Duration::from_millis(1);

/// Counts kept while the phase runs.
#[derive(Default)]
struct Counts {
    per_second: Vec<u64>,
    scheduled: u64,
    started: u64,
    late: u64,
    max_backlog: u64,
    pacer_late: u64,
}

#[derive(Default)]
struct Queue {
    due: VecDeque<Instant>,
    stats: Counts,
    /// No more arrivals will be released.
    closed: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    cvar: Condvar,
    notify: tokio::sync::Notify,
    stop: AtomicBool,
    /// A timed phase ends here: what is still queued is missed, not drained.
    deadline: Option<Instant>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The oldest due arrival; `Err(())` when the phase is over for clients.
    fn try_take(&self) -> Result<Option<Instant>, ()> {
        let now = Instant::now();
        if self.deadline.is_some_and(|d| now >= d) || self.stop.load(Ordering::Relaxed) {
            return Err(());
        }
        let mut q = self.lock();
        match q.due.pop_front() {
            Some(at) => {
                q.stats.started += 1;
                if now.saturating_duration_since(at) > LATE {
                    q.stats.late += 1;
                }
                Ok(Some(at))
            }
            None if q.closed => Err(()),
            None => Ok(None),
        }
    }
}

/// Hands arrivals to clients; cheap to clone, one per client.
#[derive(Clone)]
pub(crate) struct Tickets(Arc<Shared>);

impl Tickets {
    /// The intended start of the next arrival, waiting for it to be due; None when the
    /// phase is over.
    pub(crate) async fn next(&self) -> Option<Instant> {
        loop {
            let notified = self.0.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            match self.0.try_take() {
                Ok(Some(at)) => return Some(at),
                Err(()) => return None,
                Ok(None) => {}
            }
            match self.0.deadline {
                Some(d) => {
                    let _ = tokio::time::timeout_at(d.into(), notified).await;
                }
                None => notified.await,
            }
        }
    }

    /// `next` for a client on its own OS thread.
    pub(crate) fn next_blocking(&self) -> Option<Instant> {
        loop {
            match self.0.try_take() {
                Ok(Some(at)) => return Some(at),
                Err(()) => return None,
                Ok(None) => {}
            }
            let q = self.0.lock();
            if q.due.is_empty() && !q.closed {
                // Bounded, so that the deadline and `stop` are seen without a release.
                let _ = self.0.cvar.wait_timeout(q, Duration::from_millis(20));
            }
        }
    }
}

/// The releasing thread of one phase; dropping it stops the phase.
pub(crate) struct Pacer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Pacer {
    /// Start releasing arrivals now, for `length`: a count of arrivals (all of them are
    /// served) or a duration (the phase ends at its deadline, backlog or not).
    pub(crate) fn start(pace: &Pace, length: Length) -> std::io::Result<Pacer> {
        let start = Instant::now();
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            cvar: Condvar::new(),
            notify: tokio::sync::Notify::new(),
            stop: AtomicBool::new(false),
            deadline: length.as_duration().map(|d| start + d),
        });
        let schedule = Schedule::new(pace.shape.clone(), pace.spacing, pace.seed);
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("rmatrix-pacer".into())
            .spawn(move || release(&s, schedule, start, length))?;
        Ok(Pacer {
            shared,
            thread: Some(thread),
        })
    }

    pub(crate) fn tickets(&self) -> Tickets {
        Tickets(self.shared.clone())
    }

    /// End the phase (its clients have returned) and say what happened.
    pub(crate) fn finish(mut self) -> PaceStats {
        self.stop();
        let q = self.shared.lock();
        PaceStats {
            scheduled: Some(q.stats.scheduled),
            started: q.stats.started,
            late: Some(q.stats.late),
            missed: Some(q.due.len() as u64),
            max_backlog: Some(q.stats.max_backlog),
            pacer_late: Some(q.stats.pacer_late),
            per_second: q.stats.per_second.clone(),
        }
    }

    fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.shared.lock().closed = true;
        self.shared.notify.notify_waiters();
        self.shared.cvar.notify_all();
    }
}

impl Drop for Pacer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The pacer thread: release each arrival at its time, then close the queue.
fn release(s: &Shared, schedule: Schedule, start: Instant, length: Length) {
    precise_sleeps();
    let limit = match length {
        Length::Queries(n) => n,
        Length::Time(_) => u64::MAX,
    };
    let end = length.as_duration().map(|d| d.as_secs_f64());
    for t in schedule.take(limit as usize) {
        if end.is_some_and(|e| t >= e) {
            break;
        }
        let at = start + Duration::from_secs_f64(t);
        if !wait_until(at, &s.stop) {
            return;
        }
        // Released late: this thread did not get a CPU in time (a client-bound client).
        let behind = Instant::now().saturating_duration_since(at) > LATE;
        {
            let mut q = s.lock();
            q.due.push_back(at);
            q.stats.scheduled += 1;
            q.stats.pacer_late += u64::from(behind);
            let second = t as usize;
            if q.stats.per_second.len() <= second {
                q.stats.per_second.resize(second + 1, 0);
            }
            q.stats.per_second[second] += 1;
            q.stats.max_backlog = q.stats.max_backlog.max(q.due.len() as u64);
        }
        s.notify.notify_one();
        s.cvar.notify_one();
    }
    s.lock().closed = true;
    s.notify.notify_waiters();
    s.cvar.notify_all();
}

/// Sleep until `at`. No spinning: on 2 cores a spinning pacer takes the CPU the server and
/// the clients need. With the timer slack at 1 us a sleep ends 20-40 us late at the median
/// here (80 us at the default slack); that delay is the client's, and it is in the latency,
/// which runs from `at`. Arrivals that fell due meanwhile are released together. False when
/// stopped.
fn wait_until(at: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= at {
            return true;
        }
        // Bounded, so that a stop is seen during a long gap (a wave's trough).
        std::thread::sleep((at - now).min(Duration::from_millis(20)));
    }
}

/// Ask the kernel to wake this thread on time: its default timer slack (50 us) would
/// otherwise delay every release by up to that much.
fn precise_sleeps() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pace(rate: f64) -> Pace {
        Pace {
            shape: Shape::Constant(rate),
            spacing: Spacing::Even,
            seed: 1,
        }
    }

    #[test]
    fn a_count_is_served_in_full_and_a_slow_client_builds_a_backlog() {
        // 200 arrivals at 2000/s (100 ms), one client taking 1 ms each: it can serve
        // 1000/s, so the queue grows and most starts are late, but every arrival is served.
        let p = Pacer::start(&pace(2000.0), Length::Queries(200)).unwrap();
        let t = p.tickets();
        let mut n = 0;
        while let Some(at) = t.next_blocking() {
            assert!(at <= Instant::now(), "never released early");
            std::thread::sleep(Duration::from_millis(1));
            n += 1;
        }
        let s = p.finish();
        assert_eq!(
            (n, s.scheduled, s.started, s.missed),
            (200, Some(200), 200, Some(0))
        );
        assert!(s.max_backlog > Some(50), "{s:?}");
        // The lateness is the slow client's: start k comes at least k ms after the first
        // and was due k/2 ms after it, so every start from the fourth on is late, however
        // late or early the pacer released it. (How often the pacer itself was late depends
        // on the host's load, so it is not asserted.)
        assert!(s.late >= Some(197), "{s:?}");
    }

    #[test]
    fn a_timed_phase_ends_at_its_deadline_and_counts_what_it_left() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let s = rt.block_on(async {
            let p = Pacer::start(&pace(1000.0), Length::Time(Duration::from_millis(300))).unwrap();
            let t = p.tickets();
            let mut n = 0u64;
            while let Some(_at) = t.next().await {
                // 2 ms per request: half the arrivals can be served.
                tokio::time::sleep(Duration::from_millis(2)).await;
                n += 1;
            }
            let s = p.finish();
            assert_eq!(s.started, n);
            s
        });
        let (scheduled, missed) = (s.scheduled.unwrap(), s.missed.unwrap());
        assert!((295..=300).contains(&scheduled), "{s:?}");
        assert_eq!(scheduled, s.started + missed, "{s:?}");
        assert!(missed > 100, "{s:?}");
    }
}
