//! Why a comparison could not be made (all map to exit code 2, unusable inputs).

use std::path::PathBuf;

type Source = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug)]
pub(crate) enum CompareError {
    NotARun {
        path: PathBuf,
    },
    Read {
        path: PathBuf,
        source: Source,
    },
    /// A stored result that cannot be right, or a manifest this rmatrix cannot read.
    Refused(crate::results::check::Refused),
    NoResults {
        path: PathBuf,
    },
    UnknownMetric {
        name: String,
        valid: String,
    },
    UnknownDimension {
        name: String,
        valid: String,
    },
    BadThreshold(String),
    BadRunNoise(String),
    BadTarget {
        text: String,
        why: String,
    },
    BadConfidence(String),
    NothingInCommon {
        baseline: PathBuf,
        candidate: PathBuf,
    },
    NothingCompared {
        baseline: PathBuf,
        candidate: PathBuf,
        metrics: String,
    },
    CountedApart {
        metric: String,
        baseline: String,
        candidate: String,
    },
    BadMinPoints(usize),
    NoRuns {
        paths: Vec<PathBuf>,
    },
}

impl std::fmt::Display for CompareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use CompareError::*;
        match self {
            NotARun { path } => write!(
                f,
                "{} is not an rmatrix run directory (no results.csv); pass the directory \
                 `rmatrix run` wrote",
                path.display()
            ),
            Read { path, .. } => write!(f, "failed to read {}", path.display()),
            Refused(e) => e.fmt(f),
            NoResults { path } => write!(
                f,
                "{} has no successful iterations to compare",
                path.display()
            ),
            UnknownMetric { name, valid } => {
                write!(f, "unknown metric `{name}`; valid: {valid}, or `all`")
            }
            UnknownDimension { name, valid } => {
                write!(f, "unknown dimension `{name}` for --ignore; valid: {valid}")
            }
            BadThreshold(text) => write!(
                f,
                "bad threshold `{text}`: expected a percentage such as `5%` or `2.5`"
            ),
            BadRunNoise(text) => write!(
                f,
                "bad run noise `{text}`: expected a coefficient of variation of run means in \
                 percent from 0 to below 100, such as `3%` (`0`: iterations only)"
            ),
            BadTarget { text, why } => write!(f, "bad --target `{text}`: {why}"),
            BadConfidence(text) => write!(
                f,
                "bad confidence level `{text}`: expected a level between 50% and 100%, such as \
                 `95%` (or --alpha between 0 and 0.5, such as 0.01)"
            ),
            NothingInCommon {
                baseline,
                candidate,
            } => write!(
                f,
                "{} and {} have no cell in common; check that they ran the same matrix \
                 (or use --ignore DIM to join across a renamed dimension)",
                baseline.display(),
                candidate.display()
            ),
            NothingCompared {
                baseline,
                candidate,
                metrics,
            } => write!(
                f,
                "nothing was compared between {} and {}: no cell they share has a value of \
                 {metrics} on both sides",
                baseline.display(),
                candidate.display()
            ),
            CountedApart {
                metric,
                baseline,
                candidate,
            } => write!(
                f,
                "{metric} is not compared: the baseline's instructions were counted by `{}`, \
                 the candidate's by `{}` (callgrind leaves timer work out, the CPU's counter \
                 does not); run both with the same `counted:`",
                crate::escape::terminal(baseline),
                crate::escape::terminal(candidate)
            ),
            BadMinPoints(n) => write!(
                f,
                "bad --min-points {n}: a segment of a history needs at least 2 runs (for a \
                 variance)"
            ),
            NoRuns { paths } => write!(
                f,
                "no run directories found in {}",
                (paths.iter())
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

impl From<crate::results::check::Refused> for CompareError {
    fn from(e: crate::results::check::Refused) -> Self {
        CompareError::Refused(e)
    }
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

    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CompareError::Read { source, .. } => Some(&**source),
            CompareError::Refused(e) => crate::error::Kinded::source(e),
            _ => None,
        }
    }
}

crate::error::kinded!(CompareError);
