//! The one place worker stats meet: the phase's per-second statistics (fed by each
//! worker's recorder), the workers' totals, latency and per-thread fairness.

use std::sync::mpsc::Receiver;
use std::sync::Arc;

use super::worker::Summary;
use crate::measure::interval::IntervalStats;
use crate::measure::latency::Latency;
use crate::measure::seconds::Seconds;

pub(crate) struct Collected {
    pub(crate) seconds: Arc<Seconds>,
    pub(crate) workers: Vec<Summary>,
}

/// Receive every worker's totals, until every worker has hung up.
pub(crate) fn collect(rx: Receiver<Summary>, seconds: Arc<Seconds>) -> Collected {
    Collected {
        seconds,
        workers: rx.iter().collect(),
    }
}

impl Collected {
    pub(crate) fn total(&self) -> IntervalStats {
        self.seconds.total()
    }

    pub(crate) fn first_error(&self) -> Option<String> {
        self.workers.iter().find_map(|w| w.first_error.clone())
    }
}

/// The phase's event latencies as a `Latency` (values at their 1% bucket's middle).
pub(crate) fn latency(total: &IntervalStats) -> Latency {
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
    fn latency_keeps_each_event_at_its_bucket() {
        let mut t = IntervalStats::default();
        for us in [500, 3000, 3000, 1000] {
            t.record_event_us(us);
        }
        let l = latency(&t).summary().unwrap();
        assert_eq!(l.count, 4);
        assert!((l.max_ms - 3.0).abs() < 0.03, "{l:?}");
        assert!((l.min_ms - 0.5).abs() < 0.01, "{l:?}");
    }
}
