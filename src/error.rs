//! How a command can end: the kinds of failure rmatrix tells apart ([`ErrorKind`]) and the
//! outcomes of a command that ran to its end ([`Outcome`]). `commands::exit` gives each its
//! exit code, in one exhaustive match.
//!
//! Every error type of the crate implements [`Kinded`]; `crate::error_kind` walks an error's
//! chain and takes the first cause whose kind says more than [`ErrorKind::Failed`]. A new
//! error type states its kind, and one whose kind can be other than `Failed` is listed in
//! `lib.rs`'s `kinded_errors!` (a unit test there reads `src/` to check both).

/// What went wrong, as far as the exit code is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// An error with nothing more specific to say (a server, a connection, a file that
    /// could not be written).
    Failed,
    /// A bad matrix, flag or stored run: fix the input and try again.
    BadInput,
    /// No Docker engine answered at an address rmatrix could use.
    NoDocker,
    /// `rmatrix compare`/`history --require-same-env`: the runs' environments differ.
    EnvDiffers,
    /// Stopped by Ctrl-C.
    Interrupted,
}

/// How a command that ran to its end ended, as far as the exit code is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything asked for was done, and nothing regressed.
    Done,
    /// `rmatrix run`: some cells failed; `rmatrix ab`: no cell succeeded, or some cell has
    /// fewer than 2 rounds in which both sides did.
    CellsFailed,
    /// `rmatrix compare`/`ab`: a metric regressed significantly beyond the threshold.
    Regressed,
    /// `rmatrix bisect`: the bad end is no regression of the good end.
    NotReproduced,
    /// `rmatrix bisect`: only skipped commits are left where the first bad one is.
    OnlySkipped,
    /// `rmatrix compare --fail-on-cannot-tell`: no regression, but some change's interval
    /// reaches past the threshold; `ab`: some cell cannot tell; `bisect`: every change
    /// between the ends cannot tell.
    CannotTell,
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
