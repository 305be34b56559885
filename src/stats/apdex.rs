//! Apdex[T]: how many operations a user would call fast. An operation is satisfied when it
//! took at most T, tolerating when at most 4T, frustrated otherwise; an error is frustrated.
//! The score is `(satisfied + tolerating / 2) / all`, read against the Apdex bands.

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Apdex {
    pub(crate) threshold_ms: f64,
    pub(crate) satisfied: u64,
    pub(crate) tolerating: u64,
    pub(crate) frustrated: u64,
}

impl Apdex {
    /// From latencies in milliseconds and a count of failed operations.
    #[cfg(test)]
    pub(crate) fn from_latencies(threshold_ms: f64, latencies_ms: &[f64], errors: u64) -> Apdex {
        let satisfied = latencies_ms.iter().filter(|l| **l <= threshold_ms).count() as u64;
        let within_4t = latencies_ms
            .iter()
            .filter(|l| **l <= 4.0 * threshold_ms)
            .count() as u64;
        Apdex::from_counts(
            threshold_ms,
            latencies_ms.len() as u64,
            satisfied,
            within_4t,
            errors,
        )
    }

    /// From counts, as a latency histogram gives them: `ok` operations, of which
    /// `within_t` took at most T and `within_4t` at most 4T; `errors` failed.
    pub(crate) fn from_counts(
        threshold_ms: f64,
        ok: u64,
        within_t: u64,
        within_4t: u64,
        errors: u64,
    ) -> Apdex {
        let within_4t = within_4t.min(ok);
        let within_t = within_t.min(within_4t);
        Apdex {
            threshold_ms,
            satisfied: within_t,
            tolerating: within_4t - within_t,
            frustrated: ok - within_4t + errors,
        }
    }

    /// None when nothing was measured.
    pub(crate) fn score(&self) -> Option<f64> {
        let all = self.satisfied + self.tolerating + self.frustrated;
        (all > 0).then(|| (self.satisfied as f64 + self.tolerating as f64 / 2.0) / all as f64)
    }

    /// `0.94 [2 ms] excellent`, or `n/a [2 ms]`.
    #[cfg(test)]
    pub(crate) fn text(&self) -> String {
        let t = format!("{}", self.threshold_ms);
        match self.score() {
            Some(s) => format!("{s:.2} [{t} ms] {}", rating(s)),
            None => format!("n/a [{t} ms]"),
        }
    }
}

/// The Apdex rating band of a score (on the two-decimal score, as the bands are published).
#[cfg(test)]
pub(crate) fn rating(score: f64) -> &'static str {
    let s = (score * 100.0).round() / 100.0;
    match s {
        s if s >= 0.94 => "excellent",
        s if s >= 0.85 => "good",
        s if s >= 0.70 => "fair",
        s if s >= 0.50 => "poor",
        _ => "unacceptable",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn satisfied_tolerating_frustrated_and_errors() {
        // T = 2 ms: 2 satisfied (1, 2), 2 tolerating (3, 8), 1 frustrated (9) + 1 error.
        let a = Apdex::from_latencies(2.0, &[1.0, 2.0, 3.0, 8.0, 9.0], 1);
        assert_eq!((a.satisfied, a.tolerating, a.frustrated), (2, 2, 2));
        assert_eq!(a.score(), Some(3.0 / 6.0));
        assert_eq!(a.text(), "0.50 [2 ms] poor");
        assert_eq!(Apdex::from_counts(2.0, 5, 2, 4, 1), a);
    }

    #[test]
    fn bands_and_edges() {
        assert_eq!(rating(1.0), "excellent");
        assert_eq!(rating(0.9351), "excellent"); // shown as 0.94
        assert_eq!(rating(0.93), "good");
        assert_eq!(rating(0.85), "good");
        assert_eq!(rating(0.84), "fair");
        assert_eq!(rating(0.70), "fair");
        assert_eq!(rating(0.69), "poor");
        assert_eq!(rating(0.49), "unacceptable");
        assert_eq!(Apdex::from_latencies(0.5, &[], 0).score(), None);
        assert_eq!(Apdex::from_latencies(0.5, &[], 0).text(), "n/a [0.5 ms]");
        // Only errors: all frustrated.
        assert_eq!(Apdex::from_counts(1.0, 0, 0, 0, 3).score(), Some(0.0));
        // Inconsistent counts are clamped, never underflow.
        let a = Apdex::from_counts(1.0, 3, 5, 4, 0);
        assert_eq!((a.satisfied, a.tolerating, a.frustrated), (3, 0, 0));
    }
}
