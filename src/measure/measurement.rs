//! What one measured iteration of any workload produced, and how it fills a results row.

use super::counters::Status;
use super::latency::Latency;
use crate::model::row::ResultRow;

#[derive(Default)]
pub struct Measurement {
    /// Statements (or requests) that succeeded.
    pub queries: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    /// Committed transactions, where the workload has them.
    pub commits: u64,
    pub reads: Option<u64>,
    pub writes: Option<u64>,
    pub others: Option<u64>,
    pub reconnects: Option<u64>,
    /// Wall time of the measured phase.
    pub seconds: f64,
    pub(crate) latency: Latency,
    /// Server counter deltas over the measured phase (SHOW GLOBAL STATUS, INFO ...).
    pub server: Status,
    /// Mean and population stddev of events per client (sysbench's thread fairness).
    pub thread_events: Option<(f64, f64)>,
    /// CPU seconds the client process used over the measured phase.
    pub client_cpu_s: Option<f64>,
    /// Extra latency percentiles requested by the workload: (percent, ms).
    pub(crate) percentiles: Vec<(f64, f64)>,
    /// Latency as an external tool reported it (no histogram); a NaN field stays empty.
    pub reported_latency: Option<super::latency::LatencySummary>,
    /// One line per timed operation, for suites of named operations (operations.csv).
    pub operations: Vec<super::operation::Operation>,
    /// One line per complete second of the measured phase (samples.csv).
    pub samples: Vec<super::interval::Sample>,
    /// The same for the warm-up, where the driver records one (warmup.csv).
    pub warmup_samples: Vec<super::interval::Sample>,
    /// Open loop: what the pacer saw; `latency` then runs from each intended start.
    pub(crate) open: Option<PaceStats>,
    /// Open loop: service time, from each request's actual send to its reply.
    pub(crate) service: Latency,
    /// The tables this iteration loaded before it measured (none when they were there).
    pub(crate) loaded: Option<Loaded>,
    /// A TPC-C mix's rates per minute, as the field reports them.
    pub(crate) per_minute: Option<PerMinute>,
}

/// TPC-C's rates per minute of the measured phase.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct PerMinute {
    /// New-Orders committed, counted from the schema (HammerDB's NOPM).
    pub(crate) nopm: Option<f64>,
    /// New-Order transactions ended, committed or rolled back on purpose, as the client
    /// counted them (the specification's tpmC, 5.4.1).
    pub(crate) tpmc: f64,
    /// Transactions the server counted, committed and rolled back (HammerDB's TPM).
    pub(crate) tpm: Option<f64>,
}

/// A prepare: how many rows, in how long (from the first CREATE to the last index).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Loaded {
    pub(crate) rows: u64,
    pub(crate) seconds: f64,
}

impl Loaded {
    pub(crate) fn rows_per_s(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.rows as f64 / self.seconds)
    }
}

/// What an open-loop phase's pacer saw (None: the external tool does not say).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PaceStats {
    /// Arrivals whose intended start fell within the phase.
    pub(crate) scheduled: Option<u64>,
    /// Arrivals a client took and sent (each one completes, ok or failed).
    pub(crate) started: u64,
    /// Started more than 1 ms after their intended start.
    pub(crate) late: Option<u64>,
    /// Due but never started when the phase ended: the backlog left behind.
    pub(crate) missed: Option<u64>,
    /// The most arrivals that were due and waiting for a free client at once.
    pub(crate) max_backlog: Option<u64>,
    /// Arrivals the pacer itself released more than 1 ms after their intended start: the
    /// client's lateness, not the server's (no free connection is waited for there).
    pub(crate) pacer_late: Option<u64>,
    /// Arrivals scheduled in each second of the phase (the first second first).
    pub(crate) per_second: Vec<u64>,
}

impl Measurement {
    /// Fill `row` (status ok), or fail it when nothing succeeded.
    pub(crate) fn fill_row(&self, mut row: ResultRow) -> ResultRow {
        if self.queries == 0 {
            return row.failed(
                self.first_error
                    .as_deref()
                    .unwrap_or("no statement succeeded"),
            );
        }
        let per_sec = |n: u64| n as f64 / self.seconds;
        row.status = crate::model::Status::Ok;
        row.queries = Some(self.queries);
        row.seconds = Some(self.seconds);
        row.qps = Some(per_sec(self.queries));
        row.errors = Some(self.errors);
        row.error = self
            .first_error
            .clone()
            .unwrap_or_default()
            .replace(['\n', '\r'], " ");
        if self.commits > 0 {
            row.commits = Some(self.commits);
            row.tps = Some(per_sec(self.commits));
        }
        row.reads = self.reads;
        row.writes = self.writes;
        row.others = self.others;
        row.reconnects = self.reconnects;
        if let Some(l) = self.reported_latency.or_else(|| self.latency.summary()) {
            let ms = |v: f64| Some(v).filter(|v| v.is_finite());
            row.lat_min_ms = ms(l.min_ms);
            row.lat_avg_ms = ms(l.avg_ms);
            row.lat_p50_ms = ms(l.p50_ms);
            row.lat_p95_ms = ms(l.p95_ms);
            row.lat_p99_ms = ms(l.p99_ms);
            row.lat_p999_ms = ms(l.p999_ms);
            row.lat_max_ms = ms(l.max_ms);
        }
        if let Some((avg, sd)) = self.thread_events {
            row.thread_events_avg = Some(avg);
            row.thread_events_stddev = Some(sd);
        }
        // The kernel counts CPU time in clock ticks: milliseconds are all the precision there
        // is (and a difference of two sums would otherwise print as 9.129999999999999).
        row.client_cpu_s = self.client_cpu_s.map(|s| (s * 1000.0).round() / 1000.0);
        if !self.percentiles.is_empty() {
            let map: std::collections::BTreeMap<String, f64> = self
                .percentiles
                .iter()
                .map(|(p, ms)| (format!("p{p}"), *ms))
                .collect();
            row.lat_percentiles = serde_json::to_string(&map).unwrap_or_default();
        }
        if let Some(p) = self.per_minute {
            let round = |v: f64| (v * 100.0).round() / 100.0;
            row.nopm = p.nopm.map(round);
            row.tpmc = Some(round(p.tpmc));
            row.tpm = p.tpm.map(round);
        }
        if let Some(p) = &self.open {
            row.achieved_rate = Some(per_sec(p.started));
            row.scheduled = p.scheduled;
            row.late_starts = p.late;
            row.missed_starts = p.missed;
            row.max_backlog = p.max_backlog;
            row.pacer_late = p.pacer_late;
            if let Some(s) = self.service.summary() {
                row.svc_avg_ms = Some(s.avg_ms);
                row.svc_p99_ms = Some(s.p99_ms);
            }
        }
        row
    }
}
