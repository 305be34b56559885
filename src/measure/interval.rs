//! Per-second interval statistics (sysbench's `--report-interval=1` lines): what a worker
//! accumulates during one second, mergeable across workers, turned into rates.

use hdrhistogram::Histogram;

/// Statement counters of one event, kept apart from the histogram so that tallying an
/// event allocates nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Counts {
    pub(crate) events: u64,
    pub(crate) reads: u64,
    pub(crate) writes: u64,
    pub(crate) others: u64,
    pub(crate) errors: u64,
    pub(crate) reconnects: u64,
}

impl Counts {
    const NONE: Counts = Counts {
        events: 0,
        reads: 0,
        writes: 0,
        others: 0,
        errors: 0,
        reconnects: 0,
    };
    /// One statement or request of each class, and one that failed.
    pub(crate) const READ: Counts = Counts {
        reads: 1,
        ..Counts::NONE
    };
    pub(crate) const WRITE: Counts = Counts {
        writes: 1,
        ..Counts::NONE
    };
    pub(crate) const OTHER: Counts = Counts {
        others: 1,
        ..Counts::NONE
    };
    pub(crate) const ERROR: Counts = Counts {
        errors: 1,
        ..Counts::NONE
    };

    pub(crate) fn queries(&self) -> u64 {
        self.reads + self.writes + self.others
    }

    pub(crate) fn add(&mut self, o: &Counts) {
        self.events += o.events;
        self.reads += o.reads;
        self.writes += o.writes;
        self.others += o.others;
        self.errors += o.errors;
        self.reconnects += o.reconnects;
    }
}

/// Counts and event latencies of one worker (or all workers) over one interval.
/// The histogram keeps 2 significant digits (1% buckets, finer than sysbench's 1.8%) so
/// that hundreds of workers each holding one stay small.
#[derive(Clone)]
pub(crate) struct IntervalStats {
    pub(crate) counts: Counts,
    pub(crate) hist: Histogram<u64>,
}

impl Default for IntervalStats {
    fn default() -> Self {
        IntervalStats {
            counts: Counts::default(),
            hist: Histogram::new_with_bounds(1, 3_600_000_000, 2)
                .expect("invariant: valid histogram bounds"),
        }
    }
}

impl IntervalStats {
    /// Add one event's (or any tally's) counters.
    pub(crate) fn add_counts(&mut self, o: &Counts) {
        self.counts.add(o);
    }

    pub(crate) fn record_event_us(&mut self, us: u64) {
        self.counts.events += 1;
        self.hist.saturating_record(us.max(1));
    }

    pub(crate) fn merge(&mut self, o: &IntervalStats) {
        self.counts.add(&o.counts);
        self.hist
            .add(&o.hist)
            .expect("invariant: same bounds for every interval histogram");
    }

    /// Latency at percentile `p` (0-100) in ms; 0 when the interval saw no event.
    pub(crate) fn percentile_ms(&self, p: f64) -> f64 {
        if self.hist.is_empty() {
            return 0.0;
        }
        self.hist.value_at_quantile(p / 100.0) as f64 / 1000.0
    }

    /// Rates over an interval of `seconds`.
    pub(crate) fn sample(&self, second: u32, threads: u32, seconds: f64, pct: f64) -> Sample {
        let r = |n: u64| n as f64 / seconds;
        let c = &self.counts;
        Sample {
            second,
            threads,
            tps: r(c.events),
            qps: r(c.queries()),
            reads_ps: r(c.reads),
            writes_ps: r(c.writes),
            others_ps: r(c.others),
            lat_pct_ms: self.percentile_ms(pct),
            lat_p99_ms: Some(self.percentile_ms(99.0)),
            errors_ps: r(c.errors),
            reconnects_ps: r(c.reconnects),
            target_ps: None,
            client_busy_pct: None,
        }
    }
}

/// One per-second line, as sysbench prints it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    /// 1-based end of the interval, like sysbench's `[ 1s ]`.
    pub(crate) second: u32,
    pub(crate) threads: u32,
    pub tps: f64,
    pub(crate) qps: f64,
    pub(crate) reads_ps: f64,
    pub(crate) writes_ps: f64,
    pub(crate) others_ps: f64,
    pub(crate) lat_pct_ms: f64,
    /// The second's p99 where the driver keeps a histogram (sysbench prints one percentile).
    pub lat_p99_ms: Option<f64>,
    pub(crate) errors_ps: f64,
    pub(crate) reconnects_ps: f64,
    /// Open loop: arrivals scheduled in this second (the target, as the pacer drew it).
    pub(crate) target_ps: Option<f64>,
    /// What the client wanted of its cores this second, in percent (`client_busy_pct`).
    pub(crate) client_busy_pct: Option<f64>,
}

/// Mean and population standard deviation (sysbench's thread fairness).
pub(crate) fn mean_stddev(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_intervals_give_rates_and_percentiles() {
        let mut a = IntervalStats::default();
        let mut b = IntervalStats::default();
        for us in 1..=50 {
            a.record_event_us(us * 100);
        }
        for us in 51..=100 {
            b.record_event_us(us * 100);
        }
        a.counts.reads = 140;
        a.counts.writes = 40;
        b.counts.others = 20;
        b.counts.errors = 2;
        a.merge(&b);
        let s = a.sample(3, 4, 2.0, 95.0);
        assert_eq!(s.second, 3);
        assert_eq!(s.tps, 50.0);
        assert_eq!(s.qps, 100.0);
        assert_eq!((s.reads_ps, s.writes_ps, s.others_ps), (70.0, 20.0, 10.0));
        assert_eq!(s.errors_ps, 1.0);
        // p95 of 0.1..10 ms in 0.1 ms steps is 9.5 ms, within the 1% bucket width.
        assert!((s.lat_pct_ms - 9.5).abs() < 0.1, "{}", s.lat_pct_ms);
        assert_eq!(IntervalStats::default().percentile_ms(95.0), 0.0);
    }

    #[test]
    fn fairness_is_population_stddev() {
        let (m, sd) = mean_stddev(&[10.0, 20.0]);
        assert_eq!((m, sd), (15.0, 5.0));
        assert_eq!(mean_stddev(&[]), (0.0, 0.0));
    }
}
