//! What pgbench prints at the end of a run (its summary, on stdout), and its transaction
//! log (`-l`: one line per transaction, with its latency from the scheduled start and, in
//! open loop, the schedule lag): every transaction's latency, and the seconds they ended in.

use std::collections::BTreeMap;

use crate::measure::interval::{IntervalStats, Sample};
use crate::measure::latency::Latency;

/// pgbench's summary of a run.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Summary {
    pub(crate) transactions: u64,
    pub(crate) failed: u64,
    /// Open loop with `--latency-limit`: transactions never sent, being late already.
    pub(crate) skipped: u64,
    pub(crate) latency_avg_ms: f64,
    pub(crate) latency_stddev_ms: Option<f64>,
    pub(crate) tps: f64,
    pub(crate) lag_max_ms: Option<f64>,
}

/// A summary line lacked, or had no number.
#[derive(Debug, thiserror::Error)]
#[error("pgbench printed no `{0}` line in its summary")]
pub(crate) struct MissingLine(&'static str);

fn after<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.find(key).map(|i| &line[i + key.len()..])
}

/// The number a text starts with (`2000/2000` -> 2000, `0.740 (max` -> 0.74).
fn num(s: &str) -> Option<f64> {
    let s = s.trim_start();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(s.len());
    s[..end].parse().ok()
}

pub(crate) fn summary(text: &str) -> Result<Summary, MissingLine> {
    let mut s = Summary::default();
    let (mut seen_tx, mut seen_tps, mut seen_lat) = (false, false, false);
    for line in text.lines().map(str::trim) {
        let field = |k: &str| after(line, k).and_then(num);
        if let Some(n) = field("number of transactions actually processed: ") {
            s.transactions = n as u64;
            seen_tx = true;
        } else if let Some(n) = field("number of failed transactions: ") {
            s.failed = n as u64;
        } else if let Some(n) = field("number of transactions skipped: ") {
            s.skipped = n as u64;
        } else if let Some(n) = field("latency average = ") {
            s.latency_avg_ms = n;
            seen_lat = true;
        } else if let Some(n) = field("latency stddev = ") {
            s.latency_stddev_ms = Some(n);
        } else if let Some(n) = field("(max ") {
            s.lag_max_ms = Some(n);
        } else if let Some(n) = field("tps = ") {
            s.tps = n;
            seen_tps = true;
        }
    }
    match (seen_tx, seen_lat, seen_tps) {
        (false, _, _) => Err(MissingLine("number of transactions actually processed")),
        // A run of no transaction prints no latency.
        (true, false, _) if s.transactions > 0 => Err(MissingLine("latency average")),
        (true, _, false) => Err(MissingLine("tps")),
        _ => Ok(s),
    }
}

/// The transaction log's contents: every completed transaction's latency (from its
/// scheduled start) and service time (less the schedule lag), and per second of
/// completion the count and percentiles.
#[derive(Default)]
pub(crate) struct Log {
    pub(crate) latency: Latency,
    pub(crate) service: Latency,
    pub(crate) completed: u64,
    pub(crate) failed: u64,
    pub(crate) skipped: u64,
    per_second: BTreeMap<u64, IntervalStats>,
    first_start_us: Option<u64>,
}

impl Log {
    /// One line: `client_id transaction_no time script_no time_epoch time_us [lag]`, where
    /// `time` is the latency in microseconds, or `skipped` / `failed`.
    pub(crate) fn add_line(&mut self, line: &str) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 6 {
            return;
        }
        match f[2] {
            "skipped" => return self.skipped += 1,
            "failed" => return self.failed += 1,
            _ => {}
        }
        let (Ok(us), Ok(epoch), Ok(frac)) = (
            f[2].parse::<u64>(),
            f[4].parse::<u64>(),
            f[5].parse::<u64>(),
        ) else {
            return;
        };
        let lag: u64 = f.get(6).and_then(|l| l.parse().ok()).unwrap_or(0);
        let end_us = epoch * 1_000_000 + frac;
        let start = end_us.saturating_sub(us);
        self.first_start_us = Some(self.first_start_us.map_or(start, |s| s.min(start)));
        self.latency.record_us(us);
        self.service.record_us(us.saturating_sub(lag));
        self.completed += 1;
        self.per_second
            .entry(end_us / 1_000_000)
            .or_default()
            .record_event_us(us);
    }

    /// Each progress second's latency percentiles, from the transactions that ended in it
    /// (seconds counted from the first transaction's start, as pgbench counts from its
    /// threads' start).
    pub(crate) fn fill(&self, samples: &mut [Sample]) {
        let Some(first) = self.first_start_us.map(|s| s / 1_000_000) else {
            return;
        };
        for s in samples {
            let sec = first + u64::from(s.second.max(1)) - 1;
            if let Some(stats) = self.per_second.get(&sec) {
                s.lat_pct_ms = stats.percentile_ms(95.0);
                s.lat_p99_ms = Some(stats.percentile_ms(99.0));
            }
        }
    }
}

