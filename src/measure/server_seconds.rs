//! The server's own counters once a second, on a connection of their own: read at a phase's
//! opening edge, at every whole second after it and at its closing edge, so that the deltas
//! of the seconds add up to the phase's. Each second also carries what the server's cgroup
//! used (CPU, block I/O). A stall, a checkpoint or a purge burst inside the phase shows here
//! beside the client's per-second samples.
//!
//! The reads count in the counters they read (a SHOW GLOBAL STATUS is a statement, an INFO
//! a command): each second's delta has the one read that closed it taken out of the
//! counters the family names (`CounterSource::own_cost`), and the driver takes the phase's
//! reads (`Window::server_reads`) out of the cell's own counter checks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::cgroup::{Cgroup, Usage};
use super::counters::Status;

/// A family's way to read its server's counters (`Family::counter_source`), blocking, each
/// read bounded by a timeout.
pub trait CounterSource: Send {
    /// The counters now.
    fn read(&mut self) -> Result<Status>;
    /// What the file keeps of them, and what one read costs.
    fn rules(&self) -> Rules;
}

/// A family's counters as the per-second file keeps them.
#[derive(Clone, Copy)]
pub struct Rules {
    /// The counters one read adds one to (`Questions`, `Com_show_status`...).
    pub own_cost: &'static [&'static str],
    /// Whether the file keeps a counter, and whether it is a count (recorded as the
    /// second's delta) or a level (recorded as read at the second's end).
    pub kind: fn(&str) -> Option<Kind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Count,
    Level,
}

/// A deployment's counter connection, kept from one iteration to the next: opened once, so
/// that its handshake and its closing are no iteration's work.
#[derive(Clone, Default)]
pub struct CounterSlot(
    Arc<Mutex<Option<Box<dyn CounterSource>>>>,
    /// The connection could not be opened: not tried again for this deployment.
    Arc<AtomicBool>,
);

impl CounterSlot {
    pub fn holding(source: Box<dyn CounterSource>) -> CounterSlot {
        CounterSlot(Arc::new(Mutex::new(Some(source))), Default::default())
    }

    pub(crate) fn failed(&self) -> bool {
        self.1.load(Ordering::Relaxed)
    }

    pub(crate) fn mark_failed(&self) {
        self.1.store(true, Ordering::Relaxed);
    }

    /// Whether a source is kept (none yet, or the last one broke).
    pub fn is_empty(&self) -> bool {
        self.lock().is_none()
    }

    pub(crate) fn put(&self, source: Box<dyn CounterSource>) {
        *self.lock() = Some(source);
    }

    fn take(&self) -> Option<Box<dyn CounterSource>> {
        self.lock().take()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Box<dyn CounterSource>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl std::fmt::Debug for CounterSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.is_empty() {
            "CounterSlot(empty)"
        } else {
            "CounterSlot(kept)"
        })
    }
}

/// Which phase of an iteration a second belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Warmup,
    Measured,
}

/// One interval between two reads: a whole second, or the phase's last part of one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerSecond {
    pub phase: Phase,
    /// 1-based, numbered from the phase's start like samples.csv's seconds.
    pub second: u32,
    /// The interval's length in seconds (below 1 for the phase's last, partial one).
    pub span_s: f64,
    /// A count's delta or a level's reading, by counter; zeros left out.
    pub values: Vec<(String, Kind, u64)>,
}

/// The names of the cgroup's figures among a second's values.
pub(crate) const CGROUP_CPU_US: &str = "cgroup.cpu_us";
pub(crate) const CGROUP_READ_BYTES: &str = "cgroup.read_bytes";
pub(crate) const CGROUP_WRITE_BYTES: &str = "cgroup.write_bytes";

/// One read: when, the counters, the cgroup's usage.
struct Reading {
    at: Instant,
    status: Status,
    usage: Option<Usage>,
}

/// A phase being sampled: its opening read and a thread reading once a second until `stop`.
pub(crate) struct Sampler {
    phase: Phase,
    rules: Rules,
    slot: CounterSlot,
    cgroup: Option<Cgroup>,
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<Option<Box<dyn CounterSource>>>>,
}

