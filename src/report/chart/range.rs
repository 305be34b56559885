//! Axis ranges every chart is drawn on, clamped: plotters lays its ticks out in a loop over
//! the range (a log axis steps from decade to decade), so an infinite end or a span of
//! hundreds of decades spins forever. Stored values are refused past their plausible range
//! (`model::plausible`); this keeps any value that reaches a chart drawable all the same.

/// The largest magnitude an axis reaches.
const LIMIT: f64 = 1e15;
/// A log axis spans at most this many decades (its tick loop runs once per decade).
const DECADES: i32 = 15;

/// A linear axis end: finite and at most `LIMIT` in magnitude.
pub(crate) fn linear(v: f64) -> f64 {
    match v {
        v if v.is_nan() => 0.0,
        v => v.clamp(-LIMIT, LIMIT),
    }
}

/// A log axis from `lo` to `hi`: both positive and finite, `hi` at most `LIMIT`, `lo`
/// below `hi` and at most `DECADES` decades under it (the low end gives way).
pub(crate) fn log(lo: f64, hi: f64) -> std::ops::Range<f64> {
    let hi = match hi {
        h if h.is_finite() && h > 0.0 => h.min(LIMIT),
        _ => LIMIT,
    };
    let floor = hi / 10f64.powi(DECADES);
    let lo = match lo {
        l if l.is_finite() && l > 0.0 && l < hi => l.max(floor),
        l if l.is_finite() && l > 0.0 => hi / 10.0,
        _ => floor,
    };
    lo..hi
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_are_finite_and_spans_bounded() {
        assert_eq!(linear(f64::INFINITY), LIMIT);
        assert_eq!(linear(f64::NAN), 0.0);
        assert_eq!(linear(120.0), 120.0);
        // An infinite top: the axis ends at the limit, and spans at most its decades.
        assert_eq!(log(0.5, f64::INFINITY), 1.0..LIMIT);
        assert_eq!(log(0.5, 1e3), 0.5..1e3);
        let r = log(f64::MIN_POSITIVE, 10.0);
        assert!(r.start > 0.0 && (r.end / r.start).log10() <= DECADES as f64 + 1e-9);
        assert_eq!(log(2.0, 30.0), 2.0..30.0);
        // A range that has collapsed spans a decade.
        assert_eq!(log(5.0, 5.0), 0.5..5.0);
        assert_eq!(log(4.0, 5.0), 4.0..5.0);
    }
}
