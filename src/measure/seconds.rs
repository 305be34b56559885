//! Per-second statistics of a measured phase, the same for every driver (sysbench's
//! `--report-interval=1` lines): each client records its events into its own `Recorder`,
//! which hands each finished second to the phase's shared `Seconds`. Nothing is shared per
//! event; one lock is taken per client and second.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::interval::{Counts, IntervalStats, Sample};

/// The seconds of one measured phase, merged across its clients.
pub(crate) struct Seconds {
    start: Instant,
    merged: Mutex<BTreeMap<u32, IntervalStats>>,
}

impl Seconds {
    /// A phase whose clock started at `start`.
    pub(crate) fn new(start: Instant) -> Arc<Seconds> {
        Arc::new(Seconds {
            start,
            merged: Mutex::new(BTreeMap::new()),
        })
    }

    /// A recorder for one client of this phase.
    pub(crate) fn recorder(self: &Arc<Self>) -> Recorder {
        Recorder {
            seconds: self.clone(),
            second: 0,
            cur: IntervalStats::default(),
        }
    }

    fn merge(&self, second: u32, stats: &IntervalStats) {
        let mut merged = self.merged.lock().unwrap_or_else(|e| e.into_inner());
        merged.entry(second).or_default().merge(stats);
    }

    /// Everything recorded so far (the recorders that are still alive hold their current
    /// second).
    pub(crate) fn total(&self) -> IntervalStats {
        let merged = self.merged.lock().unwrap_or_else(|e| e.into_inner());
        let mut t = IntervalStats::default();
        for s in merged.values() {
            t.merge(s);
        }
        t
    }

    /// One sample per complete second of a phase that lasted `elapsed` seconds, its latency
    /// at percentile `pct`; a second in which no event finished is a zero line, as in
    /// sysbench, and the last partial second is left out.
    pub(crate) fn samples(&self, elapsed: f64, threads: u32, pct: f64) -> Vec<Sample> {
        let merged = self.merged.lock().unwrap_or_else(|e| e.into_inner());
        let full = elapsed.floor() as u32;
        let empty = IntervalStats::default();
        (1..=full)
            .map(|s| {
                merged
                    .get(&s)
                    .unwrap_or(&empty)
                    .sample(s, threads, 1.0, pct)
            })
            .collect()
    }
}

impl Seconds {
    /// The last second that ended (its counts as far as the recorders have handed them
    /// over), for a status line; None in the first second.
    pub(crate) fn last_complete(&self, pct: f64) -> Option<Sample> {
        let s = self.start.elapsed().as_secs() as u32;
        if s == 0 {
            return None;
        }
        let merged = self.merged.lock().unwrap_or_else(|e| e.into_inner());
        let empty = IntervalStats::default();
        Some(merged.get(&s).unwrap_or(&empty).sample(s, 0, 1.0, pct))
    }
}

/// Where a driver shows its measured phase while it runs: the status line reads the last
/// complete second from here.
#[derive(Default)]
pub struct Live(Mutex<Option<Arc<Seconds>>>);

impl Live {
    pub(crate) fn set(&self, seconds: &Arc<Seconds>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(seconds.clone());
    }

    /// The measured phase's last complete second, once it has one.
    pub(crate) fn last_second(&self) -> Option<Sample> {
        let s = self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()?;
        s.last_complete(95.0)
    }
}

/// One client's current second. Dropping it hands over what it holds.
pub(crate) struct Recorder {
    seconds: Arc<Seconds>,
    /// Whole seconds since the phase started when `cur` began (0 for the first second).
    second: u32,
    cur: IntervalStats,
}

impl Recorder {
    /// An event (a transaction, a statement, a request) that ended at `end` after `us`
    /// microseconds, with its statement counts.
    #[inline]
    pub(crate) fn event(&mut self, end: Instant, us: u64, counts: &Counts) {
        self.roll(end);
        self.cur.add_counts(counts);
        self.cur.record_event_us(us);
    }

    /// Counts without an event (a failed statement).
    #[inline]
    pub(crate) fn counts(&mut self, at: Instant, counts: &Counts) {
        self.roll(at);
        self.cur.add_counts(counts);
    }

    #[inline]
    fn roll(&mut self, at: Instant) {
        let second = at.saturating_duration_since(self.seconds.start).as_secs() as u32;
        if second != self.second {
            self.flush();
            self.second = second;
        }
    }

    fn flush(&mut self) {
        if self.cur.counts != Counts::default() {
            // Samples are numbered by the end of their second, 1-based like sysbench's.
            self.seconds.merge(self.second + 1, &self.cur);
            self.cur = IntervalStats::default();
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn recorders_merge_by_second_and_fill_gaps() {
        let start = Instant::now();
        let seconds = Seconds::new(start);
        let at = |ms: u64| start + Duration::from_millis(ms);
        let read = Counts {
            reads: 1,
            ..Counts::default()
        };
        let mut a = seconds.recorder();
        let mut b = seconds.recorder();
        a.event(at(100), 1000, &read);
        b.event(at(900), 3000, &read);
        a.event(at(2100), 500, &read);
        b.counts(
            at(2200),
            &Counts {
                errors: 1,
                ..Counts::default()
            },
        );
        drop(a);
        drop(b);
        let samples = seconds.samples(3.4, 2, 95.0);
        assert_eq!(samples.len(), 3);
        assert_eq!(
            (samples[0].second, samples[0].tps, samples[0].qps),
            (1, 2.0, 2.0)
        );
        assert_eq!(samples[1].tps, 0.0, "an empty second is a zero line");
        assert_eq!((samples[2].tps, samples[2].errors_ps), (1.0, 1.0));
        let t = seconds.total();
        assert_eq!(
            (t.counts.events, t.counts.reads, t.counts.errors),
            (3, 3, 1)
        );
        assert!(
            (samples[0].lat_pct_ms - 3.0).abs() < 0.05,
            "{}",
            samples[0].lat_pct_ms
        );
    }
}
