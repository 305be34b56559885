//! `rmatrix ratio`: per-round `A B` lines on stdin -> their ratio with its interval, as JSON.

use anyhow::Result;

use super::options::confidence_of;
use super::stdio::emit;
use crate::error::{Outcome, UsageError};

/// `rmatrix ratio`'s options.
#[derive(Debug, clap::Args)]
pub(crate) struct RatioArgs {
    /// Confidence level of the interval (`95`, `95%` or `0.95`).
    #[arg(long, default_value = "95%")]
    pub(crate) confidence: String,
}

/// `rmatrix ratio`: per-round `A B` lines on stdin -> their ratio with its interval, as JSON.
pub(super) fn ratio(a: &RatioArgs) -> Result<Outcome> {
    let input = crate::input::file::read_stdin(crate::input::file::STDIN)?;
    emit(&ratio_text(&input, &a.confidence)?)?;
    Ok(Outcome::Done)
}

/// What `rmatrix ratio` prints for `input` (the fuzz target `ratio` reads through it).
pub fn ratio_text(input: &str, confidence: &str) -> Result<String> {
    use crate::stats::paired;
    let pairs = paired::parse_pairs(input).map_err(UsageError)?;
    let ratio =
        paired::paired_ratio(&pairs, confidence_of(confidence, None)?).ok_or_else(|| {
            UsageError(
                "every round's A / B must be a positive finite ratio (e.g. not 1e300 / 1e-300)"
                    .into(),
            )
        })?;
    Ok(format!("{}\n", serde_json::to_string(&ratio)?))
}