struct Shared {
    stop: AtomicBool,
    readings: Mutex<Vec<Reading>>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Reading>> {
        self.readings.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Sampler {
    /// Read the counters now (the opening edge) and then once a second on a thread of its
    /// own; None when the slot holds no source or the first read fails (the phase then has
    /// no server seconds; the broken connection is dropped, and `reads` says 1).
    pub(crate) fn start(
        phase: Phase,
        slot: &CounterSlot,
        cgroup: Option<Cgroup>,
    ) -> Result<Sampler, u64> {
        let Some(mut source) = slot.take() else {
            return Err(0);
        };
        let rules = source.rules();
        let first = read(&mut *source, cgroup.as_ref()).map_err(|_| 1u64)?;
        let start = first.at;
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            readings: Mutex::new(vec![first]),
        });
        let theirs = shared.clone();
        let group = cgroup.clone();
        let thread = std::thread::Builder::new()
            .name("server-seconds".into())
            .spawn(move || {
                for k in 1u64.. {
                    let due = start + Duration::from_secs(k);
                    while !theirs.stop.load(Ordering::Acquire) && Instant::now() < due {
                        std::thread::park_timeout(due.saturating_duration_since(Instant::now()));
                    }
                    if theirs.stop.load(Ordering::Acquire) {
                        break;
                    }
                    if Instant::now() > due + Duration::from_millis(500) {
                        continue; // a read took more than a second: the next one is due
                    }
                    match read(&mut *source, group.as_ref()) {
                        Ok(r) => theirs.lock().push(r),
                        // The server went away: no more reads (the failed one is counted).
                        Err(_) => return None,
                    }
                }
                Some(source)
            })
            .map_err(|_| 1u64)?;
        Ok(Sampler {
            phase,
            rules,
            slot: slot.clone(),
            cgroup,
            shared,
            thread: Some(thread),
        })
    }

    pub(crate) fn phase(&self) -> Phase {
        self.phase
    }

    /// Stop the thread (waiting for a read in flight), read the closing edge, put the
    /// source back for the next phase, and give the phase's seconds and how many reads it
    /// sent (a failed read may have counted on the server too).
    pub(crate) fn stop(mut self) -> (Vec<ServerSecond>, u64) {
        self.shared.stop.store(true, Ordering::Release);
        let source = self.thread.take().and_then(|t| {
            t.thread().unpark();
            t.join().ok().flatten()
        });
        let mut readings = std::mem::take(&mut *self.shared.lock());
        let mut reads = readings.len() as u64;
        match source {
            Some(mut source) => {
                reads += 1;
                if let Ok(last) = read(&mut *source, self.cgroup.as_ref()) {
                    readings.push(last);
                    self.slot.put(source);
                }
            }
            None => reads += 1, // the read that failed
        }
        (seconds(self.phase, &readings, self.rules), reads)
    }
}

impl Drop for Sampler {
    /// A phase that never closed (a stalled iteration, dropped by the watchdog): the thread
    /// is told to stop and not waited for (it may sit in a read of a paused server); it ends
    /// after that read and drops the connection, which must not go on reading into the next
    /// iteration's counters.
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
        }
    }
}

fn read(source: &mut dyn CounterSource, cgroup: Option<&Cgroup>) -> Result<Reading> {
    let status = source.read()?;
    Ok(Reading {
        at: Instant::now(),
        status,
        usage: cgroup.and_then(Cgroup::read),
    })
}

