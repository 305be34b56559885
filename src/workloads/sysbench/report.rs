//! Reading sysbench 1.0's text report: the `--report-interval` lines and the final block
//! (SQL statistics, general statistics, latency, thread fairness). Pure.

use crate::measure::interval::Sample;

#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Report {
    pub(crate) reads: u64,
    pub(crate) writes: u64,
    pub(crate) others: u64,
    pub(crate) queries: u64,
    pub(crate) transactions: u64,
    pub(crate) ignored_errors: u64,
    pub(crate) reconnects: u64,
    pub(crate) total_time_s: f64,
    pub(crate) events: u64,
    pub(crate) lat_min_ms: f64,
    pub(crate) lat_avg_ms: f64,
    pub(crate) lat_max_ms: f64,
    /// (percentile, ms) when sysbench printed one.
    pub(crate) lat_pct: Option<(u32, f64)>,
    pub(crate) lat_sum_ms: f64,
    pub(crate) events_avg: f64,
    pub(crate) events_stddev: f64,
    pub(crate) exec_time_avg: f64,
    pub(crate) exec_time_stddev: f64,
    pub(crate) intervals: Vec<Sample>,
    /// With `--rate`: the longest event queue an interval line showed (events generated,
    /// not yet picked up by a thread).
    pub(crate) max_queue: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
#[error("failed to read sysbench's report: {0} is missing (did the run finish?)")]
pub(crate) struct MissingField(&'static str);

/// The first number in `s` (sysbench pads values with spaces and appends units).
fn num(s: &str) -> Option<f64> {
    let t = s.trim_start();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e' || c == '+'))
        .unwrap_or(t.len());
    t[..end].parse().ok()
}

fn after<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.find(key).map(|i| &line[i + key.len()..])
}

/// `[ 1s ] thds: 2 tps: 10.00 qps: 200.00 (r/w/o: 140.00/40.00/20.00) lat (ms,95%): 1.23
/// err/s: 0.00 reconn/s: 0.00`
fn interval(line: &str) -> Option<Sample> {
    let second = num(after(line, "[ ")?)? as u32;
    let rwo = after(line, "(r/w/o: ")?;
    let mut parts = rwo.split('/');
    let r = num(parts.next()?)?;
    let w = num(parts.next()?)?;
    let o = num(parts.next()?)?;
    Some(Sample {
        second,
        threads: num(after(line, "thds: ")?)? as u32,
        tps: num(after(line, "tps: ")?)?,
        qps: num(after(line, "qps: ")?)?,
        reads_ps: r,
        writes_ps: w,
        others_ps: o,
        lat_pct_ms: after(line, "%): ").and_then(num).unwrap_or(0.0),
        lat_p99_ms: None,
        errors_ps: num(after(line, "err/s: ")?)?,
        reconnects_ps: num(after(line, "reconn/s: ")?)?,
        target_ps: None,
        client_busy_pct: None,
    })
}

/// `avg/stddev` pairs of the fairness lines.
fn pair(s: &str) -> Option<(f64, f64)> {
    let (a, b) = s.trim().split_once('/')?;
    Some((num(a)?, num(b)?))
}

