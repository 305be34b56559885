//! How a command can end: the kinds of failure rmatrix tells apart ([`ErrorKind`]) and the
//! outcomes of a command that ran to its end ([`Outcome`]). `commands::exit` gives each its
//! exit code, in one exhaustive match.
//!
//! An error type whose kind says more than [`ErrorKind::Failed`] implements [`Kinded`] and
//! not `std::error::Error`: it enters an error chain only wrapped in a [`KindedError`]
//! (`kinded!` gives it the `From` impls that `?` uses), so the compiler refuses any way in
//! that would drop its kind (`.context()` on it, boxing it as a source). [`error_kind`]
//! walks a chain and takes the first `KindedError` whose kind says more than `Failed`; any
//! other error is `Failed`.

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

/// An error that knows its kind of failure. It is no `std::error::Error` itself: it enters
/// an error chain only as a [`KindedError`] (its `From` impls, made by `kinded!`), the one
/// type the chain walk looks for, so a kind cannot be lost on the way.
pub trait Kinded: std::fmt::Display + std::fmt::Debug + Send + Sync + 'static {
    fn kind(&self) -> ErrorKind;

    /// The error below it, as `std::error::Error::source`.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        None
    }
}

/// A [`Kinded`] error in an error chain: shown and chained as the error it carries.
pub struct KindedError(Box<dyn Kinded>);

impl KindedError {
    pub fn new(e: impl Kinded) -> Self {
        KindedError(Box::new(e))
    }

    pub fn kind(&self) -> ErrorKind {
        self.0.kind()
    }
}

impl std::fmt::Display for KindedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::fmt::Debug for KindedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for KindedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// The way a [`Kinded`] type goes into an error chain: `?` and `.into()` wrap it in a
/// [`KindedError`].
macro_rules! kinded {
    ($t:ty) => {
        impl From<$t> for $crate::error::KindedError {
            fn from(e: $t) -> Self {
                $crate::error::KindedError::new(e)
            }
        }

        impl From<$t> for anyhow::Error {
            fn from(e: $t) -> Self {
                anyhow::Error::new($crate::error::KindedError::new(e))
            }
        }
    };
}
pub(crate) use kinded;

/// The kind of an error chain: its first cause that says more than "failed". Only a
/// [`KindedError`] says more: every [`Kinded`] error enters a chain as one.
pub fn error_kind(err: &anyhow::Error) -> ErrorKind {
    err.chain()
        .filter_map(|cause| cause.downcast_ref::<KindedError>())
        .map(KindedError::kind)
        .find(|k| *k != ErrorKind::Failed)
        .unwrap_or(ErrorKind::Failed)
}

/// Bad usage that is not a matrix error (exit code 2).
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Kinded for UsageError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::BadInput
    }
}

kinded!(UsageError);