/// The intervals between consecutive readings: each count's delta less the one read that
/// closed the interval, each level as read at its end, the cgroup's usage; zeros left out.
fn seconds(phase: Phase, readings: &[Reading], rules: Rules) -> Vec<ServerSecond> {
    let Some(first) = readings.first() else {
        return Vec::new();
    };
    readings
        .windows(2)
        .enumerate()
        .map(|(i, w)| {
            let (a, b) = (&w[0], &w[1]);
            let mut values = Vec::new();
            for (name, now) in &b.status {
                let Some(kind) = (rules.kind)(name) else {
                    continue;
                };
                let value = match kind {
                    Kind::Level => *now,
                    Kind::Count => {
                        let own = u64::from(rules.own_cost.contains(&name.as_str()));
                        let before = a.status.get(name).copied().unwrap_or(0);
                        now.saturating_sub(before).saturating_sub(own)
                    }
                };
                values.push((name.clone(), kind, value));
            }
            if let (Some(x), Some(y)) = (a.usage, b.usage) {
                let used = y.since(&x);
                values.push((CGROUP_CPU_US.into(), Kind::Count, used.cpu_ns / 1000));
                values.push((CGROUP_READ_BYTES.into(), Kind::Count, used.read_bytes));
                values.push((CGROUP_WRITE_BYTES.into(), Kind::Count, used.write_bytes));
            }
            values.retain(|(_, _, v)| *v != 0);
            let since = |r: &Reading| r.at.duration_since(first.at).as_secs_f64();
            ServerSecond {
                phase,
                second: i as u32 + 1,
                span_s: ((since(b) - since(a)) * 1e6).round() / 1e6,
                values,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &str) -> Option<Kind> {
        match name {
            "Threads_running" => Some(Kind::Level),
            "Questions" | "Com_select" => Some(Kind::Count),
            _ => None,
        }
    }

    const RULES: Rules = Rules {
        own_cost: &["Questions"],
        kind,
    };

    fn reading(at: Instant, pairs: &[(&str, u64)]) -> Reading {
        Reading {
            at,
            status: pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            usage: None,
        }
    }

    #[test]
    fn seconds_are_deltas_less_the_read_that_closed_them() {
        let t = Instant::now();
        let r = [
            reading(
                t,
                &[
                    ("Questions", 100),
                    ("Com_select", 50),
                    ("Threads_running", 1),
                    ("Uptime", 9),
                ],
            ),
            reading(
                t + Duration::from_secs(1),
                &[
                    ("Questions", 131),
                    ("Com_select", 80),
                    ("Threads_running", 5),
                ],
            ),
            reading(
                t + Duration::from_millis(1400),
                &[
                    ("Questions", 132),
                    ("Com_select", 80),
                    ("Threads_running", 1),
                ],
            ),
        ];
        let s = seconds(Phase::Measured, &r, RULES);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].second, 1);
        assert_eq!(s[0].span_s, 1.0);
        assert_eq!(
            s[0].values,
            [
                ("Com_select".to_string(), Kind::Count, 30),
                ("Questions".into(), Kind::Count, 30),
                ("Threads_running".into(), Kind::Level, 5)
            ]
        );
        // The last, partial interval: only the closing read ran in it, and zeros are left out.
        assert_eq!(s[1].span_s, 0.4);
        assert_eq!(
            s[1].values,
            [("Threads_running".to_string(), Kind::Level, 1)]
        );
        // The seconds add up to the phase's delta, reads taken out.
        let sum: u64 = s
            .iter()
            .flat_map(|s| &s.values)
            .filter(|(k, _, _)| k == "Questions")
            .map(|(_, _, v)| v)
            .sum();
        assert_eq!(sum, 132 - 100 - 2);
    }

    /// A source whose every read counts in `Questions`, as SHOW GLOBAL STATUS does.
    struct Fake {
        questions: u64,
        fail_after: Option<u32>,
    }

    impl CounterSource for Fake {
        fn read(&mut self) -> Result<Status> {
            if let Some(n) = self.fail_after.as_mut() {
                if *n == 0 {
                    anyhow::bail!("gone");
                }
                *n -= 1;
            }
            self.questions += 1;
            Ok(Status::from([("Questions".to_string(), self.questions)]))
        }
        fn rules(&self) -> Rules {
            RULES
        }
    }

    fn slot(fail_after: Option<u32>) -> CounterSlot {
        CounterSlot::holding(Box::new(Fake {
            questions: 0,
            fail_after,
        }))
    }

    #[test]
    fn a_phase_counts_its_reads_and_gives_the_source_back() {
        let slot = slot(None);
        let s = Sampler::start(Phase::Measured, &slot, None).ok().unwrap();
        assert!(slot.is_empty(), "taken for the phase");
        std::thread::sleep(Duration::from_millis(1100));
        let (secs, reads) = s.stop();
        assert_eq!(
            reads, 3,
            "the opening read, one a second later, the closing one"
        );
        assert_eq!(secs.len(), 2);
        // Nothing but the reads ran: every delta is zero and left out.
        assert!(secs.iter().all(|s| s.values.is_empty()), "{secs:?}");
        assert!(!slot.is_empty(), "back for the next phase");
    }

    #[test]
    fn a_source_that_fails_is_dropped_and_its_reads_counted() {
        let broken = slot(Some(0));
        assert_eq!(Sampler::start(Phase::Warmup, &broken, None).err(), Some(1));
        assert!(broken.is_empty());
        assert_eq!(Sampler::start(Phase::Warmup, &broken, None).err(), Some(0));
        // Fails at the closing read: the seconds so far, and no source kept.
        let late = slot(Some(1));
        let s = Sampler::start(Phase::Measured, &late, None).ok().unwrap();
        let (secs, reads) = s.stop();
        assert_eq!((secs.len(), reads), (0, 2));
        assert!(late.is_empty());
    }

    #[test]
    fn a_phase_that_never_closes_stops_reading() {
        let slot = slot(None);
        let s = Sampler::start(Phase::Measured, &slot, None).ok().unwrap();
        let shared = s.shared.clone();
        drop(s);
        std::thread::sleep(Duration::from_millis(1300));
        assert_eq!(
            shared.lock().len(),
            1,
            "no read after the drop: only the opening one"
        );
    }
}
