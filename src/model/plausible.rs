//! The plausible range of every measured column of a run directory (results.csv,
//! samples.csv, warmup.csv, operations.csv, counters.csv), in one place: a stored value outside it is
//! refused like NaN, because one absurd value (`qps: 1e308`) turns every mean, interval and
//! chart built on it into noise or overflow. The bounds are far beyond what any server and
//! any run reaches, so a real measurement never meets them; docs/run-directory.md lists them.

/// What a column measures: its upper bound and how it is said.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Plausible {
    pub(crate) max: f64,
    /// `ten billion per second`, for the refusal.
    pub(crate) said: &'static str,
}

const fn upto(max: f64, said: &'static str) -> Plausible {
    Plausible { max, said }
}

/// Operations per second: ten billion (the fastest in-memory servers do ~10^8 per host).
pub(crate) const RATE: Plausible = upto(1e10, "10^10 per second");
/// A latency in milliseconds: 10^9 ms, eleven and a half days.
pub(crate) const LATENCY_MS: Plausible = upto(1e9, "10^9 ms (11.5 days)");
/// Seconds of wall or CPU time: 10^9 s, 31 years (CPU seconds of a whole host included).
pub(crate) const SECONDS: Plausible = upto(1e9, "10^9 s (31 years)");
/// A second's number in a phase (samples.csv, server_seconds.csv): 10^6, beyond the longest
/// phase a matrix may ask for (7 days, 604,800 s); a chart of a phase allocates by it.
pub(crate) const SECOND: Plausible = upto(1e6, "10^6 s (11.6 days)");
/// A count of operations, events or statements: 10^15.
pub(crate) const COUNT: Plausible = upto(1e15, "10^15");
/// Bytes read or written: 10^18 (an exabyte).
pub(crate) const BYTES: Plausible = upto(1e18, "10^18 bytes");
/// An Apdex score: a fraction.
pub(crate) const FRACTION: Plausible = upto(1.0, "1");

/// The range of a stored column by its name; `None` for a column that is not a measured
/// number (a dimension, a status, a text).
pub(crate) fn of(column: &str) -> Option<Plausible> {
    match column {
        "qps" | "tps" | "achieved_rate" | "ops_per_s" | "target_ps" => Some(RATE),
        c if c.ends_with("_ps") => Some(RATE),
        c if c.ends_with("_ms") => Some(LATENCY_MS),
        "seconds" | "client_cpu_s" | "srv_cpu_s" => Some(SECONDS),
        "second" => Some(SECOND),
        "srv_cpu_us_per_op" => Some(upto(1e9, "10^9 µs")),
        "srv_instructions" | "srv_timer_instructions" | "srv_instr_per_op" => {
            Some(upto(1e18, "10^18 instructions"))
        }
        // Per minute: RATE's bound times 60.
        "nopm" | "tpmc" | "tpm" => Some(upto(6e11, "6x10^11 per minute")),
        "apdex" => Some(FRACTION),
        // Run plus runnable-wait time over the cores: above 100 when threads queue for them.
        "client_busy_pct" => Some(upto(1e6, "10^6 %")),
        "client_cores" => Some(upto(1e6, "10^6 cores")),
        "srv_read_bytes" | "srv_write_bytes" => Some(BYTES),
        // counters.csv: a server counter's delta (some count bytes).
        "delta" => Some(upto(1e18, "10^18")),
        "queries"
        | "errors"
        | "commits"
        | "reads"
        | "writes"
        | "others"
        | "reconnects"
        | "scheduled"
        | "late_starts"
        | "missed_starts"
        | "pacer_late"
        | "max_backlog"
        | "loops"
        | "statements"
        | "thread_events_avg"
        | "thread_events_stddev"
        | "threads" => Some(COUNT),
        c if c.starts_with("srv_") && !c.ends_with("counters") => Some(COUNT),
        _ => None,
    }
}

/// Why the stored `text` of `column` cannot be a measurement, if it cannot: not a number,
/// NaN, infinite, negative, or above the column's plausible range.
pub(crate) fn check(column: &str, text: &str) -> Result<(), String> {
    let Some(range) = of(column) else {
        return Ok(());
    };
    if text.is_empty() {
        return Ok(());
    }
    // A text that is no number is the deserializer's to name (with its type).
    let Ok(v) = text.trim().parse::<f64>() else {
        return Ok(());
    };
    if !v.is_finite() || v < 0.0 {
        return Err(format!(
            "{column} is {v}; a measured value is a finite number, never negative"
        ));
    }
    if v > range.max {
        return Err(format!(
            "{column} is {}; no measurement reaches that (the plausible range of {column} \
             ends at {}, docs/run-directory.md)",
            crate::escape::terminal(text.trim()),
            range.said
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absurd_values_are_refused_like_nan() {
        assert!(check("qps", "2500.5").is_ok());
        assert!(check("qps", "").is_ok());
        assert!(check("server", "1e308").is_ok(), "not a measured column");
        for (col, v) in [
            ("qps", "1e308"),
            ("lat_p99_ms", "1.7e308"),
            ("lat_p95_ms", "1e10"),
            ("apdex", "1.5"),
            ("errors", "18446744073709551615"),
            ("second", "999999999"),
        ] {
            let e = check(col, v).unwrap_err();
            assert!(e.contains("no measurement reaches that"), "{col} {v}: {e}");
        }
        assert_eq!(
            check("qps", "NaN").unwrap_err(),
            "qps is NaN; a measured value is a finite number, never negative"
        );
        assert!(check("tps", "-1").is_err());
    }

    #[test]
    fn every_measured_column_has_a_range() {
        for c in [
            "qps",
            "tps",
            "seconds",
            "lat_avg_ms",
            "lat_p999_ms",
            "svc_p99_ms",
            "reads_ps",
            "errors_ps",
            "srv_com_select",
            "srv_fsyncs",
            "client_cpu_s",
            "client_busy_pct",
            "ops_per_s",
        ] {
            assert!(of(c).is_some(), "{c}");
        }
        for c in [
            "server",
            "concurrency",
            "iteration",
            "status",
            "server_counters",
            "srv_counters",
        ] {
            assert!(of(c).is_none(), "{c}");
        }
    }
}
