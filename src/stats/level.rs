//! One confidence level for intervals and tests, and the significance marks that follow it.

use std::fmt;

/// The confidence level of every interval; its complement is the significance level alpha
/// of every test. One value, so that a change marked significant is exactly a change whose
/// interval excludes zero.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Confidence(f64);

impl Default for Confidence {
    fn default() -> Self {
        Confidence(0.95)
    }
}

impl Confidence {
    /// The levels a confidence may be, as a fraction: strictly between these two.
    pub(crate) const BOUNDS: (f64, f64) = (0.5, 1.0);

    /// `level` as a fraction, strictly between 0.5 and 1 (an interval below 50% is no use).
    pub(crate) fn new(level: f64) -> Option<Confidence> {
        let (low, high) = Confidence::BOUNDS;
        (level > low && level < high).then_some(Confidence(level))
    }

    /// From a user's text: `95`, `95%` or `0.95`.
    pub(crate) fn parse(text: &str) -> Option<Confidence> {
        let t = text.trim();
        let (num, pct) = match t.strip_suffix('%') {
            Some(n) => (n.trim(), true),
            None => (t, false),
        };
        let v: f64 = num.parse().ok()?;
        let level = if pct || v > 1.0 { v / 100.0 } else { v };
        Confidence::new(level)
    }

    pub(crate) fn from_alpha(alpha: f64) -> Option<Confidence> {
        Confidence::new(1.0 - alpha)
    }

    pub(crate) fn level(self) -> f64 {
        self.0
    }

    pub(crate) fn alpha(self) -> f64 {
        // Rounded so that 1 - 0.95 is 0.05, not 0.050000000000000044.
        ((1.0 - self.0) * 1e12).round() / 1e12
    }

    /// Significance marks scaled to alpha: `*` p < alpha, `**` p < alpha/10, `***`
    /// p < alpha/100, `~` not significant. At alpha 0.05 these are the usual 0.05 / 0.005 /
    /// 0.0005; at 0.01 they are 0.01 / 0.001 / 0.0001.
    pub(crate) fn mark(self, p: f64) -> &'static str {
        let a = self.alpha();
        if p < a / 100.0 {
            "***"
        } else if p < a / 10.0 {
            "**"
        } else if p < a {
            "*"
        } else {
            "~"
        }
    }

    pub(crate) fn significant(self, p: f64) -> bool {
        p < self.alpha()
    }

    /// The legend of [`Confidence::mark`], e.g. `` `~` not significant (p ≥ 0.05: the 95%
    /// interval includes no change), `*` p < 0.05, `**` p < 0.005, `***` p < 0.0005``.
    pub(crate) fn legend(self) -> String {
        let a = self.alpha();
        format!(
            "`~` not significant (p ≥ {}: the {self} interval includes no change), `*` p < {}, \
             `**` p < {}, `***` p < {}",
            num(a),
            num(a),
            num(a / 10.0),
            num(a / 100.0)
        )
    }
}

/// A probability in the shortest plain decimal form (0.05, 0.005, 0.0001).
fn num(p: f64) -> String {
    let text = format!("{p:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl fmt::Display for Confidence {
    /// `95%`, `99.9%`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = format!("{:.4}", self.0 * 100.0);
        write!(f, "{}%", pct.trim_end_matches('0').trim_end_matches('.'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_ways_people_write_it() {
        for t in ["95", "95%", " 95 % ", "0.95"] {
            assert_eq!(Confidence::parse(t), Some(Confidence(0.95)), "{t}");
        }
        for t in ["", "x", "50", "100", "0", "-95", "NaN", "1.5%"] {
            assert_eq!(Confidence::parse(t), None, "{t}");
        }
        assert_eq!(Confidence::parse("99.9").unwrap().to_string(), "99.9%");
    }

    #[test]
    fn marks_and_legend_follow_alpha() {
        let c95 = Confidence::default();
        assert_eq!(
            [0.0004, 0.004, 0.04, 0.05, 0.2].map(|p| c95.mark(p)),
            ["***", "**", "*", "~", "~"]
        );
        assert_eq!(
            c95.legend(),
            "`~` not significant (p ≥ 0.05: the 95% interval includes no change), \
             `*` p < 0.05, `**` p < 0.005, `***` p < 0.0005"
        );
        let c99 = Confidence::from_alpha(0.01).unwrap();
        assert_eq!(
            [0.00005, 0.0005, 0.005, 0.02].map(|p| c99.mark(p)),
            ["***", "**", "*", "~"]
        );
        assert_eq!(
            c99.legend(),
            "`~` not significant (p ≥ 0.01: the 99% interval includes no change), \
             `*` p < 0.01, `**` p < 0.001, `***` p < 0.0001"
        );
        let c90 = Confidence::from_alpha(0.10).unwrap();
        assert_eq!(c90.to_string(), "90%");
        assert_eq!(
            [0.0009, 0.009, 0.09, 0.1].map(|p| c90.mark(p)),
            ["***", "**", "*", "~"]
        );
        assert_eq!(
            c90.legend(),
            "`~` not significant (p ≥ 0.1: the 90% interval includes no change), \
             `*` p < 0.1, `**` p < 0.01, `***` p < 0.001"
        );
    }
}
