//! What several commands share: option defaults and the check of a confidence level.

use anyhow::Result;

/// `--assume-run-noise`'s default (compare and plan): the CV of run means assumed without a
/// store; docs/compare.md gives the runs it was chosen from.
pub(crate) const ASSUMED_RUN_NOISE: &str = "5%";

/// `--counted-threshold`'s default (compare and bisect): well above what one build's counted
/// instructions vary by between runs (docs/counted.md: a CV of run means near 0.1% for Redis
/// GET, so an A/A difference of 0.5% lies beyond three of its standard deviations).
pub(crate) const COUNTED_THRESHOLD: &str = "0.5%";

/// `--confidence` text or `--alpha`, checked.
pub(super) fn confidence_of(text: &str, alpha: Option<f64>) -> Result<crate::stats::Confidence> {
    use crate::compare::CompareError;
    let conf = match alpha {
        Some(a) => crate::stats::Confidence::from_alpha(a)
            .ok_or_else(|| CompareError::BadConfidence(format!("alpha {a}")))?,
        None => crate::stats::Confidence::parse(text)
            .ok_or_else(|| CompareError::BadConfidence(text.into()))?,
    };
    Ok(conf)
}
