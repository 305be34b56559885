//! The kinds of failure rmatrix tells apart, and the one place they become exit codes.
//!
//! Every error type of the crate implements [`Kinded`]; `crate::exit_code` walks an error's
//! chain and takes the first cause whose kind says more than [`ErrorKind::Failed`]. A new
//! kind gets its exit code in [`ErrorKind::exit_code`] (an exhaustive match); a new error
//! type states its kind, and one whose kind can be other than `Failed` is listed in
//! `lib.rs`'s `kinded_errors!` (a unit test there reads `src/` to check both).

/// What went wrong, as far as the exit code is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Some cells failed, or an error with nothing more specific to say (a server, a
    /// connection, a file that could not be written).
    Failed,
    /// A bad matrix, flag or stored run: fix the input and try again.
    BadInput,
    /// No Docker engine answered at an address rmatrix could use.
    NoDocker,
    /// `rmatrix compare`: a metric regressed significantly beyond the threshold.
    Regression,
    /// `rmatrix compare`/`history --require-same-env`: the runs' environments differ.
    EnvDiffers,
    /// Stopped by Ctrl-C.
    Interrupted,
}

impl ErrorKind {
    /// The exit code of each kind, documented in the README and `rmatrix --help`.
    pub(crate) const fn exit_code(self) -> i32 {
        match self {
            ErrorKind::Failed => 1,
            ErrorKind::BadInput => 2,
            ErrorKind::NoDocker => 3,
            ErrorKind::Regression => 4,
            ErrorKind::EnvDiffers => 5,
            ErrorKind::Interrupted => 130,
        }
    }
}

/// Exit codes by name, each taken from [`ErrorKind::exit_code`].
pub mod exit {
    use super::ErrorKind;

    pub const OK: i32 = 0;
    pub const CELLS_FAILED: i32 = ErrorKind::Failed.exit_code();
    pub const BAD_INPUT: i32 = ErrorKind::BadInput.exit_code();
    pub const NO_DOCKER: i32 = ErrorKind::NoDocker.exit_code();
    /// `rmatrix compare`: a metric regressed significantly beyond the threshold.
    pub const REGRESSION: i32 = ErrorKind::Regression.exit_code();
    /// `rmatrix compare`/`history --require-same-env`: the runs' environments differ.
    pub const ENV_DIFFERS: i32 = ErrorKind::EnvDiffers.exit_code();
    pub const INTERRUPTED: i32 = ErrorKind::Interrupted.exit_code();
    /// `rmatrix bisect`: the bad end is no regression of the good end.
    pub const NOT_REPRODUCED: i32 = 6;
    /// `rmatrix bisect`: only skipped commits are left where the first bad one is.
    pub const ONLY_SKIPPED: i32 = 7;
    /// `rmatrix compare --fail-on-cannot-tell`: no regression, but some change's interval
    /// reaches past the threshold; `rmatrix bisect`: every change between the ends does.
    pub const CANNOT_TELL: i32 = 8;
}

/// An error type that knows its kind of failure.
pub trait Kinded: std::error::Error + Send + Sync + 'static {
    fn kind(&self) -> ErrorKind;
}

/// Bad usage that is not a matrix error (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl Kinded for UsageError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::BadInput
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_the_documented_ones() {
        assert_eq!(exit::OK, 0);
        assert_eq!(exit::CELLS_FAILED, 1);
        assert_eq!(exit::BAD_INPUT, 2);
        assert_eq!(exit::NO_DOCKER, 3);
        assert_eq!(exit::REGRESSION, 4);
        assert_eq!(exit::ENV_DIFFERS, 5);
        assert_eq!(exit::INTERRUPTED, 130);
    }

    #[test]
    fn no_two_kinds_share_a_code() {
        use ErrorKind::*;
        let kinds = [
            Failed,
            BadInput,
            NoDocker,
            Regression,
            EnvDiffers,
            Interrupted,
        ];
        let mut codes: Vec<i32> = kinds.iter().map(|k| k.exit_code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), kinds.len());
        assert!(!codes.contains(&exit::OK));
    }
}
