//! The one place worker stats meet: per-second intervals merged across workers, totals,
//! latency and per-thread fairness.

use std::collections::BTreeMap;

use std::sync::mpsc::Receiver;

use super::worker::{Msg, Summary};
use crate::measure::interval::{IntervalStats, Sample};
use crate::measure::latency::Latency;

#[derive(Default)]
pub struct Collected {
    pub seconds: BTreeMap<u32, IntervalStats>,
    pub workers: Vec<Summary>,
}

/// Receive until every worker has hung up.
pub fn collect(rx: Receiver<Msg>) -> Collected {
    let mut c = Collected::default();
    while let Ok(msg) = rx.recv() {
        match msg {
            Msg::Second { second, stats } => c.seconds.entry(second).or_default().merge(&stats),
            Msg::Done(s) => c.workers.push(s),
        }
    }
    c
}

impl Collected {
    pub fn total(&self) -> IntervalStats {
        let mut t = IntervalStats::default();
        for s in self.seconds.values() {
            t.merge(s);
        }
        t
    }

    /// One sample per complete second of a phase that lasted `elapsed` seconds; a second
    /// in which no event finished is a zero line, as in sysbench.
    pub fn samples(&self, elapsed: f64, threads: u32, pct: f64) -> Vec<Sample> {
        let full = elapsed.floor() as u32;
        let empty = IntervalStats::default();
        (1..=full)
            .map(|s| {
                self.seconds
                    .get(&s)
                    .unwrap_or(&empty)
                    .sample(s, threads, 1.0, pct)
            })
            .collect()
    }

    pub fn first_error(&self) -> Option<String> {
        self.workers.iter().find_map(|w| w.first_error.clone())
    }
}

/// The phase's event latencies as a `Latency` (values at their 1% bucket's middle).
pub fn latency(total: &IntervalStats) -> Latency {
    let mut l = Latency::default();
    for v in total.hist.iter_recorded() {
        let us = total.hist.median_equivalent(v.value_iterated_to());
        for _ in 0..v.count_at_value() {
            l.record_us(us);
        }
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_fill_gaps_and_drop_the_partial_second() {
        let mut c = Collected::default();
        let mut s1 = IntervalStats::default();
        s1.record_event_us(1000);
        s1.counts.reads = 10;
        let mut s3 = IntervalStats::default();
        s3.record_event_us(3000);
        s3.record_event_us(3000);
        let mut s4 = IntervalStats::default();
        s4.record_event_us(500);
        c.seconds.insert(1, s1);
        c.seconds.insert(3, s3);
        c.seconds.insert(4, s4);
        let samples = c.samples(3.4, 2, 95.0);
        assert_eq!(samples.len(), 3);
        assert_eq!(samples[0].tps, 1.0);
        assert_eq!(samples[1].tps, 0.0);
        assert_eq!(samples[2].tps, 2.0);
        let t = c.total();
        assert_eq!(t.counts.events, 4);
        assert_eq!(t.counts.reads, 10);
        let l = latency(&t).summary().unwrap();
        assert_eq!(l.count, 4);
        assert!((l.max_ms - 3.0).abs() < 0.03, "{l:?}");
        assert!((l.min_ms - 0.5).abs() < 0.01, "{l:?}");
    }
}
