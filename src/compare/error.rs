//! Why a comparison could not be made (all map to exit code 2, unusable inputs).

use std::path::PathBuf;

type Source = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub(crate) enum CompareError {
    #[error(
        "{} is not an rmatrix run directory (no results.csv); pass the directory `rmatrix run` wrote",
        path.display()
    )]
    NotARun { path: PathBuf },
    #[error("failed to read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: Source,
    },
    /// A stored result that cannot be right, or a manifest this rmatrix cannot read.
    #[error(transparent)]
    Refused(#[from] crate::results::check::Refused),
    #[error("{} has no successful iterations to compare", path.display())]
    NoResults { path: PathBuf },
    #[error("unknown metric `{name}`; valid: {valid}, or `all`")]
    UnknownMetric { name: String, valid: String },
    #[error("unknown dimension `{name}` for --ignore; valid: {valid}")]
    UnknownDimension { name: String, valid: String },
    #[error("bad threshold `{0}`: expected a percentage such as `5%` or `2.5`")]
    BadThreshold(String),
    #[error(
        "bad run noise `{0}`: expected a coefficient of variation of run means in percent \
         from 0 to below 100, such as `3%` (`0`: iterations only)"
    )]
    BadRunNoise(String),
    #[error("bad --target `{text}`: {why}")]
    BadTarget { text: String, why: String },
    #[error(
        "bad confidence level `{0}`: expected a level between 50% and 100%, such as `95%` \
         (or --alpha between 0 and 0.5, such as 0.01)"
    )]
    BadConfidence(String),
    #[error(
        "{} and {} have no cell in common; check that they ran the same matrix \
         (or use --ignore DIM to join across a renamed dimension)",
        baseline.display(),
        candidate.display()
    )]
    NothingInCommon {
        baseline: PathBuf,
        candidate: PathBuf,
    },
    #[error(
        "nothing was compared between {} and {}: no cell they share has a value of {metrics} \
         on both sides",
        baseline.display(),
        candidate.display()
    )]
    NothingCompared {
        baseline: PathBuf,
        candidate: PathBuf,
        metrics: String,
    },
    #[error(
        "{metric} is not compared: the baseline's instructions were counted by `{}`, the \
         candidate's by `{}` (callgrind leaves timer work out, the CPU's counter does not); \
         run both with the same `counted:`",
        crate::escape::terminal(baseline),
        crate::escape::terminal(candidate)
    )]
    CountedApart {
        metric: String,
        baseline: String,
        candidate: String,
    },
    #[error("bad --min-points {0}: a segment of a history needs at least 2 runs (for a variance)")]
    BadMinPoints(usize),
    #[error("no run directories found in {}", paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    NoRuns { paths: Vec<PathBuf> },
}

impl crate::error::Kinded for CompareError {
    fn kind(&self) -> crate::error::ErrorKind {
        use CompareError::*;
        // Every reason a comparison cannot be made is an input to fix; a new variant decides.
        match self {
            NotARun { .. }
            | Read { .. }
            | Refused(_)
            | NoResults { .. }
            | UnknownMetric { .. }
            | UnknownDimension { .. }
            | BadThreshold(_)
            | BadRunNoise(_)
            | BadTarget { .. }
            | BadConfidence(_)
            | BadMinPoints(_)
            | NothingInCommon { .. }
            | NothingCompared { .. }
            | CountedApart { .. }
            | NoRuns { .. } => crate::error::ErrorKind::BadInput,
        }
    }
}