pub(crate) fn parse(text: &str) -> Result<Report, MissingField> {
    let mut r = Report::default();
    let mut seen_tx = false;
    let mut seen_time = false;
    for line in text.lines() {
        let t = line.trim();
        let field = |k: &str| after(t, k).and_then(num);
        if t.starts_with("[ ") && t.contains("queue length:") {
            if let Some(q) = after(t, "queue length:").and_then(num) {
                r.max_queue = Some(r.max_queue.unwrap_or(0).max(q as u64));
            }
        } else if t.starts_with("[ ") && t.contains("thds:") {
            if let Some(s) = interval(t) {
                r.intervals.push(s);
            }
        } else if t.starts_with("read:") {
            r.reads = field("read:").unwrap_or(0.0) as u64;
        } else if t.starts_with("write:") {
            r.writes = field("write:").unwrap_or(0.0) as u64;
        } else if t.starts_with("other:") {
            r.others = field("other:").unwrap_or(0.0) as u64;
        } else if t.starts_with("transactions:") {
            r.transactions = field("transactions:").unwrap_or(0.0) as u64;
            seen_tx = true;
        } else if t.starts_with("queries:") {
            r.queries = field("queries:").unwrap_or(0.0) as u64;
        } else if t.starts_with("ignored errors:") {
            r.ignored_errors = field("ignored errors:").unwrap_or(0.0) as u64;
        } else if t.starts_with("reconnects:") {
            r.reconnects = field("reconnects:").unwrap_or(0.0) as u64;
        } else if t.starts_with("total time:") {
            r.total_time_s = field("total time:").unwrap_or(0.0);
            seen_time = true;
        } else if t.starts_with("total number of events:") {
            r.events = field("total number of events:").unwrap_or(0.0) as u64;
        } else if t.starts_with("min:") {
            r.lat_min_ms = field("min:").unwrap_or(0.0);
        } else if t.starts_with("avg:") {
            r.lat_avg_ms = field("avg:").unwrap_or(0.0);
        } else if t.starts_with("max:") {
            r.lat_max_ms = field("max:").unwrap_or(0.0);
        } else if t.starts_with("sum:") {
            r.lat_sum_ms = field("sum:").unwrap_or(0.0);
        } else if t.contains("th percentile:") {
            let p = num(t).map(|p| p as u32);
            let v = field("percentile:");
            r.lat_pct = p.zip(v);
        } else if t.starts_with("events (avg/stddev):") {
            (r.events_avg, r.events_stddev) = after(t, "):").and_then(pair).unwrap_or((0.0, 0.0));
        } else if t.starts_with("execution time (avg/stddev):") {
            (r.exec_time_avg, r.exec_time_stddev) =
                after(t, "):").and_then(pair).unwrap_or((0.0, 0.0));
        }
    }
    if !seen_tx {
        return Err(MissingField("transactions"));
    }
    if !seen_time {
        return Err(MissingField("total time"));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 4
Report intermediate results every 1 second(s)
Initializing random number generator from current time


Initializing worker threads...

Threads started!

[ 1s ] thds: 4 tps: 317.73 qps: 6395.53 (r/w/o: 4480.31/1272.91/642.31) lat (ms,95%): 20.37 err/s: 0.00 reconn/s: 0.00
[ 2s ] thds: 4 tps: 344.02 qps: 6866.34 (r/w/o: 4807.24/1371.07/688.03) lat (ms,95%): 17.95 err/s: 1.00 reconn/s: 0.00
SQL statistics:
    queries performed:
        read:                            9296
        write:                           2644
        other:                           1330
        total:                           13270
    transactions:                        663    (330.46 per sec.)
    queries:                             13270  (6614.23 per sec.)
    ignored errors:                      1      (0.50 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          2.0047s
    total number of events:              663

Latency (ms):
         min:                                    4.38
         avg:                                   12.09
         max:                                   41.35
         95th percentile:                       19.29
         sum:                                 8015.91

Threads fairness:
    events (avg/stddev):           165.7500/2.49
    execution time (avg/stddev):   2.0040/0.00

";

    #[test]
    fn parses_the_final_block_and_interval_lines() {
        let r = parse(OUTPUT).unwrap();
        assert_eq!(
            (r.reads, r.writes, r.others, r.queries),
            (9296, 2644, 1330, 13270)
        );
        assert_eq!(
            (r.transactions, r.events, r.ignored_errors, r.reconnects),
            (663, 663, 1, 0)
        );
        assert_eq!(r.total_time_s, 2.0047);
        assert_eq!(
            (r.lat_min_ms, r.lat_avg_ms, r.lat_max_ms),
            (4.38, 12.09, 41.35)
        );
        assert_eq!(r.lat_pct, Some((95, 19.29)));
        assert_eq!(r.lat_sum_ms, 8015.91);
        assert_eq!((r.events_avg, r.events_stddev), (165.75, 2.49));
        assert_eq!((r.exec_time_avg, r.exec_time_stddev), (2.004, 0.0));
        assert_eq!(r.intervals.len(), 2);
        let s = &r.intervals[1];
        assert_eq!((s.second, s.threads), (2, 4));
        assert_eq!((s.tps, s.qps), (344.02, 6866.34));
        assert_eq!(
            (s.reads_ps, s.writes_ps, s.others_ps),
            (4807.24, 1371.07, 688.03)
        );
        assert_eq!((s.lat_pct_ms, s.errors_ps), (17.95, 1.0));
    }

    #[test]
    fn a_cut_off_report_is_an_error() {
        let cut = &OUTPUT[..OUTPUT.find("General statistics").unwrap()];
        assert!(parse(cut).unwrap_err().to_string().contains("total time"));
        assert!(parse("FATAL: error 1146").is_err());
    }

    #[test]
    fn disabled_percentile_is_none() {
        let text = OUTPUT.replace(
            "95th percentile:                       19.29",
            "percentile stats:               disabled",
        );
        assert_eq!(parse(&text).unwrap().lat_pct, None);
    }
}