/// `progress: 2.0 s, 459.0 tps, lat 4.680 ms stddev 3.140, 0 failed, lag 0.549 ms` lines
/// (pgbench's stderr): the per-second samples, their latency filled from the log.
pub(crate) fn progress(text: &str, clients: u32) -> Vec<Sample> {
    text.lines()
        .filter_map(|l| {
            let l = l.strip_prefix("progress: ")?;
            let second = num(l)?.round() as u32;
            let tps = after(l, "s, ").and_then(num)?;
            let failed = after(l, "stddev ")
                .and_then(|r| after(r, ", "))
                .and_then(num)
                .unwrap_or(0.0);
            let stats = IntervalStats::default();
            let mut s = stats.sample(second, clients, 1.0, 95.0);
            s.tps = tps;
            s.qps = tps;
            s.errors_ps = failed;
            Some(s)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPEN: &str = "pgbench (15.18 (Debian 15.18-0+deb12u1), server 15.20)
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 1
query mode: prepared
number of clients: 4
number of threads: 1
maximum number of tries: 1
duration: 3 s
number of transactions actually processed: 1396
number of failed transactions: 0 (0.000%)
number of transactions skipped: 57 (3.923%)
number of transactions above the 5.0 ms latency limit: 646/1396 (46.275%)
latency average = 5.522 ms
latency stddev = 3.801 ms
rate limit schedule lag: avg 0.740 (max 4.995) ms
initial connection time = 67.468 ms
tps = 474.827348 (without initial connection time)
";

    #[test]
    fn parses_a_real_open_loop_summary() {
        let s = summary(OPEN).unwrap();
        assert_eq!(
            s,
            Summary {
                transactions: 1396,
                failed: 0,
                skipped: 57,
                latency_avg_ms: 5.522,
                latency_stddev_ms: Some(3.801),
                tps: 474.827348,
                lag_max_ms: Some(4.995),
            }
        );
        let e = summary("pgbench: error: connection refused").unwrap_err();
        assert!(e.to_string().contains("actually processed"), "{e}");
    }

    #[test]
    fn a_log_gives_every_latency_and_the_seconds() {
        let mut log = Log::default();
        for l in [
            "0 1 2167 0 1796215159 441191",
            "1 1 2098 0 1796215159 941221 100",
            "1 2 284 0 1796215160 441542",
            "2 1 skipped 0 1796215160 500000",
            "3 1 900 0 1796215161 100000",
        ] {
            log.add_line(l);
        }
        assert_eq!((log.completed, log.skipped), (4, 1));
        assert_eq!(log.latency.count(), 4);
        let mut s = progress(
            "progress: 1.0 s, 2.0 tps, lat 2.1 ms stddev 0.1, 0 failed\n\
             progress: 2.0 s, 1.0 tps, lat 0.3 ms stddev 0.0, 0 failed\n",
            4,
        );
        log.fill(&mut s);
        assert!(
            (s[0].lat_pct_ms - 2.167).abs() < 0.05,
            "{}",
            s[0].lat_pct_ms
        );
        assert!(
            (s[1].lat_pct_ms - 0.284).abs() < 0.01,
            "{}",
            s[1].lat_pct_ms
        );
    }

    #[test]
    fn progress_lines_are_seconds() {
        let p = progress(
            "progress: 1.0 s, 451.0 tps, lat 5.232 ms stddev 3.479, 0 failed, lag 0.614 ms, 15 skipped\n\
             progress: 2.0 s, 459.0 tps, lat 4.680 ms stddev 3.140, 2 failed\n",
            4,
        );
        assert_eq!(p.len(), 2);
        assert_eq!((p[1].second, p[1].tps, p[1].errors_ps), (2, 459.0, 2.0));
    }
}
